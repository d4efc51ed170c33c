// Live progress events, one reader per job per process. The process's one LISTEN job_events wakes the
// job's feed on NOTIFY '<job>:<seq>'; the feed reads the new events once (by seq, after the last it
// read) and hands them in memory to every subscriber of that job. A runner's batch this process stores
// goes to the feed as it was stored, with no read: the feed holds back a NOTIFY that arrives while one of
// this process's uploads of the job is in flight (it is most likely that upload's own), and reads for it
// only if the upload did not hand it what the NOTIFY announced (beginLocalAppend). Each subscriber has a bounded
// buffer: one that falls behind (its buffer full) stops taking live batches, catches up from the
// database by its own cursor, then rejoins — it never drops or repeats an event and never holds up
// the others. Seqs are allocated under the job's row lock, so they commit in order and a read after
// a NOTIFY sees no gap.
import { eq } from "drizzle-orm";
import type { Database, DatabaseHandle } from "@/db/client";
import { infraJobs } from "@/db/schema";
import { encodeEventFrames } from "@/lib/job-event-stream";
import { deflatePiece, type DeflatedPiece } from "../../gzip-pieces";
import type { ProgressEvent } from "@/lib/runner-protocol";
import { metrics } from "../../metrics";
import { JOB_EVENTS_CHANNEL, readEventsAfter, subscribeChannel } from "./events";

const READ_PAGE = 500;
/** Events a subscriber may have waiting before it is moved to catching up from the database. */
export const SUBSCRIBER_BUFFER = 1000;
/** A NOTIFY lost to a reconnect is picked up by this slow re-read of each live job. */
const SAFETY_POLL_MS = 5000;

/** Counters of one job's feed in this process (for tests and metrics). */
export interface JobFeedStats {
  subscribers: number;
  /** Reads by the feed itself: one per wake-up, whatever the number of subscribers. */
  feedReads: number;
  /** Safety polls (each may cause one feed read). */
  polls: number;
  /** Reads by subscribers catching up (joining behind the feed, or after falling behind). */
  catchUpReads: number;
  /** Times a subscriber's buffer was full and it fell back to the database. */
  fallbacks: number;
}

/**
 * Events read together (contiguous seqs), encoded for the wire once, on first use, and the same bytes
 * handed to every subscriber that takes the whole batch.
 */
export class EventBatch {
  private encoded: Buffer | undefined;
  private deflated: DeflatedPiece | undefined;

  constructor(
    readonly events: ProgressEvent[],
    encoded?: Buffer,
    deflated?: DeflatedPiece,
  ) {
    this.encoded = encoded;
    this.deflated = deflated;
  }

  /** The batch as server-sent-event messages (lib/job-event-stream.ts). */
  get bytes(): Buffer {
    return (this.encoded ??= Buffer.from(encodeEventFrames(this.events)));
  }

  /** The same, deflated once for every viewer whose stream is gzip-compressed (server/gzip-pieces.ts). */
  get piece(): DeflatedPiece {
    return (this.deflated ??= deflatePiece(this.bytes));
  }

  private emitted: number[] | undefined;
  private earliest: number | undefined;
  /** When each event's runner emitted it (ms since the epoch), parsed once for every subscriber (the delivery lag metric). */
  get emittedAt(): readonly number[] {
    return (this.emitted ??= this.events.map((e) => Date.parse(e.ts)));
  }

  /** The earliest of those (NaN when none parses): a viewer whose stream opened before it was written the whole batch live. */
  get earliestEmittedAt(): number {
    return (this.earliest ??= this.emittedAt.reduce((min, at) => (at < min || Number.isNaN(min) ? at : min), NaN));
  }

  get lastSeq(): number {
    return this.events[this.events.length - 1].seq;
  }

  /** One batch of several (in order), reusing their encoded bytes, and their deflated ones where made (pieces deflated on their own concatenate). */
  static join(batches: EventBatch[]): EventBatch {
    if (batches.length === 1) return batches[0];
    const raw = Buffer.concat(batches.map((b) => b.bytes));
    const deflated = batches.every((b) => b.deflated) ? { raw, deflated: Buffer.concat(batches.map((b) => b.deflated!.deflated)) } : undefined;
    return new EventBatch(
      batches.flatMap((b) => b.events),
      raw,
      deflated,
    );
  }
}

class Subscriber {
  private queue: EventBatch[] = [];
  private queued = 0;
  /** Taking live batches from the feed; false while catching up from the database. */
  live = false;
  private wake: (() => void) | undefined;

  /** `cursor`: the last seq this subscriber holds (queued or already handed on). */
  constructor(
    public cursor: number,
    private readonly capacity: number,
    private readonly feed: JobFeed,
  ) {}

  get waiting(): number {
    return this.queued;
  }

  /** A batch the feed read. Takes what follows its cursor (the batch itself when it takes all), or falls back when it has no room. */
  offer(batch: EventBatch): void {
    if (this.live) {
      const events = batch.events;
      let i = 0;
      while (i < events.length && events[i].seq <= this.cursor) i++;
      if (i < events.length) {
        if (events[i].seq !== this.cursor + 1 || this.queued + events.length - i > this.capacity) {
          this.live = false;
          this.feed.stats.fallbacks++;
          metrics().sseCatchUps.inc();
        } else {
          this.push(i === 0 ? batch : new EventBatch(events.slice(i)));
        }
      }
    }
    this.signal();
  }

