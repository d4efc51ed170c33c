import { describe, expect, it, vi } from "vitest";
import { createTimeProvider, parseDuration } from "./time";

describe("time_sleep", () => {
  it("reads durations the way the time provider writes them, and refuses others with the fix", () => {
    expect(parseDuration("a", "30s")).toBe(30_000);
    expect(parseDuration("a", "1m30s")).toBe(90_000);
    expect(parseDuration("a", "250ms")).toBe(250);
    expect(parseDuration("a", null)).toBe(0);
    expect(() => parseDuration("time_sleep.wait", "soon")).toThrow('time_sleep.wait: "soon" is not a duration; write it like 30s, 1m30s or 500ms');
  });

  it("waits on create and not on an update in place", async () => {
    vi.useFakeTimers();
    try {
      const p = createTimeProvider();
      let created = false;
      const create = p.apply({ address: "time_sleep.w", type: "time_sleep", prior: null, planned: { create_duration: "200ms", destroy_duration: null, triggers: null, id: null } }).then((r) => ((created = true), r));
      await vi.advanceTimersByTimeAsync(199);
      expect(created).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      const { state } = await create;
      // An update in place resolves with no timer to run.
      await p.apply({ address: "time_sleep.w", type: "time_sleep", prior: state, planned: { ...state!, destroy_duration: "1s" } });
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
