// The scheduler loop: expires lapsed leases. Every replica runs it; each tick does work only while
// holding a Postgres advisory lock, so one replica at a time is the leader.
import { and, eq, isNull, lt, sql } from "drizzle-orm";
import type { Database, DatabaseHandle } from "@/db/client";
import { infraJobs, runnerAttempts } from "@/db/schema";
import { failRunningJob, lockJob } from "./transitions";

const LEADER_LOCK = 727275;
export const RUNNER_LOST = "runner lost";

function rowsOf<T>(result: unknown): T[] {
  return Array.isArray(result) ? (result as T[]) : ((result as { rows?: T[] }).rows ?? []);
}

/**
 * Declares the runners of lapsed leases lost: the attempt ends with "runner lost", the running step
 * fails with it, the job completes failed, its state lock is released and the component's queue moves on.
 * Returns the ids of the jobs it ended; [] when another replica is the leader this tick.
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
      if (job.currentAttemptId) {
        await tx
          .update(runnerAttempts)
          .set({ endedAt: now, reason: RUNNER_LOST })
          .where(and(eq(runnerAttempts.id, job.currentAttemptId), isNull(runnerAttempts.endedAt)));
      }
      await failRunningJob(tx, job, RUNNER_LOST);
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
      if (ended.length) log(`runner lost: ${ended.join(", ")} failed and their state locks were released`);
    } catch (err) {
      log(`tick failed: ${(err as Error).message}`);
    } finally {
      running = false;
    }
  }, opts.intervalMs ?? 2000);
  timer.unref?.();
  return { stop: () => clearInterval(timer) };
}
