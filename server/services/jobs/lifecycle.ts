// The Infra Job lifecycle: which steps a job gets, and every legal move of a job's or a step's
// status and result. Pure: no I/O. Every writer of job or step status goes through it.
import type { JobOperationKind, JobResult, JobStatus, StepName } from "@/lib/runner-protocol";
import { OPERATION_STEPS } from "@/lib/runner-protocol";
import type { JobActions } from "@/lib/job-actions";

import { roleAllows, type Role } from "@/lib/roles";
import type { PolicyToggles } from "@/lib/flow-control";

export interface Phase {
  status: JobStatus;
  result: JobResult;
}

export class IllegalTransitionError extends Error {
  constructor(
    readonly subject: "job" | "step",
    readonly from: Phase,
    readonly event: string,
  ) {
    super(`A ${subject} that is ${from.status}/${from.result} cannot ${event}.`);
    this.name = "IllegalTransitionError";
  }
}

export interface PlannedStep extends Phase {
  step: StepName;
  ordinal: number;
  reason: string | null;
  /** The job pauses for approval after this step succeeds. */
  pauseAfter: boolean;
}

export interface JobPlan {
  steps: PlannedStep[];
  /** queued, or awaiting_approval when manual_start holds it before anything runs. */
  initial: Phase;
}

/** Steps that change infrastructure: the ones an approval gate stands before. */
export const CHANGING_STEPS: readonly StepName[] = ["apply", "destroy"];

const changesInfrastructure = (operation: JobOperationKind) => OPERATION_STEPS[operation].some((s) => CHANGING_STEPS.includes(s));

/**
 * Whether an apply or destroy step may start only after an approval bound to a plan checksum.
 * The one rule every path (claim, step start, resume) asks: pause_before_apply on an update or destroy.
 */
export const approvalGatesChanges = (operation: JobOperationKind, policy: PolicyToggles) => changesInfrastructure(operation) && policy.pauseBeforeApply;

export const PREVIEW_KEPT_FOR_APPROVAL = "kept although preview_before_apply is off: pause_before_apply approves a plan, so a preview makes one";

/**
 * The job's steps for an operation, edited by the resolved flow-control policy.
 * pause_before_apply forces the preview: an approval is bound to the checksum of the plan it
 * approves, so there is never an apply behind a gate without a plan in front of it.
 */
export function planJob(operation: JobOperationKind, policy: PolicyToggles): JobPlan {
  let names = OPERATION_STEPS[operation];
  const changes = changesInfrastructure(operation);
  const gated = approvalGatesChanges(operation, policy);
  if (changes && !policy.previewBeforeApply && !gated) names = names.filter((s) => s !== "preview");
  const steps = names.map((step, ordinal): PlannedStep => {
    const skipped = step === "refresh" && policy.skipRefresh;
    const kept = step === "preview" && gated && !policy.previewBeforeApply;
    return {
      step,
      ordinal,
      status: skipped ? "completed" : "queued",
      result: skipped ? "skipped" : "tbd",
      reason: skipped ? "skip_refresh is on in the flow-control policy" : kept ? PREVIEW_KEPT_FOR_APPROVAL : null,
      pauseAfter: step === "preview" && gated,
    };
  });
  return { steps, initial: { status: policy.manualStart ? "awaiting_approval" : "queued", result: "tbd" } };
}

/** A job whose preflight failed: ends at once, its steps skipped, nothing runs. */
export function planFailedPreflight(operation: JobOperationKind, policy: PolicyToggles): JobPlan {
  const { steps } = planJob(operation, policy);
  return {
    initial: { status: "completed", result: "failed" },
    steps: steps.map((s) => ({ ...s, status: "completed", result: "skipped", reason: "preflight failed; nothing ran" })),
  };
}

// ── Job transitions ────────────────────────────────────────────────────────────────────────────
export const JOB_EVENTS = ["claim", "requeue", "pause", "approve", "succeed", "fail", "cancel", "finish_cancelled"] as const;
export type JobEvent = (typeof JOB_EVENTS)[number];

const key = (p: Phase) => `${p.status}/${p.result}`;

/** from → event → to. Anything not listed is illegal. */
const JOB_TABLE: Record<string, Partial<Record<JobEvent, Phase>>> = {
  "queued/tbd": {
    claim: { status: "running", result: "tbd" },
    cancel: { status: "completed", result: "cancelled" },
  },
  "running/tbd": {
    // The runner was lost before it started anything: nothing ran, so the job waits for another.
    requeue: { status: "queued", result: "tbd" },
    pause: { status: "awaiting_approval", result: "tbd" },
    succeed: { status: "completed", result: "succeeded" },
    fail: { status: "completed", result: "failed" },
    // A running job is only flagged by cancel; it ends cancelled when its in-flight step is done.
    finish_cancelled: { status: "completed", result: "cancelled" },
  },
  "awaiting_approval/tbd": {
    approve: { status: "queued", result: "tbd" },
    cancel: { status: "completed", result: "cancelled" },
  },
};

