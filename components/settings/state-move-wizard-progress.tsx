"use client";
// Steps 3 and 4: the organization's move as it runs (a progress bar and each component's step, as
// the watch subscription reports them) and its result: failures explained, retried, and per-component rollback.
import { useMutation } from "@tanstack/react-query";
import { AlertTriangle, CheckCircle2, RotateCcw, Undo2 } from "lucide-react";
import { toast } from "sonner";
import { formatBytes } from "@/lib/display";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { Badge, envTone, type BadgeTone } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { messageOf } from "@/components/ui/errors";
import { Card } from "@/components/ui/page";
import { Spinner } from "@/components/ui/spinner";
import { Table, Tbody, Td, Th } from "@/components/ui/table";
import { relativeTime } from "@/components/ui/time";
import { useDeleteDialog } from "./delete-dialog";
import { KeyCell } from "./state-move-wizard-review";
import { MOVE_ITEMS_SHOWN, MOVE_STEPS_IN_FLIGHT } from "@/lib/state-moves";
import { NOTHING_LEFT, type StateMove, type StateMoveItem } from "./state-move-wizard-live";

/** Each step a component's move goes through, as the table says it. */
const STEP_SHOWN: Record<StateMoveItem["step"], { label: string; tone: BadgeTone }> = {
  pending: { label: "waiting", tone: "gray" },
  held: { label: "jobs held", tone: "blue" },
  locked: { label: "state locked", tone: "blue" },
  copied: { label: "copied, checked", tone: "indigo" },
  switched: { label: "switched", tone: "indigo" },
  done: { label: "moved", tone: "green" },
  failed: { label: "failed", tone: "red" },
  rolled_back: { label: "rolled back", tone: "yellow" },
};

export function MoveProgress({
  move,
  remainingOnPlanton,
  admin,
  show,
  onNewMove,
}: {
  move: StateMove;
  remainingOnPlanton: number | null;
  admin: boolean;
  show: (move: StateMove) => void;
  onNewMove?: () => void;
}) {
  const org = useOrg();
  const trpc = useTRPC();
  const running = move.status === "running";
  const { total, done, failed, rolledBack, inFlight } = move.progress;
  const settled = done + failed + rolledBack;
  const percent = total ? Math.round((settled / total) * 100) : 100;

  const retry = useMutation(trpc.stateMoves.retry.mutationOptions({ onSuccess: (m) => show(m), onError: (err) => toast.error(messageOf(err)) }));
  const rollback = useDeleteDialog<StateMoveItem, { org: string; id: string; itemId: string }>({
    title: (i) => `Roll back ${i.component} (${i.environment})?`,
    description: (i) =>
      `Its state goes back to ${i.from}, the copy it was moved from, and its jobs use that backend again; anything a job wrote to ${i.to} since the move is copied back first. The copy on ${i.to} stays where it is.`,
    confirmLabel: "Roll back",
    mutation: useMutation(trpc.stateMoves.rollback.mutationOptions({ onSuccess: (m) => show(m) })),
    variables: (i) => ({ org: org.slug, id: move.id, itemId: i.id ?? "" }),
    refresh: [trpc.stateBackends.plantonManaged.queryKey({ org: org.slug })],
    done: (i) => `Rolled back ${i.component}: its state is on ${i.from} again`,
  });
  // A live view carries at most MOVE_ITEMS_SHOWN items, failed first, then in flight (the slice only guards the table).
  const rows = move.items.slice(0, MOVE_ITEMS_SHOWN);
  const destinations = Object.entries(move.destinations)
    .map(([p, b]) => `${p} → ${b}`)
    .join(", ");

  return (
    <>
      {!running && <MoveResult move={move} remainingOnPlanton={remainingOnPlanton} admin={admin} retry={() => retry.mutate({ org: org.slug, id: move.id })} retrying={retry.isPending} onNewMove={onNewMove} />}
      <Card
        flush
        title={running ? "3. Moving" : "The move"}
        description={`Started by ${move.startedBy} ${relativeTime(move.createdAt)} · ${destinations}`}
        actions={
          <Badge tone={running ? "blue" : move.status === "succeeded" ? "green" : "red"}>
            {running && <Spinner className="h-3 w-3" />}
            {move.status}
          </Badge>
        }
      >
        <div className="space-y-2 px-5 py-4">
          <div className="flex justify-between text-sm text-slate-700">
            <span data-testid="move-counts">
              {done} of {total} moved{failed ? `, ${failed} failed` : ""}
              {rolledBack ? `, ${rolledBack} rolled back` : ""}
              {running && inFlight ? <span className="text-slate-500"> · {inFlight} in progress</span> : null}
            </span>
            <span className="tabular-nums">{percent}%</span>
          </div>
          <div
            role="progressbar"
            aria-label="States moved"
            aria-valuemin={0}
            aria-valuemax={total}
            aria-valuenow={settled}
            aria-valuetext={`${done} of ${total} moved${failed ? `, ${failed} failed` : ""}`}
            data-testid="move-progress"
            className="flex h-2.5 overflow-hidden rounded-full bg-slate-100"
          >
            <div className="bg-emerald-500 transition-[width] duration-300" style={{ width: `${total ? (done / total) * 100 : 0}%` }} />
            <div className="bg-rose-500 transition-[width] duration-300" style={{ width: `${total ? (failed / total) * 100 : 0}%` }} />
            <div className="bg-amber-400 transition-[width] duration-300" style={{ width: `${total ? (rolledBack / total) * 100 : 0}%` }} />
          </div>
        </div>
        <Table label="Components in the move">
          <thead className="bg-slate-50">
            <tr>
              <Th>Component</Th>
              <Th>Environment</Th>
              <Th>Provisioner</Th>
              <Th>To</Th>
              <Th className="text-right">Size</Th>
              <Th>Status</Th>
              {admin && !running && <Th className="text-right">Actions</Th>}
            </tr>
          </thead>
          <Tbody>
            {rows.map((i) => {
              const step = STEP_SHOWN[i.step];
              return (
                <tr key={i.id ?? i.componentId} data-testid="move-item" data-step={i.step} className="align-top">
                  <Td className="font-medium text-slate-900">{i.component}</Td>
                  <Td>
                    <Badge tone={envTone(i.environment)}>{i.environment}</Badge>
                  </Td>
                  <Td>{i.provisioner}</Td>
                  <KeyCell backend={i.to} stateKey={i.toKey} />
                  <Td className="text-right tabular-nums">{formatBytes(i.size)}</Td>
                  <Td className="max-w-md whitespace-normal!">
                    <Badge tone={step.tone}>
                      {running && (MOVE_STEPS_IN_FLIGHT as readonly string[]).includes(i.step) && <Spinner className="h-3 w-3" />}
                      {step.label}
                    </Badge>
                    {i.error && <p className="mt-1 text-xs text-rose-700">{i.error}</p>}
                  </Td>
                  {admin && !running && (
                    <Td className="text-right">
                      {i.canRollBack && i.id && (
                        <Button variant="ghost" size="sm" onClick={() => rollback.ask(i)} aria-label={`Roll back ${i.component} (${i.environment})`}>
                          <Undo2 className="h-3.5 w-3.5" /> Roll back
                        </Button>
                      )}
                    </Td>
                  )}
                </tr>
              );
            })}
          </Tbody>
        </Table>
        {rows.length < total && (
          <p className="border-t border-slate-100 px-5 py-3 text-xs text-slate-500" data-testid="move-items-shown">
            Showing {rows.length} of {total} components{failed ? ", failed ones first" : ""}{running ? ", then those in progress" : ""}; the counts above cover every one.
          </p>
        )}
      </Card>
      {rollback.dialog}
    </>
  );
}

