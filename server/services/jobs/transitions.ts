// The database side of the lifecycle: every write of a job's or step's status/result goes through
// these, which ask lifecycle.ts whether the move is legal, stamp its time and record an event.
import { and, asc, eq, sql } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { infraJobs, jobOperations, stateObjects } from "@/db/schema";
import type { StepName } from "@/lib/runner-protocol";
import { appendEvents } from "./events";
import { REASONS } from "@/lib/job-reasons";
import { onComponentJobCompleted } from "../components/job-outcome";
import { compactStateJournal } from "../state/state-journal";
import { afterStep, jobTransition, stepTransition, type AfterStep, type JobEvent, type Phase, type StepEvent } from "./lifecycle";

export type JobRow = typeof infraJobs.$inferSelect;
export type StepRow = typeof jobOperations.$inferSelect;

export const JOB_QUEUED_CHANNEL = "job_queued";

const phase = (r: Phase): Phase => ({ status: r.status, result: r.result });

/**
 * The job, row-locked for the rest of the transaction: FOR UPDATE by every path that ends, requeues or
 * replaces an attempt; `key share` by writes that only need the job not to end meanwhile (they let event
 * uploads, which take `no key update`, go on, and the FOR UPDATE paths wait for them).
 */
export async function lockJob(tx: Queryable, jobId: string, strength: "update" | "key share" = "update"): Promise<JobRow | undefined> {
  const [job] = await tx.select().from(infraJobs).where(eq(infraJobs.id, jobId)).for(strength);
  return job;
}

export async function stepsOf(tx: Queryable, jobId: string): Promise<StepRow[]> {
  return tx.select().from(jobOperations).where(eq(jobOperations.jobId, jobId)).orderBy(asc(jobOperations.ordinal));
}

/** Moves a job through one lifecycle event; stamps the time and appends a job_status event (with `detail`, e.g. the claiming runner). */
export async function moveJob(tx: Queryable, job: JobRow, event: JobEvent, patch: Partial<JobRow> = {}, detail: Record<string, unknown> = {}): Promise<JobRow> {
  const to = jobTransition(phase(job), event);
  const now = new Date();
  const stamps: Partial<JobRow> =
    event === "claim" ? { startedAt: job.startedAt ?? now }
    : event === "pause" ? { pausedAt: now, leaseExpiresAt: null }
    : event === "approve" ? { resumedAt: now }
    : to.status === "completed" ? { completedAt: now, leaseExpiresAt: null }
    : {};
  const [row] = await tx
    .update(infraJobs)
    .set({ ...to, ...stamps, ...patch, updatedAt: now })
    .where(and(eq(infraJobs.id, job.id), eq(infraJobs.status, job.status)))
    .returning();
  if (!row) throw new Error(`job ${job.id} changed under a lock`);
  await appendEvents(tx, job.id, [{ operation: null, type: "job_status", payload: { status: to.status, result: to.result, ...(patch.reason ? { reason: patch.reason } : {}), ...detail } }]);
  if (to.status === "completed" || event === "requeue") await releaseStateLocks(tx, job.id);
  // The one place a job ends: a component's destroy job decides whether the component is removed.
  if (to.status === "completed") await onComponentJobCompleted(tx, row);
  if (to.status === "queued" || to.status === "completed" || to.status === "awaiting_approval") await notifyQueue(tx, job.orgId);
  return row;
}

export async function moveStep(tx: Queryable, step: StepRow, event: StepEvent, patch: Partial<StepRow> = {}): Promise<StepRow> {
  const to = stepTransition(phase(step), event);
  const now = new Date();
  const stamps: Partial<StepRow> = event === "start" ? { startedAt: now } : to.status === "completed" ? { endedAt: now } : {};
  const [row] = await tx
    .update(jobOperations)
    .set({ ...to, ...stamps, ...patch })
    .where(and(eq(jobOperations.id, step.id), eq(jobOperations.status, step.status)))
    .returning();
  await appendEvents(tx, step.jobId, [
    { operation: step.step as StepName, type: "operation_status", payload: { status: to.status, result: to.result, ...(patch.reason ? { reason: patch.reason } : {}) } },
  ]);
  return row;
}