export function jobTransition(from: Phase, event: JobEvent): Phase {
  const to = JOB_TABLE[key(from)]?.[event];
  if (!to) throw new IllegalTransitionError("job", from, event);
  return to;
}

export const canJob = (from: Phase, event: JobEvent) => !!JOB_TABLE[key(from)]?.[event];

// ── Step transitions ───────────────────────────────────────────────────────────────────────────
export const STEP_EVENTS = ["start", "succeed", "fail", "skip", "cancel"] as const;
export type StepEvent = (typeof STEP_EVENTS)[number];

const STEP_TABLE: Record<string, Partial<Record<StepEvent, Phase>>> = {
  "queued/tbd": {
    start: { status: "running", result: "tbd" },
    skip: { status: "completed", result: "skipped" },
    cancel: { status: "completed", result: "cancelled" },
  },
  // An in-flight step always finishes: cancel never interrupts it.
  "running/tbd": {
    succeed: { status: "completed", result: "succeeded" },
    fail: { status: "completed", result: "failed" },
  },
};

export function stepTransition(from: Phase, event: StepEvent): Phase {
  const to = STEP_TABLE[key(from)]?.[event];
  if (!to) throw new IllegalTransitionError("step", from, event);
  return to;
}

/** Every status/result pair, for exhaustive tests and validation. */
export const ALL_PHASES: Phase[] = (["queued", "running", "awaiting_approval", "completed"] as const).flatMap((status) =>
  (["tbd", "succeeded", "failed", "cancelled", "skipped"] as const).map((result) => ({ status, result })),
);

// ── What happens after a step ends ─────────────────────────────────────────────────────────────
export type AfterStep =
  | { job: "continue" }
  | { job: "pause" }
  | { job: "succeed"; cancelTooLate?: true }
  | { job: "fail"; rest: "skip" }
  | { job: "finish_cancelled"; rest: "cancel" };

/**
 * Decides the job's next move once a step has finished, from the step's result and whether cancel
 * was asked for. A cancel that arrives while the last step runs has nothing left to stop: the job
 * ends as that step did, and its record says the cancel came too late.
 */
export function afterStep(opts: { result: "succeeded" | "failed"; cancelRequested: boolean; pauseAfter: boolean; remaining: number }): AfterStep {
  if (opts.cancelRequested && opts.remaining === 0) return opts.result === "failed" ? { job: "fail", rest: "skip" } : { job: "succeed", cancelTooLate: true };
  if (opts.cancelRequested) return { job: "finish_cancelled", rest: "cancel" };
  if (opts.result === "failed") return { job: "fail", rest: "skip" };
  if (opts.remaining === 0) return { job: "succeed" };
  if (opts.pauseAfter) return { job: "pause" };
  return { job: "continue" };
}


// ── What a caller may do with a job now ────────────────────────────────────────────────────────
export const ACTION_ROLE: Role = "engineer";

interface ActionSubject extends Phase {
  id: string;
  startedAt: Date | string | null;
  cancelRequestedAt: Date | string | null;
}

const isState = (j: ActionSubject) => `${j.status}${j.status === "completed" ? ` (${j.result})` : ""}`;

/** The job's actions for a caller with `role`: the one answer the job page, the jobs list, the CLI and the services share. */
export function jobActions(job: ActionSubject, role: Role | null): JobActions {
  const roleWhy = role && roleAllows(role, ACTION_ROLE) ? null : `steering a job needs the ${ACTION_ROLE} role`;
  const gate = (allowedByState: boolean, stateWhy: string) => (!allowedByState ? { allowed: false, why: stateWhy } : roleWhy ? { allowed: false, why: roleWhy } : { allowed: true, why: null });
  const cancellable = canJob(job, "cancel") || (job.status === "running" && !job.cancelRequestedAt);
  const cancelWhy =
    job.status === "completed" ? `job ${job.id} already completed (${job.result}). To undo its changes, run a new job` : `a cancel of job ${job.id} was already asked for; its running step finishes first`;
  return {
    cancel: { ...gate(cancellable, cancelWhy), when: !cancellable ? null : job.status === "running" ? "after_step" : "now" },
    approve: {
      ...gate(canJob(job, "approve"), `job ${job.id} is ${isState(job)}, not waiting for approval`),
      gate: canJob(job, "approve") ? (job.startedAt ? "plan" : "manual_start") : null,
    },
    rerun: gate(job.status === "completed", `job ${job.id} is still ${job.status}. Wait for it to complete, or cancel it, then re-run`),
  };
}
