// Planton-hosted runners: at server start, PLANTON_HOSTED_RUNNERS child processes (default 1) running
// runner/main.ts, each with a runner record of its own (its token rotated), restarted when they exit.
// Replicas started alike share the names: each name `hosted-<n>` is held by one console process at a time
// (a session-level advisory lock on a connection of its own), and a process takes the lowest names nobody
// holds. So two replicas with PLANTON_HOSTED_RUNNERS=1 run hosted-1 and hosted-2, neither rotates the
// other's token, and a replica started again takes back the lowest free name. On PGlite (one process) the
// names are always hosted-1…hosted-N.
// The token goes in PLANTON_RUNNER_TOKEN, not on the command line, so `ps` does not show it. A hosted
// runner inherits only the allow-listed environment (lib/hosted-runner-env.ts), works in the data
// folder, and writes `local` connections' files under <data folder>/local-infra/<organization>.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { HOSTED_RUNNER_NAME_LOCK_SPACE, keyInSpace } from "@/db/advisory-locks";
import { handleOf, type Database, type DatabaseHandle, type SessionLock } from "@/db/client";
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
  const handle = handleOf(db);
  const children = new Map<number, ChildProcess>();
  // The name each of this process's runners holds, by index.
  const names = new Map<number, HostedName>();
  let stopping = false;
  const start = async (i: number, delayMs = 0) => {
    if (stopping) return;
    if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
    let name = names.get(i);
    // A lock whose connection broke may have been taken by another process since (which then rotated the
    // token, so this runner was refused): let go of it and take a name again, the same one when it is free.
    if (name && !(await name.lock.held().catch(() => false))) {
      await name.lock.release().catch(() => {});
      names.delete(i);
      name = undefined;
    }
    if (!name) {
      name = await takeHostedName(handle, new Set([...names.values()].map((h) => h.n)));
      names.set(i, name);
    }
    if (stopping) return;
    const { runner, token } = await ensureHostedRunner(db, `hosted-${name.n}`, capacity);
    const workDir = path.join(config.PLANTON_DATA_DIR, "work", runner.name);
    fs.mkdirSync(workDir, { recursive: true, mode: 0o700 });
    const child = spawn(process.execPath, ["--import", "tsx", entry, "--url", opts.serverUrl, "--capacity", String(capacity), "--nice", String(config.PLANTON_HOSTED_RUNNER_NICE), "--work-dir", workDir], {
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
  log(`started ${count} hosted runner(s) (${[...names.values()].map((h) => `hosted-${h.n}`).join(", ")}) against ${opts.serverUrl}`);
  const stop = () => {
    if (stopping) return;
    stopping = true;
    for (const c of children.values()) c.kill("SIGTERM");
    for (const h of names.values()) void h.lock.release().catch(() => {});
  };
  process.once("exit", stop);
  return { stop };
}

/** Where hosted runners keep `local` connections' files: one folder per organization under it. */
export const localInfraBase = (dataDir: string) => path.join(dataDir, "local-infra");

interface HostedName {
  n: number;
  lock: SessionLock;
}

/** More names than any set of replicas runs (64 runners each at most); past it a start is refused, saying why. */
const MOST_HOSTED_NAMES = 1_000;

/** Takes the lowest name `hosted-<n>` that no console process holds (this one's own, `mine`, skipped). */
async function takeHostedName(handle: DatabaseHandle, mine: Set<number>): Promise<HostedName> {
  for (let n = 1; n <= MOST_HOSTED_NAMES; n++) {
    if (mine.has(n)) continue;
    const lock = handle.sessionLock(keyInSpace(HOSTED_RUNNER_NAME_LOCK_SPACE, n));
    if (await lock.hold()) return { n, lock };
    await lock.release();
  }
  throw new Error(`every hosted runner name up to hosted-${MOST_HOSTED_NAMES} is held by another console process; start this one with PLANTON_HOSTED_RUNNERS=0`);
}
