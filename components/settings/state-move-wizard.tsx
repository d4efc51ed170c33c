"use client";
// The move off Planton-managed storage, in four steps: choose a destination per provisioner (each
// with its access test), review the dry run, run it (live over `stateMoves.watch`), read the result.
// The page starts from the organization's current move, so a reload or a second admin sees the same one.
import { useState } from "react";
import Link from "next/link";
import { useMutation, useQuery } from "@tanstack/react-query";
import { CheckCircle2, Radio } from "lucide-react";
import { useTRPC } from "@/lib/trpc/client";
import { STATE_ROWS_SHOWN } from "@/lib/state-moves";
import { useOrg } from "@/components/shell/org-context";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { messageOf } from "@/components/ui/errors";
import { Card, EmptyState, ErrorState, LoadingState, PageHeader } from "@/components/ui/page";
import { RoleNote } from "./shared";
import { NOTHING_LEFT, useCurrentStateMove, type DryRun } from "./state-move-wizard-live";
import { DestinationsStep } from "./state-move-wizard-destinations";
import { ReviewStep } from "./state-move-wizard-review";
import { MoveProgress } from "./state-move-wizard-progress";

const STEPS = ["Choose destinations", "Review the dry run", "Move", "Result"] as const;

function Stepper({ at }: { at: number }) {
  return (
    <ol aria-label="Steps of the move" className="mb-6 grid grid-cols-2 gap-2 sm:grid-cols-4">
      {STEPS.map((label, i) => (
        <li
          key={label}
          aria-current={i === at ? "step" : undefined}
          className={cn(
            "flex items-center gap-2 rounded-md border px-3 py-2 text-sm",
            i === at ? "border-indigo-300 bg-indigo-50 font-medium text-indigo-800" : i < at ? "border-slate-200 bg-white text-slate-600" : "border-slate-200 bg-slate-50 text-slate-400",
          )}
        >
          <span className={cn("flex h-5 w-5 shrink-0 items-center justify-center rounded-full text-xs", i === at ? "bg-indigo-600 text-white" : i < at ? "bg-emerald-100 text-emerald-700" : "bg-slate-200 text-slate-500")}>
            {i < at ? "✓" : i + 1}
          </span>
          {label}
        </li>
      ))}
    </ol>
  );
}

