import { spawn } from "node:child_process";
import { chmod, readdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { eq } from "drizzle-orm";
import { runners } from "../db/schema";
import { ENGINE_VERSION } from "../engine/index";
import { startRunnerConsole, type RunnerConsole } from "./test/console";
import { tempDir } from "./test/helpers";

const MAIN = path.resolve(import.meta.dirname, "main.ts");

// The real runner process against the built console.
describe("runner process", () => {
  let c: RunnerConsole;
  beforeAll(async () => {
    c = await startRunnerConsole({ env: { PLANTON_LEASE_SECONDS: "60" } });
    await c.registerKind("TestSlow", "slow", [{ name: "name", type: "string", required: true, description: "folder" }]);
  }, 240_000);
  afterAll(() => c?.close());

  const spawnRunner = (args: string[], env: Record<string, string> = {}) => {
    const child = spawn(process.execPath, ["--import", "tsx", MAIN, "--url", c.server.url, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    return { child, exited, stderr: () => stderr };
  };
  const status = async (id: string) => (await c.job(id)).status;

  it("claims and runs jobs, logs structured lines on stderr, and stops cleanly on SIGTERM after the in-flight step", async () => {
    const { id: runnerId, token } = await c.newRunner("test-runner");
    const one = await c.queue("one", "update", { site_name: "one" });
    const two = await c.queue("two", "preview", { site_name: "two" });
    await c.component("held", "dev", "TestSlow", { name: "held" });
    const held = await c.queue("held", "update");
    // A stand-in of the third-party `tofu` binary on PATH: the runner reports it among its engines.
    const bin = await tempDir();
    await writeFile(path.join(bin, "tofu"), `#!/bin/sh\n[ "$*" = "version -json" ] && echo '{"terraform_version":"1.8.5"}'\n`);
    await chmod(path.join(bin, "tofu"), 0o755);
    const runner = spawnRunner(["--capacity", "2", "--work-dir", await tempDir(), "--name", "test-runner", "--grace-seconds", "10"], {
      ...c.gates.env,
      PLANTON_RUNNER_TOKEN: token,
      PATH: `${bin}${path.delimiter}${process.env.PATH}`,
    });
    // A job completes with its last step; its attempt ends just after.
    const ended = async () => (await Promise.all([one, two, held].map((id) => c.attempts(id)))).map((a) => a.map((x) => [x.runnerId, x.exitCode]));
    await expect.poll(ended, { timeout: 60_000 }).toEqual([[[runnerId, 0]], [[runnerId, 0]], [[runnerId, 0]]]);
    expect(await Promise.all([one, two, held].map(status))).toEqual(["completed", "completed", "completed"]);

    // A fourth job is in its refresh step when SIGTERM arrives: the step finishes, nothing else starts.
    c.gates.hold("held.refresh");
    const third = await c.queue("held", "update");
    await c.gates.held("held.refresh");
    runner.child.kill("SIGTERM");
    await vi.waitFor(() => expect(runner.stderr()).toContain('"msg":"signal received"'), { timeout: 15_000 });
    c.gates.release("held.refresh");
    expect(await runner.exited).toBe(0);
    expect((await c.steps(third)).filter((s) => s.startedAt).map((s) => [s.step, s.result])).toEqual([
      ["init", "succeeded"],
      ["refresh", "succeeded"],
    ]);
    expect((await c.attempts(third)).at(-1)).toMatchObject({ exitCode: 143, reason: "runner stopping: ended before preview" });
    const lines = runner.stderr().trim().split("\n").map((l) => JSON.parse(l) as { msg: string; runner?: string; engines?: Record<string, string> });
    expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(["runner started", "job claimed", "step finished", "attempt ended", "signal received", "runner stopped"]));
    expect(lines.find((l) => l.msg === "job claimed")!.runner).toBe("test-runner");
    // The engines it found are logged once, when it starts.
    expect(lines.filter((l) => l.engines).map((l) => [l.msg, l.engines])).toEqual([["runner started", expect.objectContaining({ builtin: ENGINE_VERSION, tofu: "1.8.5" })]]);
    // And sent with its claims: the server keeps them on the runner's record.
    const [record] = await c.t.db.select({ engines: runners.engines }).from(runners).where(eq(runners.id, runnerId));
    expect(record!.engines).toMatchObject({ builtin: ENGINE_VERSION, tofu: "1.8.5" });
  });

  it("exits with a clear message when the server refuses the token", async () => {
    const runner = spawnRunner(["--token", "rnr_bad"]);
    expect(await runner.exited).toBe(1);
    expect(runner.stderr()).toContain("refused the runner token (401): this runner token is not known (it may have been rotated, or the runner removed).");
    expect(runner.stderr()).not.toContain("runner started");
  });

  it("runs, and starts its engines, at the CPU priority --nice asks for: every thread of the process", async () => {
    const { token } = await c.newRunner("nice-runner");
    const runner = spawnRunner(["--nice", "7", "--work-dir", await tempDir(), "--name", "nice-runner"], { PLANTON_RUNNER_TOKEN: token });
    try {
      await vi.waitFor(() => expect(runner.stderr()).toContain('"msg":"runner started"'), { timeout: 30_000 });
      const started = runner.stderr().split("\n").find((l) => l.includes('"msg":"runner started"'))!;
      expect(JSON.parse(started)).toMatchObject({ nice: 7 });
      const pid = runner.child.pid!;
      const threads = (await readdir(`/proc/${pid}/task`)).map(Number);
      expect(threads.length).toBeGreaterThan(1);
      expect(threads.map((tid) => os.getPriority(tid))).toEqual(threads.map(() => 7));
    } finally {
      runner.child.kill("SIGTERM");
      await runner.exited;
    }
  });

  it("refuses a --nice outside 0–19 with the range, and starts nothing", async () => {
    const runner = spawnRunner(["--nice", "20", "--token", "rnr_unused"]);
    // Commander's refusal of an option's value (exit 1), as for --capacity.
    expect(await runner.exited).toBe(1);
    expect(runner.stderr()).toContain("must be a whole number from 0 to 19");
    const env = spawnRunner(["--token", "rnr_unused"], { PLANTON_RUNNER_NICE: "-5" });
    expect(await env.exited).toBe(2);
    expect(env.stderr()).toContain("PLANTON_RUNNER_NICE");
  });
});
