import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ClaimLoop } from "./claim-loop";
import type { RunnerClient } from "./client";
import { createLogger } from "./log";
import { startRunnerConsole, type RunnerConsole } from "./test/console";
import { tempDir } from "./test/helpers";

// The claim loop in this process against the built console; the slow module's test gate holds an
// apply until the test lets it through.
describe("claim loop", () => {
  let c: RunnerConsole;
  let runner: RunnerClient;
  beforeAll(async () => {
    c = await startRunnerConsole({ env: { PLANTON_LEASE_SECONDS: "60" } });
    runner = (await c.newRunner("claim-loop")).client;
    await c.registerKind("TestSlow", "slow", [{ name: "name", type: "string", required: true, description: "folder" }]);
  }, 240_000);
  afterAll(() => c?.close());

  const slowJob = async (name: string) => {
    await c.component(name, "dev", "TestSlow", { name });
    return (await c.run(name, "update")).id;
  };
  const loopOf = async (capacity: number, log = createLogger({}, () => {})) =>
    new ClaimLoop({ runner, capacity, workRoot: await tempDir(), waitSeconds: 2, log, job: { env: { ...process.env, ...c.gates.env } } });

  it("runs at most `capacity` jobs at once and takes the next when one ends", async () => {
    const names = ["cap-a", "cap-b", "cap-c"];
    for (const n of names) c.gates.hold(n);
    const ids: string[] = [];
    for (const n of names) ids.push(await slowJob(n));
    const held = new Set<string>();
    for (const n of names) void c.gates.held(n).then(() => held.add(n));
    const loop = await loopOf(2);
    void loop.start();

    // Two applies wait at their gates; the third job is not claimed while both run.
    await vi.waitFor(() => expect([...held].sort()).toEqual(["cap-a", "cap-b"]), { timeout: 30_000 });
    expect(loop.activeJobs).toBe(2);
    expect((await c.job(ids[2]!)).status).toBe("queued");
    // One ends: the third is taken.
    c.gates.release("cap-a");
    await vi.waitFor(() => expect(held.has("cap-c")).toBe(true), { timeout: 30_000 });
    expect((await c.job(ids[0]!)).status).toBe("completed");
    c.gates.release("cap-b");
    c.gates.release("cap-c");
    await expect.poll(async () => Promise.all(ids.map(async (id) => (await c.job(id)).status)), { timeout: 30_000 }).toEqual(["completed", "completed", "completed"]);
    await loop.stop(1000);
    expect(await Promise.all(ids.map(async (id) => (await c.attempts(id)).map((a) => a.exitCode)))).toEqual([[0], [0], [0]]);
  });

  it("when the grace period runs out mid-apply, the in-flight resource finishes, nothing new starts, state is saved and the attempt ends", async () => {
    c.gates.hold("grace");
    const jobId = await slowJob("grace");
    const lines: string[] = [];
    const loop = await loopOf(1, createLogger({}, (l) => lines.push(JSON.parse(l).msg)));
    void loop.start();
    await c.gates.held("grace");
    const stopped = loop.stop(100);
    await vi.waitFor(() => expect(lines).toContain("grace period over: telling in-flight steps to stop"), { timeout: 15_000 });
    // The gate is the resource in flight: it finishes once let through; the file after it never starts.
    c.gates.release("grace");
    await stopped;
    const attempts = await c.attempts(jobId);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]!.endedAt).not.toBeNull();
    expect((await c.steps(jobId)).at(-1)).toMatchObject({ step: "apply", result: "failed", reason: expect.stringContaining("1 resource(s) were not started; state was saved") });
    const { state, lock } = await c.state("grace");
    expect(state!.resources.map((r) => r.type)).toEqual(["local_file", "plantontest_gate"]);
    expect(lock).toBeNull();
  });
});
