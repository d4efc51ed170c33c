import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { UploadedEvent } from "../lib/runner-protocol";
import { JobClient, type RunnerClient } from "./client";
import { EVENTS_PER_UPLOAD, EventUploader } from "./events";
import { Redactor } from "./redact";
import { startRunnerConsole, type RunnerConsole } from "./test/console";

describe("event uploader: when it sends", () => {
  /** A send that records each batch and answers only when the test says so. */
  function heldSend() {
    const batches: number[][] = [];
    const answers: (() => void)[] = [];
    let arrived: (() => void) | undefined;
    const send = (events: UploadedEvent[]) => {
      batches.push(events.map((e) => e.seq));
      arrived?.();
      return new Promise<void>((resolve) => answers.push(resolve));
    };
    /** Resolves once `n` batches have been sent. */
    const sent = (n: number) => new Promise<void>((resolve) => (batches.length >= n ? resolve() : (arrived = () => batches.length >= n && resolve())));
    return { batches, send, sent, answer: (i: number) => answers[i]!() };
  }

  it("sends the first event at once, with no timer, and puts the events that arrive during an upload in the next one", async () => {
    vi.useFakeTimers();
    try {
      const s = heldSend();
      const up = new EventUploader({ send: s.send });
      up.emit("apply", { type: "log", payload: { line: "one" } });
      // No clock moves: the upload starts on its own.
      await s.sent(1);
      expect(s.batches).toEqual([[1]]);
      up.emit("apply", { type: "log", payload: { line: "two" } });
      up.emit("apply", { type: "log", payload: { line: "three" } });
      up.emit("apply", { type: "log", payload: { line: "four" } });
      expect(s.batches).toEqual([[1]]);
      s.answer(0);
      await s.sent(2);
      expect(s.batches).toEqual([[1], [2, 3, 4]]);
      s.answer(1);
      await up.flush();
      expect(up.queued).toBe(0);
      expect(s.batches).toEqual([[1], [2, 3, 4]]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("sends the events emitted in one go together, up to its batch size", async () => {
    const sent: number[][] = [];
    const up = new EventUploader({ send: async (e) => void sent.push(e.map((x) => x.seq)), maxBatch: 3 });
    for (let i = 0; i < 7; i++) up.emit(null, { type: "log", payload: { line: `l${i}` } });
    await up.flush();
    expect(sent).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
  });
});

/**
 * Between the uploader and the built console: it forwards every call and records the events batches,
 * and can lose the console's answer or answer as a gateway whose upstream is down.
 */
class FlakyLink {
  url = "";
  readonly eventPosts: UploadedEvent[][] = [];
  fault?: (n: number) => "lose_answer" | "upstream_down" | void;
  private readonly server = http.createServer((req, res) => void this.forward(req, res));
  constructor(private readonly upstream: string) {}

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async forward(req: http.IncomingMessage, res: http.ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const ch of req) chunks.push(ch as Buffer);
    const body = Buffer.concat(chunks);
    const fault = req.url!.endsWith("/events") ? (this.eventPosts.push(JSON.parse(body.toString()).events), this.fault?.(this.eventPosts.length)) : undefined;
    if (fault === "upstream_down") return void res.writeHead(502).end("Bad Gateway");
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !["host", "connection", "content-length"].includes(k))) as Record<string, string>;
    const answer = await fetch(this.upstream + req.url, { method: req.method, headers, body: body.length ? body : undefined });
    const bytes = Buffer.from(await answer.arrayBuffer());
    if (fault === "lose_answer") return void res.writeHead(503).end("Service Unavailable");
    res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/octet-stream" }).end(bytes);
  }
}

describe("event uploader, against the real server's events route", () => {
  let c: RunnerConsole;
  let runner: RunnerClient;
  let link: FlakyLink;
  let n = 0;
  beforeAll(async () => {
    c = await startRunnerConsole({ env: { PLANTON_LEASE_SECONDS: "300" } });
    runner = (await c.newRunner("events")).client;
  }, 240_000);
  afterAll(() => c?.close());
  afterEach(() => link.stop());

  /** A claimed job, its credential talking to the console through a fresh link. */
  async function claimed() {
    const jobId = await c.queue(`events-${++n}`, "refresh");
    const claim = await c.claimNext(runner);
    expect(claim.job.id).toBe(jobId);
    link = await new FlakyLink(c.server.url).start();
    const job = new JobClient(link.url, jobId, claim.credential.token, { attempts: 4, baseMs: 5, maxMs: 20 });
    // The job's own status events are the server's; the rest are this uploader's, in the job's gap-free order.
    const events = async () => (await c.events(jobId)).filter((e) => e.type !== "job_status" && e.type !== "operation_status");
    return { jobId, attemptId: claim.attemptId, job, events };
  }

  it(`numbers events from 1 and sends up to ${EVENTS_PER_UPLOAD} in one batch`, async () => {
    const { job, attemptId, events } = await claimed();
    const up = new EventUploader({ send: (e) => job.uploadEvents(attemptId, e) });
    const n = EVENTS_PER_UPLOAD * 2 + 50;
    for (let i = 0; i < n; i++) up.emit("apply", { type: "log", payload: { line: `line ${i}` } });
    await up.flush();
    expect(link.eventPosts.map((b) => b.length)).toEqual([EVENTS_PER_UPLOAD, EVENTS_PER_UPLOAD, 50]);
    expect(link.eventPosts.flat().map((e) => e.seq)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    const stored = await events();
    expect(stored.map((e) => e.payload.line)).toEqual(Array.from({ length: n }, (_, i) => `line ${i}`));
    expect(stored[0]).toMatchObject({ operation: "apply", type: "log", payload: { line: "line 0" } });
  });

  it("retries a batch whose answer was lost with the same seq numbers, so the server keeps each event once", async () => {
    const { job, attemptId, events } = await claimed();
    // The console stores the first batch, and its answer is lost on the way back.
    link.fault = (k) => (k === 1 ? "lose_answer" : undefined);
    const up = new EventUploader({ send: (e) => job.uploadEvents(attemptId, e) });
    for (let i = 0; i < 5; i++) up.emit("refresh", { type: "log", payload: { line: `l${i}` } });
    await up.flush();
    expect(link.eventPosts).toHaveLength(2);
    expect(link.eventPosts[1]!.map((e) => e.seq)).toEqual(link.eventPosts[0]!.map((e) => e.seq));
    expect(link.eventPosts[1]).toEqual(link.eventPosts[0]);
    expect(link.eventPosts[0]!.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect((await events()).map((e) => e.payload.line)).toEqual(["l0", "l1", "l2", "l3", "l4"]);
  });

  it("keeps events queued when the server cannot be reached, and sends them once it can", async () => {
    const { job, attemptId, events } = await claimed();
    let down = true;
    link.fault = () => (down ? "upstream_down" : undefined);
    const up = new EventUploader({ send: (e) => job.uploadEvents(attemptId, e) });
    up.emit("apply", { type: "log", payload: { line: "a" } });
    await expect(up.flush()).rejects.toThrow(/502/);
    expect(up.queued).toBe(1);
    down = false;
    up.emit("apply", { type: "log", payload: { line: "b" } });
    await up.flush();
    expect(link.eventPosts.at(-1)!.map((e) => [e.seq, e.payload.line])).toEqual([
      [1, "a"],
      [2, "b"],
    ]);
    expect((await events()).map((e) => e.payload.line)).toEqual(["a", "b"]);
  });

  it("never retries a 4xx answer", async () => {
    const { job, events } = await claimed();
    // An attempt id the credential is not for: the console refuses it.
    const up = new EventUploader({ send: (e) => job.uploadEvents("att_not_this_one", e) });
    up.emit(null, { type: "log", payload: { line: "x" } });
    await expect(up.flush()).rejects.toThrow(/403: Nothing was done: this credential is for attempt/);
    expect(link.eventPosts).toHaveLength(1);
    expect(await events()).toEqual([]);
  });

  it("masks known secret values in every payload before upload", async () => {
    const { job, attemptId, events } = await claimed();
    const r = new Redactor();
    r.add("hunter2-very-secret");
    const up = new EventUploader({ send: (e) => job.uploadEvents(attemptId, e), redact: (p) => r.value(p) });
    up.emit("apply", { type: "log", payload: { line: "password is hunter2-very-secret!" } });
    up.emit("apply", { type: "diagnostic", payload: { severity: "error", summary: "x", detail: { nested: ["hunter2-very-secret"] } } });
    await up.flush();
    const stored = await events();
    expect(stored).toHaveLength(2);
    expect(JSON.stringify(stored)).not.toContain("hunter2");
    expect(stored[0]!.payload.line).toBe("password is (sensitive value)!");
  });
});
