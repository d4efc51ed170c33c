import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { boundedSignal, sleep, untilFirstOrAborted } from "./abort";

// A runner's stop signal outlives every wait on it: each wait must take its listener back, however it ends.
const listenersOn = (signal: AbortSignal) => getEventListeners(signal, "abort").length;

describe("waiting on a long-lived stop signal", () => {
  it("sleep ends at its time or at the abort, and leaves no listener either way", async () => {
    const stop = new AbortController();
    for (let i = 0; i < 20; i++) await sleep(1, stop.signal);
    expect(listenersOn(stop.signal)).toBe(0);

    const long = sleep(60_000, stop.signal);
    expect(listenersOn(stop.signal)).toBe(1);
    stop.abort();
    await long;
    expect(listenersOn(stop.signal)).toBe(0);
    await sleep(60_000, stop.signal); // already aborted: at once
  });

  it("untilFirstOrAborted ends with the first piece of work (a rejection too) or the abort, leaving no listener", async () => {
    const stop = new AbortController();
    for (let i = 0; i < 20; i++) await untilFirstOrAborted([sleep(1), new Promise(() => {})], stop.signal);
    await untilFirstOrAborted([Promise.reject(new Error("a job run failed"))], stop.signal);
    expect(listenersOn(stop.signal)).toBe(0);

    const waiting = untilFirstOrAborted([new Promise(() => {})], stop.signal);
    stop.abort();
    await waiting;
    expect(listenersOn(stop.signal)).toBe(0);
    await untilFirstOrAborted([new Promise(() => {})], stop.signal);
  });

  it("a request's bounded signal aborts with its parent's reason or at its timeout, and done() leaves nothing on the parent", async () => {
    const stop = new AbortController();
    for (let i = 0; i < 20; i++) boundedSignal(stop.signal, 60_000).done();
    expect(listenersOn(stop.signal)).toBe(0);

    const a = boundedSignal(stop.signal, 60_000);
    const timed = boundedSignal(stop.signal, 5);
    await new Promise<void>((resolve) => timed.signal.addEventListener("abort", () => resolve(), { once: true }));
    expect((timed.signal.reason as DOMException).name).toBe("TimeoutError");
    timed.done();
    expect(a.signal.aborted).toBe(false);
    stop.abort(new Error("runner stopping"));
    expect(a.signal.aborted).toBe(true);
    expect((a.signal.reason as Error).message).toBe("runner stopping");
    a.done();
    expect(listenersOn(stop.signal)).toBe(0);

    const none = boundedSignal(undefined, 60_000);
    expect(none.signal.aborted).toBe(false);
    none.done();
    const late = boundedSignal(stop.signal, 60_000);
    expect(late.signal.aborted).toBe(true); // parent already aborted
    late.done();
  });
});
