import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { JobClient } from "./client";
import { EventUploader } from "./events";
import { Redactor } from "./redact";
import { StandInServer } from "./test/stand-in-server";

describe("event uploader (against a stand-in for the server's events route)", () => {
  let server: StandInServer;
  let job: JobClient;
  beforeEach(async () => {
    server = await new StandInServer().start();
    job = new JobClient(server.url, "job_1", "jcr_test", { attempts: 4, baseMs: 5, maxMs: 20 });
  });
  afterEach(() => server.stop());

  it("numbers events from 1 and sends up to 100 in one batch", async () => {
    const up = new EventUploader({ send: (e) => job.uploadEvents("att_1", e) });
    for (let i = 0; i < 250; i++) up.emit("apply", { type: "log", payload: { line: `line ${i}` } });
    await up.flush();
    expect(server.eventPosts.map((b) => b.length)).toEqual([100, 100, 50]);
    expect(server.eventsInOrder().map((e) => e.seq)).toEqual(Array.from({ length: 250 }, (_, i) => i + 1));
    expect(server.eventsInOrder()[0]).toMatchObject({ seq: 1, operation: "apply", type: "log", payload: { line: "line 0" } });
  });

  it("flushes a small batch by itself after about 200 ms", async () => {
    const up = new EventUploader({ send: (e) => job.uploadEvents("att_1", e) });
    up.emit("init", { type: "log", payload: { line: "one" } });
    up.emit("init", { type: "log", payload: { line: "two" } });
    expect(server.eventPosts).toHaveLength(0);
    await new Promise((r) => setTimeout(r, 400));
    expect(server.eventPosts.map((b) => b.map((e) => e.seq))).toEqual([[1, 2]]);
  });

  it("retries a batch whose answer was lost with the same seq numbers, so the server keeps each event once", async () => {
    // The stand-in stores the first batch but answers 503, as if the response was lost.
    server.onEvents = (_batch, n) => (n === 1 ? { status: 503, store: true } : undefined);
    const up = new EventUploader({ send: (e) => job.uploadEvents("att_1", e) });
    for (let i = 0; i < 5; i++) up.emit("refresh", { type: "log", payload: { line: `l${i}` } });
    await up.flush();
    expect(server.eventPosts).toHaveLength(2);
    expect(server.eventPosts[1]!.map((e) => e.seq)).toEqual(server.eventPosts[0]!.map((e) => e.seq));
    expect(server.eventPosts[1]).toEqual(server.eventPosts[0]);
    expect(server.eventsInOrder().map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
  });

  it("keeps events queued when the server cannot be reached, and sends them once it can", async () => {
    let down = true;
    server.onEvents = () => (down ? { status: 500, store: false } : undefined);
    const up = new EventUploader({ send: (e) => job.uploadEvents("att_1", e) });
    up.emit("apply", { type: "log", payload: { line: "a" } });
    await expect(up.flush()).rejects.toThrow(/500/);
    expect(up.queued).toBe(1);
    down = false;
    up.emit("apply", { type: "log", payload: { line: "b" } });
    await up.flush();
    expect(server.eventsInOrder().map((e) => [e.seq, e.payload.line])).toEqual([
      [1, "a"],
      [2, "b"],
    ]);
  });

  it("never retries a 4xx answer", async () => {
    server.onEvents = () => ({ status: 409, store: false });
    const up = new EventUploader({ send: (e) => job.uploadEvents("att_1", e) });
    up.emit(null, { type: "log", payload: { line: "x" } });
    await expect(up.flush()).rejects.toThrow(/409/);
    expect(server.eventPosts).toHaveLength(1);
  });

  it("masks known secret values in every payload before upload", async () => {
    const r = new Redactor();
    r.add("hunter2-very-secret");
    const up = new EventUploader({ send: (e) => job.uploadEvents("att_1", e), redact: (p) => r.value(p) });
    up.emit("apply", { type: "log", payload: { line: "password is hunter2-very-secret!" } });
    up.emit("apply", { type: "diagnostic", payload: { severity: "error", summary: "x", detail: { nested: ["hunter2-very-secret"] } } });
    await up.flush();
    expect(JSON.stringify([...server.events.values()])).not.toContain("hunter2");
    expect(server.eventsInOrder()[0]!.payload.line).toBe("password is (sensitive value)!");
  });
});
