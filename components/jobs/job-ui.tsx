// Small pieces every jobs page shares: status and result badges, the step indicator, operation
// names and descriptions, resource action symbols, and the live clock for durations.
"use client";
import { useEffect, useState } from "react";
import { Ban, CheckCircle2, Circle, CircleDashed, Hand, Loader2, MinusCircle, XCircle } from "lucide-react";
import { glyphOf, type ResourceAction } from "@/lib/display";
import type { JobModule } from "@/lib/preflight";
import type { JobOperationKind, JobResult, JobStatus } from "@/lib/runner-protocol";
import { Badge, type BadgeTone } from "@/components/ui/badge";
import { cn } from "@/components/ui/cn";
import { duration } from "@/components/ui/time";

export const OPERATION_INFO: Record<JobOperationKind, { label: string; description: string }> = {
  preview: { label: "Preview", description: "Plan the changes and show them; nothing is changed." },
  update: { label: "Update", description: "Preview, then apply the changes to make the infrastructure match the spec." },
  refresh: { label: "Refresh", description: "Read the real resources into state to catch drift; nothing is changed." },
  destroy_preview: { label: "Destroy preview", description: "Show what a destroy would remove; nothing is removed." },
  destroy: { label: "Destroy", description: "Preview the destroy, then remove every resource of this component." },
  import: { label: "Import", description: "Write an existing resource into state; the resource itself is not touched." },
};
export const OPERATION_ORDER: JobOperationKind[] = ["preview", "update", "refresh", "destroy_preview", "destroy", "import"];
export const operationLabel = (op: string) => OPERATION_INFO[op as JobOperationKind]?.label ?? op;

export const STATUS_LABEL: Record<JobStatus, string> = { queued: "Queued", running: "Running", awaiting_approval: "Awaiting approval", completed: "Completed" };
const STATUS_TONE: Record<JobStatus, BadgeTone> = { queued: "gray", running: "blue", awaiting_approval: "yellow", completed: "gray" };
const RESULT_TONE: Record<JobResult, BadgeTone> = { succeeded: "green", failed: "red", cancelled: "gray", skipped: "gray", tbd: "gray" };

export function StatusBadge({ status }: { status: JobStatus }) {
  return (
    <Badge tone={STATUS_TONE[status]}>
      {status === "running" && <Loader2 className="h-3 w-3 animate-spin" aria-hidden />}
      {status === "awaiting_approval" && <Hand className="h-3 w-3" aria-hidden />}
      {STATUS_LABEL[status]}
    </Badge>
  );
}

export function ResultBadge({ result }: { result: JobResult }) {
  if (result === "tbd") return <span className="text-xs text-slate-400">—</span>;
  return <Badge tone={RESULT_TONE[result]}>{result[0].toUpperCase() + result.slice(1)}</Badge>;
}

/** The one word a step's two axes come to: queued, running, succeeded, failed, skipped, cancelled, awaiting approval. */
export function stepState(step: { status: string; result: string }, awaitingAfter: boolean): string {
  if (step.status === "completed") return step.result === "tbd" ? "completed" : step.result;
  if (step.status === "queued" && awaitingAfter) return "awaiting approval";
  return step.status;
}

export function StepIndicator({ state, className }: { state: string; className?: string }) {
  const c = cn("h-5 w-5 shrink-0", className);
  switch (state) {
    case "running":
      return <Loader2 className={cn(c, "animate-spin text-sky-600")} aria-hidden />;
    case "succeeded":
      return <CheckCircle2 className={cn(c, "text-emerald-600")} aria-hidden />;
    case "failed":
      return <XCircle className={cn(c, "text-rose-600")} aria-hidden />;
    case "skipped":
      return <MinusCircle className={cn(c, "text-slate-400")} aria-hidden />;
    case "cancelled":
      return <Ban className={cn(c, "text-slate-500")} aria-hidden />;
    case "awaiting approval":
      return <Hand className={cn(c, "text-amber-600")} aria-hidden />;
    case "queued":
      return <CircleDashed className={cn(c, "text-slate-400")} aria-hidden />;
    default:
      return <Circle className={cn(c, "text-slate-400")} aria-hidden />;
  }
}

const ACTION_CLASS: Record<ResourceAction, string> = {
  create: "text-emerald-700",
  update: "text-amber-700",
  delete: "text-rose-700",
  replace: "text-fuchsia-700",
  import: "text-sky-700",
  move: "text-sky-700",
  forget: "text-slate-600",
  read: "text-slate-500",
  noop: "text-slate-400",
};

/** A resource action's glyph (shared with the CLI) and its colour in the console. */
export const actionLook = (action: string): { symbol: string; className: string } => ({ symbol: glyphOf(action), className: ACTION_CLASS[action as ResourceAction] ?? "" });

/** Re-renders every second while `live`, so running durations tick. */
export function useNow(live: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!live) return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [live]);
  return now;
}

export function elapsed(start: Date | string | null | undefined, end: Date | string | null | undefined, now: number): string | null {
  if (!start) return null;
  const from = new Date(start).getTime();
  const to = end ? new Date(end).getTime() : now;
  return duration(Math.max(0, to - from));
}

/** The module, its engine and its registry, from the job's record (or, for older jobs, its preflight report: `static-site@1.0.0 (builtin, platform registry)`). */
export function moduleOf(job: { module?: JobModule | null; preflight: unknown }): { module: string; engine: string; registry: JobModule["registry"] | null } | null {
  if (job.module) return { module: `${job.module.name}@${job.module.version}`, engine: job.module.provisioner, registry: job.module.registry };
  // Jobs made before the record kept its module: what their preflight resolved.
  const checks = (job.preflight as { checks?: { essential: string; resolvedTo: string | null }[] } | null)?.checks;
  const m = checks?.find((c) => c.essential === "module")?.resolvedTo?.match(/^(\S+) \(([^,)]+)/);
  return m ? { module: m[1], engine: m[2], registry: null } : null;
}
