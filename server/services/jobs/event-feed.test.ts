import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "@/db/client";
import { createTestDatabase, testDriver, type TestDatabase } from "../../../test/database";
import { claim, orgWithComponent, testRunner } from "../../../test/job-helpers";
import { uploadEvents } from "../runners/upload-events";
import type { ProgressEvent } from "@/lib/runner-protocol";
import { cancelJob } from "./cancel-job";
import { createJob } from "./create-job";
import { decodeEventMessage } from "@/lib/job-event-stream";
import { readEventStream } from "@/lib/client/sse";
import { jobFeedStats, streamJobEventBatches, streamJobEvents, type EventBatch } from "./event-feed";
import { appendEvents, readEventsAfter } from "./events";

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t.close());

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

async function runningJob() {
  const { org, component } = await orgWithComponent(t.db);
  const job = await createJob(t.db, org.actor(), { componentId: component.id });
  const append = (n: number, tag: string) =>
    t.db.transaction((tx) => appendEvents(tx, job.id, Array.from({ length: n }, (_, i) => ({ operation: null, type: "log" as const, payload: { line: `${tag}-${i}` } }))));
  return { org, job, append, end: () => cancelJob(t.db, org.actor(), { jobId: job.id }) };
}

/** A subscriber that reads as fast as events come; `joined` resolves with its first event. */
function reader(stream: AsyncGenerator<ProgressEvent>) {
  const seqs: number[] = [];
  let joined!: () => void;
  const first = new Promise<void>((r) => (joined = r));
  const done = (async () => {
    for await (const e of stream) {
      seqs.push(e.seq);
      if (seqs.length === 1) joined();
    }
    joined();
  })();
  return { seqs, first, done };
}