function MoveResult({ move, remainingOnPlanton, admin, retry, retrying, onNewMove }: { move: StateMove; remainingOnPlanton: number | null; admin: boolean; retry: () => void; retrying: boolean; onNewMove?: () => void }) {
  const { total, done, failed, rolledBack } = move.progress;
  const back = rolledBack ? `; ${rolledBack} rolled back to Planton-managed storage` : "";
  return (
    <div className="mb-6 space-y-3" data-testid="move-result">
      {failed > 0 ? (
        <div role="alert" className="rounded-md bg-rose-50 p-4 text-sm text-rose-900 ring-1 ring-rose-200">
          <p className="flex items-center gap-2 font-medium">
            <AlertTriangle className="h-4 w-4" /> {failed} of {total} states did not move; {done} did{back}.
          </p>
          <p className="mt-1">
            Each failed component kept its state on Planton-managed storage and its jobs run as before; the table below says why each one failed. Fix the cause, then retry them: the states that moved are not touched again.
          </p>
          {admin && (
            <Button className="mt-3" onClick={retry} busy={retrying}>
              <RotateCcw className="h-4 w-4" /> Retry failed
            </Button>
          )}
        </div>
      ) : (
        <p role="status" className="flex items-center gap-2 rounded-md bg-emerald-50 p-4 text-sm font-medium text-emerald-900 ring-1 ring-emerald-200">
          <CheckCircle2 className="h-4 w-4" /> {done} of {total} states moved{move.finishedAt ? ` ${relativeTime(move.finishedAt)}` : ""}{back}
          {done > 0 ? "; every copy was read back and its checksum compared before its component switched." : "."}
        </p>
      )}
      {remainingOnPlanton === null ? null : remainingOnPlanton === 0 ? (
        <p className="flex items-center gap-2 rounded-md bg-white p-4 text-sm font-semibold text-slate-900 ring-1 ring-slate-200" data-testid="nothing-left">
          <CheckCircle2 className="h-4 w-4 text-emerald-600" /> {NOTHING_LEFT}
        </p>
      ) : (
        <div className="flex flex-wrap items-center justify-between gap-3 rounded-md bg-white p-4 text-sm text-slate-700 ring-1 ring-slate-200">
          <span>
            {remainingOnPlanton} state{remainingOnPlanton === 1 ? " is" : "s are"} still on Planton-managed storage.
          </span>
          {admin && onNewMove && (
            <Button variant="secondary" onClick={onNewMove}>
              Move the rest
            </Button>
          )}
        </div>
      )}
    </div>
  );
}