export function StateMoveWizard() {
  const org = useOrg();
  const trpc = useTRPC();
  const admin = org.can("admin");
  const { current, stream, show } = useCurrentStateMove(org.slug);
  // The totals and the provisioners in use (a destination for each); the list of states is the Settings page's.
  const usage = useQuery(trpc.stateBackends.plantonManaged.queryOptions({ org: org.slug, limit: 0 }));
  const backends = useQuery(trpc.stateBackends.list.queryOptions({ org: org.slug }));
  // The wizard's own steps (1 and 2) are this browser's; steps 3 and 4 are the organization's move.
  const [phase, setPhase] = useState<"choose" | "review" | null>(null);
  const [to, setTo] = useState<Record<string, string>>({});
  const [dryRun, setDryRun] = useState<DryRun | null>(null);
  const [startError, setStartError] = useState<string | null>(null);

  const runDry = useMutation(trpc.stateMoves.dryRun.mutationOptions());
  const start = useMutation(
    trpc.stateMoves.start.mutationOptions({
      onSuccess: (move) => {
        show(move);
        setPhase(null);
        setDryRun(null);
      },
      onError: (err) => setStartError(messageOf(err)),
    }),
  );

  const header = (
    <PageHeader
      breadcrumb={
        <Link href={`/o/${org.slug}/settings/state-backends`} className="hover:text-slate-700 hover:underline">
          State Backends
        </Link>
      }
      title="Move off Planton-managed storage"
      description="Copy every state kept on Planton-managed storage to your own backends: each component's jobs wait while its state moves, every copy is read back and compared before the component switches, and the old copy is kept for rollback."
      actions={
        current.data?.move?.status === "running" && (
          <span className="flex items-center gap-1.5 text-xs text-slate-500" data-testid="move-stream">
            <Radio className={cn("h-3.5 w-3.5", stream === "live" ? "text-emerald-600" : "text-amber-500")} />
            {stream === "live" ? "live" : stream === "reconnecting" ? "reconnecting…" : stream === "ended" ? "stream ended" : "connecting…"}
          </span>
        )
      }
    />
  );

  if (current.isPending || usage.isPending || backends.isPending) {
    return (
      <>
        {header}
        <Card>
          <LoadingState label="Loading the move…" />
        </Card>
      </>
    );
  }
  const failedQuery = [current, usage, backends].find((q) => q.error || q.data === undefined);
  if (failedQuery || !current.data || !usage.data || !backends.data) {
    return (
      <>
        {header}
        <Card>
          <ErrorState error={failedQuery?.error} retry={() => void Promise.all([current.refetch(), usage.refetch(), backends.refetch()])} />
        </Card>
      </>
    );
  }

  const { move, remainingOnPlanton } = current.data;
  const running = move?.status === "running";
  // While the start is on its way the review stays (its button says so); the answer shows the move.
  const inWizard = phase !== null;
  // A move someone else started while this admin is still choosing or reviewing: say so, keep their work.
  const view: "choose" | "review" | "progress" | "result" | "empty" =
    inWizard && phase === "review" && dryRun ? "review" : inWizard ? "choose" : running ? "progress" : move ? "result" : remainingOnPlanton === 0 ? "empty" : "choose";
  const stepAt = { choose: 0, review: 1, progress: 2, result: 3, empty: 3 }[view];

  // Only provisioners that still have states here: a choice left from an earlier move would be refused.
  const inUse = new Set<string>(usage.data.byProvisioner.map((p) => p.provisioner));
  const chosen = Object.fromEntries(Object.entries(to).filter(([p]) => inUse.has(p)));

  async function review() {
    setStartError(null);
    try {
      // The review draws the first STATE_ROWS_SHOWN; its totals cover every state.
      setDryRun(await runDry.mutateAsync({ org: org.slug, to: chosen, limit: STATE_ROWS_SHOWN }));
      setPhase("review");
    } catch {
      // Shown from runDry.error under the destinations.
    }
  }

  return (
    <>
      {header}
      <RoleNote need="admin" what="Moving states, retrying and rolling back" />
      <Stepper at={stepAt} />
      {inWizard && running && !start.isPending && (
        <div role="status" className="mb-4 flex flex-wrap items-center justify-between gap-3 rounded-md bg-amber-50 px-4 py-3 text-sm text-amber-900 ring-1 ring-amber-200">
          <span>
            A move started by {move.startedBy} is running ({move.progress.done + move.progress.failed} of {move.progress.total} states). A second move cannot start until it ends.
          </span>
          <Button variant="secondary" size="sm" onClick={() => setPhase(null)}>
            Show the running move
          </Button>
        </div>
      )}
      {view === "empty" && (
        <Card>
          <EmptyState icon={<CheckCircle2 className="h-8 w-8 text-emerald-600" />} title={NOTHING_LEFT} description="Every component's state lives in a backend of your own. New components keep theirs in the default backend of their provisioner." />
        </Card>
      )}
      {view === "choose" && (
        <DestinationsStep
          usage={usage.data}
          backends={backends.data}
          to={to}
          setTo={setTo}
          admin={admin}
          busy={runDry.isPending}
          error={runDry.error ? messageOf(runDry.error) : null}
          onReview={review}
          onCancel={move && phase !== null ? () => setPhase(null) : undefined}
        />
      )}
      {view === "review" && dryRun && (
        <ReviewStep
          dryRun={dryRun}
          admin={admin}
          busy={start.isPending}
          error={startError}
          onBack={() => (setStartError(null), setPhase("choose"))}
          onStart={() => (setStartError(null), start.mutate({ org: org.slug, to: chosen }))}
        />
      )}
      {(view === "progress" || view === "result") && move && (
        <MoveProgress move={move} remainingOnPlanton={remainingOnPlanton} admin={admin} show={show} onNewMove={(remainingOnPlanton ?? 0) > 0 && !running ? () => setPhase("choose") : undefined} />
      )}
    </>
  );
}