describe("live job events, one reader per job", () => {
  it("reach 100 subscribers each once and in order, while a slow one falls behind its buffer, catches up from the database and rejoins", async () => {
    const { job, append, end } = await runningJob();
    const fast = Array.from({ length: 99 }, () => reader(streamJobEvents(t, job.id, 0)));
    // The slow subscriber takes its first event, then reads nothing until the others have finished.
    const slow = streamJobEvents(t, job.id, 0, undefined, { bufferSize: 8 });
    const slowSeqs = [(await slow.next()).value!.seq];
    await Promise.all(fast.map((r) => r.first));
    expect(jobFeedStats(t, job.id)?.subscribers).toBe(100);

    const batches = 30;
    for (let i = 0; i < batches; i++) await append(1 + (i % 5), `b${i}`);
    await end();
    await Promise.all(fast.map((r) => r.done));
    const stats = jobFeedStats(t, job.id)!;
    for await (const e of slow) slowSeqs.push(e.seq);

    const all = (await readEventsAfter(t.db, job.id, 0, 5000)).map((e) => e.seq);
    expect(all.at(-1)).toBeGreaterThan(8 + 60);
    for (const r of fast) expect(r.seqs).toEqual(all);
    expect(slowSeqs).toEqual(all);
    // Only the slow one fell back; the feed read the database per wake-up, not per subscriber.
    expect(stats.fallbacks).toBe(1);
    expect(stats.feedReads).toBeLessThanOrEqual(batches + 6 + stats.polls);
    expect(jobFeedStats(t, job.id)).toBeUndefined();
  });

  it("hand a subscriber joining mid-stream with a Last-Event-ID its backlog, then live events, with no gap or repeat at the seam", async () => {
    const { job, append, end } = await runningJob();
    const watcher = reader(streamJobEvents(t, job.id, 0));
    await watcher.first;
    for (let i = 0; i < 10; i++) await append(3, `before${i}`);
    const lastSeen = (await readEventsAfter(t.db, job.id, 0, 5000)).at(-1)!.seq - 7;
    // Joins while events keep coming: part of its backlog is read from the database, the rest arrives live.
    const appending = (async () => {
      for (let i = 0; i < 10; i++) await append(2, `during${i}`);
    })();
    const joiner = reader(streamJobEvents(t, job.id, lastSeen));
    await appending;
    await end();
    await Promise.all([watcher.done, joiner.done]);
    const all = (await readEventsAfter(t.db, job.id, 0, 5000)).map((e) => e.seq);
    expect(watcher.seqs).toEqual(all);
    expect(joiner.seqs).toEqual(range(lastSeen + 1, all.at(-1)!));
  });

  it("end at once for a job that completed, after its backlog", async () => {
    const { job, append, end } = await runningJob();
    await append(4, "x");
    await end();
    const r = reader(streamJobEvents(t, job.id, 2));
    await r.done;
    const all = (await readEventsAfter(t.db, job.id, 0)).map((e) => e.seq);
    expect(r.seqs).toEqual(range(3, all.at(-1)!));
  });

  it("encode a batch the reader read once and hand every subscriber level with the feed the same bytes, which read back as the same events", async () => {
    const { job, append, end } = await runningJob();
    const subs = Array.from({ length: 3 }, () => streamJobEventBatches(t, job.id, 0));
    const backlog = await Promise.all(subs.map((s) => s.next()));
    const seen = backlog[0].value!.lastSeq;
    expect(backlog.every((b) => b.value!.lastSeq === seen)).toBe(true);

    await append(5, "shared");
    const live: EventBatch[] = (await Promise.all(subs.map((s) => s.next()))).map((r) => r.value!);
    expect(live[0].events.map((e) => e.seq)).toEqual(range(seen + 1, seen + 5));
    expect(live[1].bytes).toBe(live[0].bytes);
    expect(live[2].bytes).toBe(live[0].bytes);

    const read: ProgressEvent[] = [];
    const body = new ReadableStream<Uint8Array>({ start: (c) => (c.enqueue(live[0].bytes), c.close()) });
    for await (const m of readEventStream(body)) {
      expect(m.id).toBe(String(decodeEventMessage(m.data).seq));
      read.push(decodeEventMessage(m.data));
    }
    expect(read).toEqual(live[0].events);
    await end();
    await Promise.all(subs.map(async (s) => { for await (const _ of s); }));
  });

  it.skipIf(testDriver === "pglite")(
    "hand a runner's batch committed in this process to its subscribers without reading it back (the NOTIFY then finds nothing new), while another process reads it on the NOTIFY",
    async () => {
      const { org, component } = await orgWithComponent(t.db);
      const runner = await testRunner(t.db, org);
      await createJob(t.db, org.actor(), { componentId: component.id });
      const { access } = (await claim(t.db, runner))!;
      const other = await openDatabase({ url: t.url, migrate: false });
      const stop = new AbortController();
      try {
        const here = follower(streamJobEvents(t, access.jobId, 0, stop.signal));
        const there = follower(streamJobEvents(other, access.jobId, 0, stop.signal));
        const joined = (await readEventsAfter(t.db, access.jobId, 0)).at(-1)!.seq;
        await Promise.all([here.until(joined), there.until(joined)]);
        const before = jobFeedStats(t, access.jobId)!;
        const [readsBefore, pollsBefore] = [before.feedReads, before.polls];

        const events = [1, 2, 3].map((seq) => ({ seq, ts: new Date().toISOString(), operation: "init" as const, type: "log" as const, payload: { line: `handed ${seq}`, stream: "stdout" } }));
        await uploadEvents(t.db, access, { attemptId: access.attemptId, events });
        // Sent again (a runner's retry): nothing is stored or handed on twice.
        await uploadEvents(t.db, access, { attemptId: access.attemptId, events });
        // A server event goes by NOTIFY only, and NOTIFYs arrive in commit order: once it is here, the batch's NOTIFY was seen too.
        await t.db.transaction((tx) => appendEvents(tx, access.jobId, [{ operation: null, type: "log", payload: { line: "server" } }]));
        const stored = await readEventsAfter(t.db, access.jobId, 0);
        await Promise.all([here.until(stored.at(-1)!.seq), there.until(stored.at(-1)!.seq)]);

        expect(here.events).toEqual(stored);
        expect(there.events).toEqual(stored);
        const after = jobFeedStats(t, access.jobId)!;
        // One read here, for the server's event; the runner's batch came without one. (A safety poll reads too.)
        expect(after.feedReads - readsBefore - (after.polls - pollsBefore)).toBe(1);
        expect(jobFeedStats(other, access.jobId)!.feedReads).toBeGreaterThan(0);
      } finally {
        stop.abort();
        await other.close();
      }
    },
  );
});

/** Follows a stream, keeping every event; `until(seq)` resolves once it holds that seq. */
function follower(stream: AsyncGenerator<ProgressEvent>) {
  const events: ProgressEvent[] = [];
  const waiting = new Set<{ seq: number; resolve: () => void }>();
  void (async () => {
    for await (const e of stream) {
      events.push(e);
      for (const w of waiting) if (e.seq >= w.seq) (waiting.delete(w), w.resolve());
    }
  })();
  return {
    events,
    until: (seq: number) => ((events.at(-1)?.seq ?? 0) >= seq ? Promise.resolve() : new Promise<void>((resolve) => waiting.add({ seq, resolve }))),
  };
}
