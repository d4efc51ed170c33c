// The database side of the lifecycle: every write of a job's or step's status/result goes through
// these, which ask lifecycle.ts whether the move is legal, stamp its time and record an event.
import { and, asc, eq, sql } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { infraJobs, jobOperations, stateObjects } from "@/db/schema";
import type { StepName } from "@/lib/runner-protocol";
import { appendEvents } from "./events";
import { jobTransition, stepTransition, type JobEvent, type Phase, type StepEvent } from "./lifecycle";

export type JobRow = typeof infraJobs.$inferSelect;
export type StepRow = typeof jobOperations.$inferSelect;

export const JOB_QUEUED_CHANNEL = "job_queued";

const phase = (r: Phase): Phase => ({ status: r.status, result: r.result });

/** The job, row-locked for the rest of the transaction. */
export async function lockJob(tx: Queryable, jobId: string): Promise<JobRow | undefined> {
  const [job] = await tx.select().from(infraJobs).where(eq(infraJobs.id, jobId)).for("update");
  return job;
}

export async function stepsOf(tx: Queryable, jobId: string): Promise<StepRow[]> {
  return tx.select().from(jobOperations).where(eq(jobOperations.jobId, jobId)).orderBy(asc(jobOperations.ordinal));
}

/** Moves a job through one lifecycle event; stamps the time and appends a job_status event. */
export async function moveJob(tx: Queryable, job: JobRow, event: JobEvent, patch: Partial<JobRow> = {}): Promise<JobRow> {
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
  await appendEvents(tx, job.id, [{ operation: null, type: "job_status", payload: { status: to.status, result: to.result, ...(patch.reason ? { reason: patch.reason } : {}) } }]);
  if (to.status === "completed") await releaseStateLocks(tx, job.id);
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

/** A completed job holds no state lock: whatever it left is released. */
export async function releaseStateLocks(tx: Queryable, jobId: string): Promise<void> {
  await tx.update(stateObjects).set({ lockInfo: null, lockedByJob: null, updatedAt: new Date() }).where(eq(stateObjects.lockedByJob, jobId));
}

/** Wakes long-polling runners: a job became claimable, or a component's queue may have moved. */
export async function notifyQueue(tx: Queryable, orgId: string): Promise<void> {
  await tx.execute(sql`select pg_notify(${JOB_QUEUED_CHANNEL}, ${orgId})`);
}

/**
 * Ends a running job whose attempt is gone (runner lost, or the runner ended the attempt early):
 * the running step fails with the reason, the rest are skipped, the job fails, its lock is released.
 */
export async function failRunningJob(tx: Queryable, job: JobRow, reason: string): Promise<JobRow> {
  for (const s of await stepsOf(tx, job.id)) if (s.status === "running") await moveStep(tx, s, "fail", { reason });
  if (job.cancelRequestedAt) {
    await endRemainingSteps(tx, job.id, "cancel", "the job was cancelled");
    return moveJob(tx, job, "finish_cancelled", { reason });
  }
  await endRemainingSteps(tx, job.id, "skip", "an earlier step failed");
  return moveJob(tx, job, "fail", { reason });
}