/** Marks every step still queued as skipped or cancelled. */
export async function endRemainingSteps(tx: Queryable, jobId: string, how: "skip" | "cancel", reason: string): Promise<void> {
  for (const s of await stepsOf(tx, jobId)) if (s.status === "queued") await moveStep(tx, s, how, { reason });
}

/**
 * A completed job holds no state lock: whatever it left is released — after the state changes it had
 * sent (a runner lost mid-apply) are compacted into its state, so nothing it finished is lost.
 */
export async function releaseStateLocks(tx: Queryable, jobId: string): Promise<void> {
  try {
    await compactStateJournal(tx, jobId);
  } catch (err) {
    // Kept for the next compaction: another kind's store may be unreachable right now.
    console.log(`[state] job ${jobId}: its state changes could not be compacted before its lock was released: ${err instanceof Error ? err.message : String(err)}`);
  }
  await tx.update(stateObjects).set({ lockInfo: null, lockedByJob: null, updatedAt: new Date() }).where(eq(stateObjects.lockedByJob, jobId));
}

/** Wakes long-polling runners: a job became claimable, or a component's queue may have moved. */
export async function notifyQueue(tx: Queryable, orgId: string): Promise<void> {
  await tx.execute(sql`select pg_notify(${JOB_QUEUED_CHANNEL}, ${orgId})`);
}

/** What the job's record says about the step that decided its next move. */
export interface StepEnd {
  step: StepName;
  result: "succeeded" | "failed";
  /** Why the step failed (its own words). */
  reason?: string | null;
  /** The plan the job pauses to have approved. */
  planSha256?: string;
  /** Overrides the job's reason (e.g. "runner lost"). */
  jobReason?: string;
  /** Overrides why the rest are skipped (when no step was running). */
  restReason?: string;
}

/**
 * Carries out the lifecycle's decision after a step: the one place where the rest of a job is
 * skipped or cancelled and the job paused, ended or let carry on. Answers whether the runner goes on.
 */
export async function carryOut(tx: Queryable, job: JobRow, next: AfterStep, end: StepEnd): Promise<"continue" | "stop"> {
  const who = job.cancelRequestedBy;
  switch (next.job) {
    case "continue":
      return "continue";
    case "pause": {
      const following = (await stepsOf(tx, job.id)).find((s) => s.status === "queued")?.step;
      await moveJob(tx, job, "pause", { reason: REASONS.awaitingApproval(end.planSha256, following) });
      return "stop";
    }
    case "succeed":
      await moveJob(tx, job, "succeed", { reason: next.cancelTooLate ? REASONS.cancelTooLate(who, end.step) : null });
      return "stop";
    case "fail":
      await endRemainingSteps(tx, job.id, "skip", end.restReason ?? REASONS.earlierFailed(end.step));
      await moveJob(tx, job, "fail", { reason: end.jobReason ?? REASONS.stepFailed(end.step, end.reason) });
      return "stop";
    case "finish_cancelled":
      await endRemainingSteps(tx, job.id, "cancel", REASONS.cancelledBy(who));
      await moveJob(tx, job, "finish_cancelled", { reason: end.jobReason ?? REASONS.cancelledAfter(who, end.step, end.result) });
      return "stop";
  }
}

/**
 * Ends a running job whose attempt is gone (runner lost, or the runner ended the attempt early):
 * the running step fails with the reason, then the lifecycle decides the rest, as after any failed step.
 */
export async function failRunningJob(tx: Queryable, job: JobRow, reason: string): Promise<JobRow> {
  const steps = await stepsOf(tx, job.id);
  const running = steps.find((s) => s.status === "running");
  if (running) await moveStep(tx, running, "fail", { reason });
  const remaining = steps.filter((s) => s.status === "queued").length;
  const next = afterStep({ result: "failed", cancelRequested: !!job.cancelRequestedAt, pauseAfter: false, remaining });
  await carryOut(tx, job, next, { step: running?.step ?? "init", result: "failed", reason, jobReason: reason, ...(running ? {} : { restReason: reason }) });
  return (await lockJob(tx, job.id))!;
}
