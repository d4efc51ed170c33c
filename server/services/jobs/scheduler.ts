// The scheduler loop: expires lapsed leases and archives ended jobs' logs. Every replica runs the loop; only the leader does the work.
// The leader is the process holding a session-level advisory lock on a connection of its own
// (DatabaseHandle.sessionLock): the others try to take it each tick, so when the leader dies (its
// connection ends and Postgres frees the lock) the next replica to tick takes over. A leader whose lock
// connection broke, or whose database stopped answering, stops acting as leader at its next tick.
// Every replica's tick (not only the leader's) also sweeps state moves: a move's own run lock already keeps it
// to one process, so waiting for leadership would only delay a takeover when the leader and the move's process die together.
import { and, eq, isNull, lt } from "drizzle-orm";
import { SCHEDULER_LEADER_LOCK } from "@/db/advisory-locks";
import type { Database, DatabaseHandle } from "@/db/client";
import { infraJobs, runnerAttempts } from "@/db/schema";
import { resumeRunningMoves } from "../state-backends/move";
import { failRunningJob, lockJob, moveJob, stepsOf } from "./transitions";
import { archiveEndedJobLogs } from "./job-log";

export const RUNNER_LOST = "runner lost";
export const RUNNER_LOST_BEFORE_START = "runner lost before it started any step; the job was queued again";

/**
 * Declares the runners of lapsed leases lost: the attempt ends with "runner lost", the running step
 * fails with it, the job completes failed, its state lock is released and the component's queue moves on.
 * An attempt lost before it started any step (a runner killed right after its claim) changed nothing:
 * its job is queued again for another runner. Returns the ids of the jobs it ended or queued again.
 * The leader calls it; two at once would still end each job once (the rows are locked and re-checked).
 */
export async function expireLeases(db: Database, now = new Date()): Promise<string[]> {
  return db.transaction(async (tx) => {
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
  /** One tick: takes or checks leadership, and does the leader's work when this process leads. Ticks do not overlap. */
  tick(): Promise<void>;
  /** True while this scheduler is the leader. */
  readonly leader: boolean;
  /** Stops ticking and lets go of the leadership (another replica takes over at its next tick). */
  stop(): Promise<void>;
}

// This process's scheduler leadership, for /metrics and the health answer; on globalThis, as the routes are bundled apart from server/start.ts.
const g = globalThis as unknown as { __plantonSchedulerLeader?: boolean };

/** Whether this process is the scheduler leader now (false until its scheduler's first tick). */
export const isSchedulerLeader = (): boolean => g.__plantonSchedulerLeader === true;

/** Runs the scheduler every `intervalMs` (2 s) until stopped; `intervalMs: 0` leaves the ticking to the caller (tests). */
export function startScheduler(handle: DatabaseHandle, opts: { intervalMs?: number; log?: (msg: string) => void } = {}): Scheduler {
  const log = opts.log ?? ((m) => console.log(`[scheduler] ${m}`));
  const lock = handle.sessionLock(SCHEDULER_LEADER_LOCK);
  let leader = false;
  let decided = false;
  let stopped = false;
  let current: Promise<void> | null = null;

  const lead = (now: boolean, why: string) => {
    if (!decided && !now) log(`this replica (pid ${process.pid}) follows: ${why}; it takes over if the leader stops`);
    decided = true;
    if (now !== leader) log(now ? `this replica (pid ${process.pid}) became the scheduler leader: ${why}` : `this replica (pid ${process.pid}) stopped being the scheduler leader: ${why}`);
    leader = now;
    g.__plantonSchedulerLeader = now;
  };

  const work = async () => {
    // A state move whose process died (or whose run stopped) runs on here, unless another replica takes it first.
    if (!stopped) await resumeRunningMoves(handle.db, { log }).catch((err) => log(`state moves not swept: ${(err as Error).message}`));
    let held: boolean;
    try {
      held = await lock.hold();
    } catch (err) {
      // Its lock connection broke and the database does not answer it: another replica may lead now.
      if (leader) await lock.release().catch(() => {});
      return lead(false, `its database connection failed (${(err as Error).message})`);
    }
    lead(held, held ? "it holds the leader lock" : "another replica holds the leader lock");
    if (!held || stopped) return;
    const ended = await expireLeases(handle.db);
    if (ended.length) log(`runner lost: ${ended.join(", ")} ended (failed, or queued again when nothing had started) and their state locks were released`);
    // Ended jobs' logs, archived as artifacts with their SHA-256 (a batch a tick; a failure is retried next tick).
    await archiveEndedJobLogs(handle.db).catch((err) => log(`job logs not archived: ${(err as Error).message}`));
  };

  const tick = () =>
    (current ??= work()
      .catch((err) => log(`tick failed: ${(err as Error).message}`))
      .finally(() => (current = null)));

  const timer = opts.intervalMs === 0 ? null : setInterval(() => void tick(), opts.intervalMs ?? 2000);
  timer?.unref?.();
  if (timer) void tick();
  return {
    tick,
    get leader() {
      return leader;
    },
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      await current;
      await lock.release().catch(() => {});
      lead(false, "it stopped");
    },
  };
}
