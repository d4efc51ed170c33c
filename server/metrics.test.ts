import { Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { CountedHistogram, metrics, observeDeliveries, type EmittedTimes } from "./metrics";

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1];
/** What the registry prints, sum line apart (a weighted sum and a sum of its terms differ in the last digits). */
const printed = async (r: Registry) => {
  const lines = (await r.metrics()).trim().split("\n");
  return { lines: lines.filter((l) => !/_sum /.test(l)), sum: Number(lines.find((l) => /_sum /.test(l))!.split(" ")[1]) };
};
const afterThisTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const batchOf = (emittedAt: number[]): EmittedTimes => ({ emittedAt, earliestEmittedAt: Math.min(...emittedAt) });

describe("CountedHistogram", () => {
  it("prints what prom-client's Histogram prints for the same observations, one observation standing for many", async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const counted = new CountedHistogram({ name: "lag_seconds", help: "lag", buckets: BUCKETS, registers: [ours] });
    const reference = new Histogram({ name: "lag_seconds", help: "lag", buckets: BUCKETS, registers: [theirs] });
    // On a bound, between bounds, above every bound, zero; each several times.
    const observations: [number, number][] = [[0.005, 3], [0.007, 100], [0.05, 1], [0.2, 7], [0, 2]];
    for (const [value, times] of observations) {
      counted.observe(value, times);
      for (let i = 0; i < times; i++) reference.observe(value);
    }
    const [a, b] = [await printed(ours), await printed(theirs)];
    expect(a.lines).toEqual(b.lines);
    expect(a.lines).toContain('lag_seconds_bucket{le="0.01"} 105');
    expect(a.sum).toBeCloseTo(b.sum, 9);
    counted.observe(Number.NaN, 5);
    counted.observe(0.001, 0);
    expect((await printed(ours)).lines).toEqual(b.lines);
    counted.reset();
    expect((await printed(ours)).lines).toContain("lag_seconds_count 0");
  });
});

describe("observeDeliveries", () => {
  it("counts every event for every viewer once, and from a stream's opening on only, observing a batch once for all the viewers written it in the same millisecond", async () => {
    const lag = metrics().eventLag;
    const count = async () => Number((await lag.get()).values.find((v) => v.metricName === "planton_event_delivery_lag_seconds_count")!.value);
    await afterThisTurn();
    const before = await count();
    const t = Date.now();
    const burst = batchOf([t - 40, t - 30, t - 20]);
    // A hundred viewers opened before the burst, written it in two milliseconds; one opened in its middle; one written a batch of its own.
    for (let i = 0; i < 100; i++) observeDeliveries(burst, t - 1000, i < 60 ? t : t + 1);
    observeDeliveries(burst, t - 25, t + 1);
    observeDeliveries(batchOf([t - 5]), t - 1000, t);
    // A viewer's backlog (all before its stream opened) is not lag.
    observeDeliveries(burst, t, t + 2);
    expect(await count()).toBe(before);
    await afterThisTurn();
    expect(await count()).toBe(before + 100 * 3 + 1 + 1);
  });
});
