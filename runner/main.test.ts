import { spawn } from "node:child_process";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StandInServer } from "./test/stand-in-server";
import { moduleFiles, tempDir } from "./test/helpers";

const MAIN = path.resolve(import.meta.dirname, "main.ts");

async function until(cond: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 25));
  }
}

// The real runner process against a STAND-IN for the server's runner routes.
describe("runner process", () => {
  let server: StandInServer;
  beforeEach(async () => void (server = await new StandInServer().start()));
  afterEach(() => server.stop());

  it("claims and runs jobs, logs structured lines on stderr, and stops cleanly on SIGTERM after the in-flight step", async () => {
    const root = await tempDir("planton-root-");
    const files = await moduleFiles("static-site");
    const connection = { name: "laptop", provider: "local", mode: "stored" as const, config: { root } };
    server.enqueue({ operation: "update", steps: ["init", "refresh", "preview", "apply"], variables: { site_name: "one" }, connection }, files);
    server.enqueue({ operation: "preview", steps: ["init", "refresh", "preview"], variables: { site_name: "two" }, connection, component: { id: "cmp_two", name: "two", kind: "StaticSite", environment: "dev" } }, files);
    const child = spawn(process.execPath, ["--import", "tsx", MAIN, "--url", server.url, "--capacity", "2", "--work-dir", await tempDir(), "--name", "test-runner", "--grace-seconds", "10"], {
      env: { ...process.env, PLANTON_RUNNER_TOKEN: "rnr_test" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    await until(() => server.attemptEnds.length === 2);
    expect(server.attemptEnds.map((a) => a.exitCode)).toEqual([0, 0]);
    expect(server.tokensSeen.has("Bearer rnr_test")).toBe(true);

    // A third job is in its refresh step when SIGTERM arrives: the step finishes, nothing else starts.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    server.onStepFinish = async (step) => {
      if (step === "refresh") await held;
    };
    const starts = server.stepStarts.length;
    server.enqueue({ operation: "update", steps: ["init", "refresh", "preview", "apply"], variables: { site_name: "three" }, connection }, files);
    await until(() => server.stepStarts.length === starts + 2);
    child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 200));
    release();
    expect(await exited).toBe(0);
    expect(server.stepStarts.slice(starts)).toEqual(["init", "refresh"]);
    expect(server.attemptEnds.at(-1)).toMatchObject({ exitCode: 143, reason: "runner stopping: ended before preview" });
    const lines = stderr.trim().split("\n").map((l) => JSON.parse(l) as { msg: string; runner?: string });
    expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(["runner started", "job claimed", "step finished", "attempt ended", "signal received", "runner stopped"]));
    expect(lines.find((l) => l.msg === "job claimed")!.runner).toBe("test-runner");
  });

  it("exits with a clear message when the server refuses the token", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", MAIN, "--url", server.url, "--token", "rnr_bad"], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    // The stand-in answers 401 to rnr_bad.
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(code).toBe(1);
    expect(stderr).toContain("refused the runner token (401): this runner token is not known.");
    expect(stderr).not.toContain("runner started");
  });
});