  /** Everything waiting, as one batch. */
  takeAll(): EventBatch | undefined {
    if (!this.queue.length) return undefined;
    const all = EventBatch.join(this.queue);
    this.queue = [];
    this.queued = 0;
    return all;
  }

  push(batch: EventBatch): void {
    if (!batch.events.length) return;
    this.queue.push(batch);
    this.queued += batch.events.length;
    this.cursor = batch.lastSeq;
  }

  signal(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  next(): Promise<void> {
    return new Promise((resolve) => (this.wake = resolve));
  }
}

class JobFeed {
  readonly subscribers = new Set<Subscriber>();
  /** The last seq the feed read and handed out. */
  cursor = 0;
  /** Set once the job has completed: its last seq. */
  endSeq: number | null = null;
  readonly ready: Promise<void>;
  readonly stats = { feedReads: 0, polls: 0, catchUpReads: 0, fallbacks: 0 };
  private reading = false;
  private dirty = false;
  /** Whether `ready` has set where the feed begins. */
  private started = false;
  /** This process's appends of the job's runner batches in flight. */
  private localAppends = 0;
  /** The highest seq a NOTIFY announced while local appends were in flight. */
  private heldBack: number | undefined;
  private readonly poll: ReturnType<typeof setInterval>;

  constructor(
    private readonly handle: DatabaseHandle,
    readonly jobId: string,
  ) {
    this.ready = this.checkEnd(true).then(() => void (this.started = true));
    this.poll = setInterval(() => (this.stats.polls++, this.wake()), SAFETY_POLL_MS);
    this.poll.unref?.();
  }

  /** This process is storing a runner's batch of this job (see beginLocalAppend). */
  beginLocal(): void {
    this.localAppends++;
  }

  /**
   * A local append ended; `stored`: its events as stored (contiguous seqs, in order), when it stored them all.
   * They go to the subscribers as they are when they follow what the feed has handed out and it is not reading;
   * otherwise the feed reads. NOTIFYs held back meanwhile are then read for, if anything they announced is missing.
   */
  endLocal(stored: ProgressEvent[] | null): void {
    this.localAppends--;
    if (stored?.length) {
      const last = stored[stored.length - 1].seq;
      if (!this.started || this.reading || stored[0].seq !== this.cursor + 1 || stored.some(endsJob)) this.wake(last);
      else this.handOut(stored);
    }
    if (this.localAppends === 0 && this.heldBack !== undefined) {
      const seq = this.heldBack;
      this.heldBack = undefined;
      this.wake(seq);
    }
  }

  /** A NOTIFY for this job (with the batch's last seq), a reconnect or a poll. */
  wake(seq?: number): void {
    if (seq !== undefined && seq <= this.cursor) return;
    if (seq !== undefined && this.localAppends > 0) {
      this.heldBack = Math.max(this.heldBack ?? 0, seq);
      return;
    }
    this.dirty = true;
    void this.read();
  }

  stop(): void {
    clearInterval(this.poll);
  }

  /** Events that follow the cursor, in order: the feed moves past them and offers them, as one batch, to every subscriber. */
  private handOut(events: ProgressEvent[]): void {
    this.cursor = events[events.length - 1].seq;
    const shared = new EventBatch(events);
    for (const s of this.subscribers) s.offer(shared);
  }

  private async read(): Promise<void> {
    if (this.reading) return;
    this.reading = true;
    try {
      await this.ready;
      while (this.dirty) {
        this.dirty = false;
        for (;;) {
          this.stats.feedReads++;
          const batch = await readEventsAfter(this.handle.db, this.jobId, this.cursor, READ_PAGE);
          if (!batch.length) break;
          if (batch.some(endsJob)) await this.checkEnd();
          this.handOut(batch);
          if (batch.length < READ_PAGE) break;
        }
      }
    } catch (err) {
      // Subscribers keep what they have; the next NOTIFY or poll reads again from the same seq.
      console.error(`job ${this.jobId}: reading live events failed:`, err);
    } finally {
      this.reading = false;
    }
  }

