// The scheduler loop: expires lapsed leases. Every replica runs it; each tick does work only while
// holding a Postgres advisory lock, so one replica at a time is the leader.
import { and, eq, isNull, lt, sql } from "drizzle-orm";
import { rowsOf, type Database, type DatabaseHandle } from "@/db/client";
import { infraJobs, runnerAttempts } from "@/db/schema";
import { failRunningJob, lockJob, moveJob, stepsOf } from "./transitions";

const LEADER_LOCK = 727275;
export const RUNNER_LOST = "runner lost";
export const RUNNER_LOST_BEFORE_START = "runner lost before it started any step; the job was queued again";

/**
 * Declares the runners of lapsed leases lost: the attempt ends with "runner lost", the running step
 * fails with it, the job completes failed, its state lock is released and the component's queue moves on.
 * An attempt lost before it started any step (a runner killed right after its claim) changed nothing:
 * its job is queued again for another runner. Returns the ids of the jobs it ended or queued again;
 * [] when another replica is the leader this tick.
 */
export async function expireLeases(db: Database, now = new Date()): Promise<string[]> {
  return db.transaction(async (tx) => {
    const [leader] = rowsOf<{ ok: boolean }>(await tx.execute(sql`select pg_try_advisory_xact_lock(${LEADER_LOCK}) as ok`));
    if (!leader?.ok) return [];
    const lapsed = await tx
      .select({ id: infraJobs.id })
      .from(infraJobs)
      .where(and(eq(infraJobs.status, "running"), lt(infraJobs.leaseExpiresAt, now)))
      .for("update", { skipLocked: true });
    const ended: string[] = [];
    for (const { id } of lapsed) {
      const job = await lockJob(tx, id);
      if (!job || job.status !== "running") continue;
      const [attempt] = job.currentAttemptId ? await tx.select().from(runnerAttempts).where(eq(runnerAttempts.id, job.currentAttemptId)) : [];
      const startedSince = (await stepsOf(tx, job.id)).some((s) => s.status === "running" || (attempt && s.startedAt && s.startedAt >= attempt.startedAt));
      const requeue = !!attempt && !startedSince && !job.cancelRequestedAt;
      if (attempt) {
        await tx
          .update(runnerAttempts)
          .set({ endedAt: now, reason: requeue ? RUNNER_LOST_BEFORE_START : RUNNER_LOST })
          .where(and(eq(runnerAttempts.id, attempt.id), isNull(runnerAttempts.endedAt)));
      }
      if (requeue) await moveJob(tx, job, "requeue", { reason: null, runnerId: null, currentAttemptId: null, leaseExpiresAt: null });
      else await failRunningJob(tx, job, RUNNER_LOST);
      ended.push(id);
    }
    return ended;
  });
}

export interface Scheduler {
  stop(): void;
}

/** Runs the scheduler every `intervalMs` until stopped. */
export function startScheduler(handle: DatabaseHandle, opts: { intervalMs?: number; log?: (msg: string) => void } = {}): Scheduler {
  const log = opts.log ?? ((m) => console.log(`[scheduler] ${m}`));
  let running = false;
  const timer = setInterval(async () => {
    if (running) return;
    running = true;
    try {
      const ended = await expireLeases(handle.db);
      if (ended.length) log(`runner lost: ${ended.join(", ")} ended (failed, or queued again when nothing had started) and their state locks were released`);
    } catch (err) {
      log(`tick failed: ${(err as Error).message}`);
    } finally {
      running = false;
    }
  }, opts.intervalMs ?? 2000);
  timer.unref?.();
  return { stop: () => clearInterval(timer) };
}
