// Progress events: one append-only stream per job with a gap-free seq. Appends take the job's row
// lock, so seqs never skip or repeat; a runner's batch is idempotent by (attempt, runner seq).
// NOTIFY job_events '<jobId>:<seq>' is issued inside the transaction, so Postgres delivers it after commit.
import { and, asc, eq, gt, inArray, sql } from "drizzle-orm";
import type { DatabaseHandle, Queryable } from "@/db/client";
import { infraJobs, progressEvents } from "@/db/schema";
import { z } from "zod";
import { getJob } from "./queries";
import type { ProgressEvent, ProgressEventType, StepName, UploadedEvent } from "@/lib/runner-protocol";

export const JOB_EVENTS_CHANNEL = "job_events";

export interface NewEvent {
  ts?: string;
  operation: StepName | null;
  type: ProgressEventType;
  payload: Record<string, unknown>;
}

/** Appends server-made events (job_status, operation_status, …) inside the caller's transaction. */
export async function appendEvents(tx: Queryable, jobId: string, events: NewEvent[]): Promise<number> {
  if (!events.length) return currentSeq(tx, jobId);
  const [job] = await tx.select({ seq: infraJobs.eventSeq }).from(infraJobs).where(eq(infraJobs.id, jobId)).for("update");
  if (!job) throw new Error(`job ${jobId} does not exist`);
  const last = await insertAfter(tx, jobId, job.seq, events.map((e) => ({ ...e, attemptId: null, runnerSeq: null })));
  return last;
}

/**
 * Appends a runner's batch. A retried batch (same attempt, same runner seqs) adds nothing.
 * Returns the highest runner seq stored for this attempt. One round trip locks the job and reads
 * that highest seq; only seqs at or below it (a retry) are looked up one by one.
 */
export async function appendRunnerEvents(tx: Queryable, jobId: string, attemptId: string, events: UploadedEvent[]): Promise<{ acceptedThrough: number; lastSeq: number }> {
  const [job] = await tx
    .select({
      seq: infraJobs.eventSeq,
      stored: sql<number>`(select coalesce(max(${progressEvents.runnerSeq}), 0) from ${progressEvents} where ${progressEvents.jobId} = ${jobId} and ${progressEvents.attemptId} = ${attemptId})`,
    })
    .from(infraJobs)
    .where(eq(infraJobs.id, jobId))
    .for("update");
  if (!job) throw new Error(`job ${jobId} does not exist`);
  const stored = Number(job.stored);
  const sorted = [...new Map(events.map((e) => [e.seq, e])).values()].sort((a, b) => a.seq - b.seq);
  const maybeSeen = sorted.filter((e) => e.seq <= stored).map((e) => e.seq);
  const seen = maybeSeen.length
    ? await tx
        .select({ runnerSeq: progressEvents.runnerSeq })
        .from(progressEvents)
        .where(and(eq(progressEvents.jobId, jobId), eq(progressEvents.attemptId, attemptId), inArray(progressEvents.runnerSeq, maybeSeen)))
    : [];
  const seenSet = new Set(seen.map((s) => s.runnerSeq));
  const fresh = sorted.filter((e) => !seenSet.has(e.seq));
  const lastSeq = await insertAfter(
    tx,
    jobId,
    job.seq,
    fresh.map((e) => ({ ts: e.ts, operation: e.operation, type: e.type, payload: e.payload, attemptId, runnerSeq: e.seq })),
  );
  return { acceptedThrough: Math.max(stored, fresh.at(-1)?.seq ?? 0), lastSeq };
}

async function insertAfter(
  tx: Queryable,
  jobId: string,
  seq: number,
  events: (NewEvent & { attemptId: string | null; runnerSeq: number | null })[],
): Promise<number> {
  if (!events.length) return seq;
  const rows = events.map((e, i) => ({
    jobId,
    seq: seq + i + 1,
    ts: validDate(e.ts),
    operation: e.operation,
    type: e.type,
    payload: e.payload,
    attemptId: e.attemptId,
    runnerSeq: e.runnerSeq,
  }));
  await tx.insert(progressEvents).values(rows);
  const last = seq + events.length;
  // The job's last seq and the NOTIFY in one statement (delivered after commit).
  await tx
    .update(infraJobs)
    .set({ eventSeq: last })
    .where(eq(infraJobs.id, jobId))
    .returning({ notified: sql`pg_notify(${JOB_EVENTS_CHANNEL}, ${`${jobId}:${last}`})` });
  return last;
}

function validDate(ts?: string): Date {
  const d = ts ? new Date(ts) : new Date();
  return Number.isNaN(d.getTime()) ? new Date() : d;
}

async function currentSeq(db: Queryable, jobId: string): Promise<number> {
  const [job] = await db.select({ seq: infraJobs.eventSeq }).from(infraJobs).where(eq(infraJobs.id, jobId));
  return job?.seq ?? 0;
}

/** Events after `afterSeq`, in order, at most `limit`. */
export async function readEventsAfter(db: Queryable, jobId: string, afterSeq = 0, limit = 1000): Promise<ProgressEvent[]> {
  const rows = await db
    .select()
    .from(progressEvents)
    .where(and(eq(progressEvents.jobId, jobId), gt(progressEvents.seq, afterSeq)))
    .orderBy(asc(progressEvents.seq))
    .limit(limit);
  return rows.map((r) => ({ seq: r.seq, ts: r.ts.toISOString(), operation: r.operation as StepName | null, type: r.type as ProgressEventType, payload: r.payload as Record<string, unknown> }));
}

export const readEventsPageInput = z.object({
  id: z.string().min(1),
  after: z.int32().min(0).default(0).meta({ description: "The last seq already seen" }),
  limit: z.number().int().min(1).max(5000).default(1000),
});

/** A page of the job's events after `after`, with the job's last seq and status (a reader knows whether more will come). */
export async function readEventsPage(db: Queryable, orgId: string, raw: z.input<typeof readEventsPageInput>) {
  const input = readEventsPageInput.parse(raw);
  const job = await getJob(db, orgId, input.id);
  return { events: await readEventsAfter(db, input.id, input.after, input.limit), lastSeq: job.eventSeq, status: job.status };
}

// ── One LISTEN per process and channel, shared by every subscriber (a job's live events: event-feed.ts) ──
type Listener = (payload: string) => void;
interface Fanout {
  listeners: Set<Listener>;
  ready: Promise<unknown>;
}
const fanouts = new WeakMap<DatabaseHandle, Map<string, Fanout>>();

/** Subscribes to a NOTIFY channel through one shared LISTEN. `onReconnect` runs after the LISTEN (re)connects. */
export async function subscribeChannel(handle: DatabaseHandle, channel: string, listener: Listener): Promise<() => void> {
  let byChannel = fanouts.get(handle);
  if (!byChannel) fanouts.set(handle, (byChannel = new Map()));
  let f = byChannel.get(channel);
  if (!f) {
    const listeners = new Set<Listener>();
    f = { listeners, ready: handle.listen(channel, (p) => listeners.forEach((l) => l(p)), () => listeners.forEach((l) => l(""))) };
    byChannel.set(channel, f);
  }
  f.listeners.add(listener);
  await f.ready;
  const fo = f;
  return () => void fo.listeners.delete(listener);
}