  /** Whether the job has completed, and its last seq then; at the start, also where the feed begins. */
  private async checkEnd(start = false): Promise<void> {
    const [job] = await this.handle.db.select({ status: infraJobs.status, seq: infraJobs.eventSeq }).from(infraJobs).where(eq(infraJobs.id, this.jobId));
    if (start) this.cursor = job?.seq ?? 0;
    if (!job) this.endSeq = 0;
    else if (job.status === "completed") this.endSeq = job.seq;
  }
}

const endsJob = (e: ProgressEvent) => e.type === "job_status" && e.payload.status === "completed";

// ── One hub per database handle: its LISTEN, and the feeds of the jobs someone watches ──────────
interface Hub {
  feeds: Map<string, JobFeed>;
  listening: Promise<unknown>;
}
// Keyed by the handle's database, which every service is handed (and a copy of the handle shares).
const hubs = new WeakMap<Database, Hub>();

function hubOf(handle: DatabaseHandle): Hub {
  let hub = hubs.get(handle.db);
  if (hub) return hub;
  const feeds = new Map<string, JobFeed>();
  const listening = subscribeChannel(handle, JOB_EVENTS_CHANNEL, (payload) => {
    // "" after the LISTEN (re)connected: anything may have been missed.
    if (payload === "") return feeds.forEach((f) => f.wake());
    const at = payload.lastIndexOf(":");
    feeds.get(payload.slice(0, at))?.wake(Number(payload.slice(at + 1)));
  });
  const created: Hub = { feeds, listening };
  listening.catch(() => hubs.delete(handle.db));
  hubs.set(handle.db, created);
  return created;
}

/** Adds a subscriber to the job's feed (made on first use) once the feed knows where it starts. */
async function joinFeed(handle: DatabaseHandle, jobId: string, subscriber: (feed: JobFeed) => Subscriber): Promise<[JobFeed, Subscriber]> {
  const hub = hubOf(handle);
  await hub.listening;
  for (;;) {
    let feed = hub.feeds.get(jobId);
    if (!feed) hub.feeds.set(jobId, (feed = new JobFeed(handle, jobId)));
    try {
      await feed.ready;
    } catch (err) {
      if (hub.feeds.get(jobId) === feed) {
        hub.feeds.delete(jobId);
        feed.stop();
      }
      throw err;
    }
    // The last subscriber may have left (and the feed stopped) while this one waited.
    if (hub.feeds.get(jobId) !== feed) continue;
    const sub = subscriber(feed);
    feed.subscribers.add(sub);
    return [feed, sub];
  }
}

function leaveFeed(handle: DatabaseHandle, feed: JobFeed, sub: Subscriber): void {
  feed.subscribers.delete(sub);
  const hub = hubs.get(handle.db);
  if (feed.subscribers.size === 0 && hub?.feeds.get(feed.jobId) === feed) {
    hub.feeds.delete(feed.jobId);
    feed.stop();
  }
}

/**
 * This process is about to store a runner's batch of `jobId` (appendRunnerEvents): call the answer once it
 * ended, with the events as stored (its `stored`), or null when it stored none or failed. Viewers of the job
 * here then have them without the NOTIFY's round trip and a read; other processes read them on the NOTIFY.
 */
export function beginLocalAppend(db: Database, jobId: string): (stored: ProgressEvent[] | null) => void {
  const feed = hubs.get(db)?.feeds.get(jobId);
  if (!feed) return () => {};
  feed.beginLocal();
  return (stored) => feed.endLocal(stored);
}

/** The live feed of a job in this process, if anyone is watching it. */
export function jobFeedStats(handle: DatabaseHandle, jobId: string): JobFeedStats | undefined {
  const feed = hubs.get(handle.db)?.feeds.get(jobId);
  return feed && { subscribers: feed.subscribers.size, ...feed.stats };
}

/**
 * Every event of a job after `afterSeq`, then live ones, each once and in order, in batches: each
 * time the subscriber has events ready, all of them at once (the backlog from the database, then the
 * job's shared feed, with no gap or repeat at the seam). Ends when the job has completed and
 * everything was delivered, or when `signal` aborts.
 */
export async function* streamJobEventBatches(
  handle: DatabaseHandle,
  jobId: string,
  afterSeq = 0,
  signal?: AbortSignal,
  opts: { stopWhenCompleted?: boolean; bufferSize?: number } = {},
): AsyncGenerator<EventBatch> {
  const [feed, sub] = await joinFeed(handle, jobId, (f) => new Subscriber(afterSeq, opts.bufferSize ?? SUBSCRIBER_BUFFER, f));
  const onAbort = () => sub.signal();
  signal?.addEventListener("abort", onAbort);
  try {
    while (!signal?.aborted) {
      const ready = sub.takeAll();
      if (ready) {
        yield ready;
        continue;
      }
      if (!sub.live) {
        // Behind the feed: catch up from the database, and rejoin once level with it.
        feed.stats.catchUpReads++;
        const page = await readEventsAfter(handle.db, jobId, sub.cursor, READ_PAGE);
        sub.push(new EventBatch(page));
        if (page.length < READ_PAGE && sub.cursor >= feed.cursor) sub.live = true;
        continue;
      }
      if (opts.stopWhenCompleted !== false && feed.endSeq !== null && sub.cursor >= feed.endSeq) return;
      await sub.next();
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    leaveFeed(handle, feed, sub);
  }
}

/** The same, one event at a time. */
export async function* streamJobEvents(
  handle: DatabaseHandle,
  jobId: string,
  afterSeq = 0,
  signal?: AbortSignal,
  opts: { stopWhenCompleted?: boolean; bufferSize?: number } = {},
): AsyncGenerator<ProgressEvent> {
  for await (const batch of streamJobEventBatches(handle, jobId, afterSeq, signal, opts)) yield* batch.events;
}
