// Planton-hosted runners: at server start, one runner record per process (its token rotated) and
// PLANTON_HOSTED_RUNNERS child processes (default 1) running runner/main.ts, restarted when they exit.
// The token goes in PLANTON_RUNNER_TOKEN, not on the command line, so `ps` does not show it. A hosted
// runner inherits only the allow-listed environment (lib/hosted-runner-env.ts), works in the data
// folder, and writes `local` connections' files under <data folder>/local-infra/<organization>.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { Database } from "@/db/client";
import { hostedRunnerEnv } from "@/lib/hosted-runner-env";
import { serverConfig } from "../../config";
import { ensureHostedRunner } from "./register-runner";

export interface HostedRunners {
  stop(): void;
}

export async function startHostedRunners(db: Database, opts: { serverUrl: string; count?: number; capacity?: number; log?: (m: string) => void }): Promise<HostedRunners> {
  const log = opts.log ?? ((m) => console.log(`[hosted-runners] ${m}`));
  const config = serverConfig();
  const count = opts.count ?? config.PLANTON_HOSTED_RUNNERS;
  const capacity = opts.capacity ?? config.PLANTON_HOSTED_RUNNER_CAPACITY;
  const entry = path.join(/*turbopackIgnore: true*/ process.cwd(), "runner", "main.ts");
  if (!count) return { stop() {} };
  if (!fs.existsSync(entry)) {
    log(`runner/main.ts is missing; no hosted runner started`);
    return { stop() {} };
  }
  const children = new Map<number, ChildProcess>();
  let stopping = false;
  const start = async (i: number, delayMs = 0) => {
    if (stopping) return;
    if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
    const { runner, token } = await ensureHostedRunner(db, `hosted-${i + 1}`, capacity);
    const workDir = path.join(config.PLANTON_DATA_DIR, "work", runner.name);
    fs.mkdirSync(workDir, { recursive: true, mode: 0o700 });
    const child = spawn(process.execPath, ["--import", "tsx", entry, "--url", opts.serverUrl, "--capacity", String(capacity), "--work-dir", workDir], {
      cwd: process.cwd(),
      env: hostedRunnerEnv(process.env, {
        PLANTON_RUNNER_TOKEN: token,
        PLANTON_RUNNER_NAME: runner.name,
        PLANTON_RUNNER_PARENT_PID: String(process.pid),
        PLANTON_RUNNER_LOCAL_BASE: localInfraBase(config.PLANTON_DATA_DIR),
        PLANTON_RUNNER_LOCAL_ROOTS: config.PLANTON_LOCAL_ROOTS.join(":"),
      }) as NodeJS.ProcessEnv,
      stdio: ["ignore", "inherit", "inherit"],
    });
    children.set(i, child);
    const startedAt = Date.now();
    child.on("exit", (code, signal) => {
      children.delete(i);
      if (stopping) return;
      // Back off when it dies at once, so a broken runner does not spin.
      const again = Date.now() - startedAt < 10_000 ? 5_000 : 500;
      log(`${runner.name} exited (${signal ?? code}); restarting in ${again} ms`);
      start(i, again).catch((e) => log(`restart of ${runner.name} failed: ${(e as Error).message}`));
    });
  };
  for (let i = 0; i < count; i++) await start(i);
  log(`started ${count} hosted runner(s) against ${opts.serverUrl}`);
  const stop = () => {
    stopping = true;
    for (const c of children.values()) c.kill("SIGTERM");
  };
  process.once("exit", stop);
  return { stop };
}

/** Where hosted runners keep `local` connections' files: one folder per organization under it. */
export const localInfraBase = (dataDir: string) => path.join(dataDir, "local-infra");
