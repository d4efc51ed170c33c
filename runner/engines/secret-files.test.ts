// Files that hold resolved secrets: the tofu adapter's variables file exists only while a command of
// the step runs, readable by the runner's user alone, and is gone after the step however it ended.
import { access, chmod, mkdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JobClient, RunnerClient } from "../client";
import { silentLogger } from "../log";
import { engineEnv } from "../job-run";
import { privateFolder, writePrivateFile } from "../private-files";
import { Redactor } from "../redact";
import { startRunnerConsole, type RunnerConsole } from "../test/console";
import { tempDir } from "../test/helpers";
import type { StepContext } from "./adapter";
import { TofuAdapter, VARIABLES_FILE } from "./tofu";

const SECRET = "s3cret-db-password";
const exists = (p: string) => access(p).then(() => true, () => false);

/** A stand-in `tofu` that writes, for each command, the variables file's mode and whether it holds the secret; `fail` makes it exit 1. */
async function recordingTofu(fail = false): Promise<{ bin: string; seen: () => Promise<string[]> }> {
  const bin = await tempDir("fake-bin-");
  const log = path.join(bin, "seen.log");
  const script = [
    "#!/bin/sh",
    `if [ -e ${VARIABLES_FILE} ]; then echo "$1 $(stat -c %a ${VARIABLES_FILE}) $(grep -c ${SECRET} ${VARIABLES_FILE})" >> ${log}; else echo "$1 none" >> ${log}; fi`,
    fail ? "exit 1" : "exit 0",
    "",
  ].join("\n");
  await writeFile(path.join(bin, "tofu"), script);
  await chmod(path.join(bin, "tofu"), 0o755);
  return { bin, seen: async () => (await readFile(log, "utf8").catch(() => "")).trim().split("\n").filter(Boolean) };
}

// The adapter stages the job's state through the runner API, so each step runs for a job claimed for real on the built console.
let c: RunnerConsole;
let runner: RunnerClient;
let claims = 0;
beforeAll(async () => {
  c = await startRunnerConsole({ env: { PLANTON_LEASE_SECONDS: "300" } });
  runner = (await c.newRunner("secret-files")).client;
}, 240_000);
afterAll(() => c?.close());

async function claimedJob(): Promise<JobClient> {
  const jobId = await c.queue(`secret-files-${++claims}`, "update");
  const claim = await c.claimNext(runner);
  expect(claim.job.id).toBe(jobId);
  return runner.job(jobId, claim.credential.token);
}

async function stepContext(bin: string, step: StepContext["step"]): Promise<StepContext> {
  const workDir = await tempDir();
  const moduleDir = path.join(workDir, "module");
  await mkdir(moduleDir);
  return {
    input: {
      jobId: "job_1",
      orgId: "org_1",
      component: { id: "cmp_1", name: "db", kind: "Database", environment: "dev" },
      operation: "refresh",
      steps: ["init", "refresh"],
      module: { name: "db", version: "1.0.0", provisioner: "tofu", source: "platform", files: {}, sha256: "" },
      variables: { password: "$secret/DB_PASSWORD" },
      connection: null,
      backend: { id: "sbk_1", name: "s3-main", kind: "s3", config: {} },
      policy: { manualStart: false, skipRefresh: false, previewBeforeApply: true, pauseBeforeApply: false, protectDeletes: false },
      parallelism: 10,
    },
    step,
    attemptId: "att_1",
    moduleDir,
    workDir,
    stateBackupDir: path.join(workDir, "state-backups"),
    variables: { password: SECRET },
    job: await claimedJob(),
    emit: () => {},
    redactor: new Redactor(),
    log: silentLogger,
    signal: new AbortController().signal,
    env: { PATH: [bin, "/usr/bin", "/bin"].join(path.delimiter) } as unknown as NodeJS.ProcessEnv,
  };
}

describe("resolved secret variables on disk", () => {
  it("the variables file is 0600 while the step's command runs and removed after the step", async () => {
    const tofu = await recordingTofu();
    const adapter = new TofuAdapter("tofu");
    const init = await stepContext(tofu.bin, "init");
    expect(await adapter.init(init)).toEqual({ ok: true });
    expect(await exists(path.join(init.moduleDir, VARIABLES_FILE))).toBe(false);
    const refresh = { ...init, step: "refresh" as const };
    expect(await adapter.refresh(refresh)).toEqual({ ok: true });
    // Each command of a step has them, 0600; none is left between steps.
    expect(await tofu.seen()).toEqual(["init 600 1", "apply 600 1", "output 600 1"]);
    expect(await exists(path.join(init.moduleDir, VARIABLES_FILE))).toBe(false);
  });

  it("is removed after a step that failed too", async () => {
    const tofu = await recordingTofu(true);
    const ctx = await stepContext(tofu.bin, "preview");
    const r = await new TofuAdapter("tofu").preview(ctx);
    expect(r).toMatchObject({ ok: false, reason: "tofu plan exited with code 1; see the log above for the engine's error." });
    expect(await tofu.seen()).toEqual(["plan 600 1"]);
    expect(await exists(path.join(ctx.moduleDir, VARIABLES_FILE))).toBe(false);
  });

  it("a private file is written 0600 and never through a link planted at its name", async () => {
    const dir = await tempDir();
    const file = path.join(dir, "state.json");
    await writeFile(file, "old", { mode: 0o644 });
    await writePrivateFile(file, "new");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const elsewhere = path.join(await tempDir(), "stolen.json");
    await symlink(elsewhere, path.join(dir, "planted.json"));
    await expect(writePrivateFile(path.join(dir, "planted.json"), SECRET)).rejects.toMatchObject({ code: "ELOOP" });
    expect(await exists(elsewhere)).toBe(false);
  });

  it("a workspace folder is made 0700, and a link in its place is refused", async () => {
    const base = await tempDir();
    const loose = path.join(base, "work");
    await mkdir(loose, { mode: 0o755 });
    await chmod(loose, 0o755);
    await privateFolder(loose);
    expect((await stat(loose)).mode & 0o777).toBe(0o700);
    await privateFolder(path.join(base, "new", "nested"));
    expect((await stat(path.join(base, "new", "nested"))).mode & 0o777).toBe(0o700);
    await symlink(await tempDir(), path.join(base, "linked"));
    await expect(privateFolder(path.join(base, "linked"))).rejects.toThrow(
      `The runner cannot use ${path.join(base, "linked")} for its workspaces: it is not a folder (a symbolic link or a file). Remove it, or start the runner with --work-dir set to a folder of its own.`,
    );
  });

  it("engine CLIs and modules get the runner's environment without its token", () => {
    const env = { PATH: "/usr/bin", PLANTON_RUNNER_TOKEN: "rnr_secret", PLANTON_RUNNER_NAME: "hosted-1" } as unknown as NodeJS.ProcessEnv;
    expect(engineEnv(env)).toEqual({ PATH: "/usr/bin", PLANTON_RUNNER_NAME: "hosted-1" });
  });
});
