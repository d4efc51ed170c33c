// Progress events: one append-only stream per job with a gap-free seq. Appends take the job's row
// lock, so seqs never skip or repeat; a runner's batch is idempotent by (attempt, runner seq).
// NOTIFY job_events '<jobId>:<seq>' is issued by the appending statement, so Postgres delivers it after commit.
import { and, asc, eq, gt, sql, type SQL } from "drizzle-orm";
import { rowsOf, type DatabaseHandle, type Queryable } from "@/db/client";
import { isUniqueViolation } from "../../errors";
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
  return (await append(tx, jobId, null, events.map((e) => ({ ...e, ts: validDate(e.ts).toISOString(), runnerSeq: null }))))!.lastSeq;
}

type Appended = { acceptedThrough: number; lastSeq: number; stored: ProgressEvent[] | null };

/**
 * Appends a runner's batch. A retried batch (same attempt, same runner seqs) adds nothing. Returns the
 * highest runner seq stored for this attempt, and — when every event was new — the events as stored (for
 * this process's live feed: event-feed.ts `beginLocalAppend`). One statement, outside any transaction of the caller's:
 * two uploads of the same batch at once meet at the unique (job, attempt, runner seq) index, and the
 * one that lost runs again, now seeing what the other stored. With `onlyIf` (a condition the statement tests,
 * JobAccess.unconfirmed's), nothing is stored when it is false, and the answer is null.
 */
export async function appendRunnerEvents(db: Queryable, jobId: string, attemptId: string, events: UploadedEvent[]): Promise<Appended>;
export async function appendRunnerEvents(db: Queryable, jobId: string, attemptId: string, events: UploadedEvent[], onlyIf: SQL | undefined): Promise<Appended | null>;
export async function appendRunnerEvents(db: Queryable, jobId: string, attemptId: string, events: UploadedEvent[], onlyIf?: SQL): Promise<Appended | null> {
  const sorted = [...new Map(events.map((e) => [e.seq, e])).values()].sort((a, b) => a.seq - b.seq);
  const rows = sorted.map((e) => ({ ts: validDate(e.ts).toISOString(), operation: e.operation, type: e.type, payload: e.payload, runnerSeq: e.seq }));
  for (let attempt = 1; ; attempt++) {
    try {
      const r = await append(db, jobId, attemptId, rows, onlyIf);
      if (!r) return null;
      // Every event was new (no retry of a batch stored before): they hold the seqs after the job's last, in order.
      const stored = rows.length && r.lastSeq - r.seqBefore === rows.length ? rows.map((e, i) => ({ seq: r.seqBefore + 1 + i, ts: e.ts, operation: e.operation, type: e.type, payload: e.payload })) : null;
      return { acceptedThrough: Math.max(r.storedBefore, r.lastFresh), lastSeq: r.lastSeq, stored };
    } catch (err) {
      if (attempt >= 3 || !isUniqueViolation(err)) throw err;
    }
  }
}

/**
 * One statement: locks the job row (so seqs never skip or repeat; `no key update`, so a state journal
 * batch holding the row's key-share lock does not hold events back), drops runner events this attempt
 * already stored, numbers the rest after the job's last seq, inserts them, moves the job's seq and
 * NOTIFYs (delivered after commit). The events travel as one JSON parameter, whatever their number; each
 * caller has made every `ts` a valid ISO time (validDate) already.
 */
async function append(
  db: Queryable,
  jobId: string,
  attemptId: string | null,
  events: (NewEvent & { ts: string; runnerSeq: number | null })[],
  onlyIf?: SQL,
): Promise<{ seqBefore: number; lastSeq: number; storedBefore: number; lastFresh: number } | null> {
  const json = JSON.stringify(events.map((e, n) => ({ n, ts: e.ts, operation: e.operation, type: e.type, payload: e.payload, runner_seq: e.runnerSeq })));
  const [row] = rowsOf<{ before: number | null; last: number | null; stored: number; fresh: number | null }>(
    await db.execute(sql`
      with job as (select id, event_seq from ${infraJobs} where id = ${jobId}${onlyIf ? sql` and ${onlyIf}` : sql``} for no key update),
      incoming as (
        select * from jsonb_to_recordset(${json}::jsonb) as e(n integer, ts timestamptz, operation text, type text, payload jsonb, runner_seq integer)
      ),
      stored as (select coalesce(max(runner_seq), 0) as last from ${progressEvents} where job_id = ${jobId} and attempt_id = ${attemptId}),
      fresh as (
        -- Past the attempt's last stored runner seq (a batch's usual case) an event is new without a look at the
        -- others: the attempt's stored seqs are only read (once, hashed) when a retry resends some at or below it.
        select i.*, row_number() over (order by i.n) as k from incoming i
        where i.runner_seq is null
           or i.runner_seq > (select last from stored)
           or not exists (select 1 from ${progressEvents} p where p.job_id = ${jobId} and p.attempt_id = ${attemptId} and p.runner_seq = i.runner_seq)
      ),
      ins as (
        insert into ${progressEvents} (job_id, seq, ts, operation, type, payload, attempt_id, runner_seq)
        select job.id, job.event_seq + f.k, f.ts, f.operation, f.type, f.payload, ${attemptId}, f.runner_seq from fresh f cross join job
        returning 1
      ),
      moved as (
        update ${infraJobs} set event_seq = job.event_seq + (select count(*) from ins) from job
        where ${infraJobs}.id = job.id and exists (select 1 from fresh)
        returning ${infraJobs}.event_seq as last, pg_notify(${JOB_EVENTS_CHANNEL}, job.id || ':' || ${infraJobs}.event_seq)
      )
      select (select event_seq from job) as before,
             coalesce((select last from moved), (select event_seq from job)) as last,
             (select last from stored) as stored,
             (select max(runner_seq) from fresh) as fresh`),
  );
  if (row?.before == null) {
    if (onlyIf) return null;
    throw new Error(`job ${jobId} does not exist`);
  }
  return { seqBefore: Number(row.before), lastSeq: Number(row.last), storedBefore: Number(row.stored), lastFresh: Number(row.fresh ?? 0) };
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
