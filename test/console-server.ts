// Starts the built console (`next start`) as its own process against a test database, the way it
// runs in production, for tests that need the real HTTP surface, hosted runners and the scheduler.
// Readiness is a signal, not a poll: scripts/serve.mjs prints "Serving on" once it listens, and one health request
// then answers as soon as the console has migrated and seeded its database.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort } from "./postgres-cluster";

const root = path.resolve(import.meta.dirname, "..");

export interface ConsoleServer {
  url: string;
  dataDir: string;
  /** The console's process (a new one after `restart`). */
  process: ChildProcess;
  output: () => string;
  /** Resolves with the match once the console's output (stdout and stderr) matches `pattern`. */
  waitForOutput: (pattern: RegExp, what: string) => Promise<RegExpMatchArray>;
  stop: () => Promise<void>;
  /** Stops the console (SIGTERM) and starts it again on the same port, database and data folder, as an operator's restart would; `whileDown` runs in between. */
  restart: (whileDown?: () => Promise<void>) => Promise<void>;
}

/** Builds when there is no build yet (npm test builds before the tests run), or always with `force`. */
export function ensureBuilt(force = false): void {
  if (!force && fs.existsSync(path.join(root, ".next", "BUILD_ID"))) return;
  const r = spawnSync(process.execPath, [path.join(root, "node_modules/next/dist/bin/next"), "build"], { cwd: root, stdio: "inherit" });
  if (r.status !== 0) throw new Error("next build failed");
}

export async function startConsoleServer(opts: {
  databaseUrl: string;
  hostedRunners?: number;
  env?: Record<string, string>;
  /** "printed": no admin sign-in is given, so the console makes one and prints it (as on a first `npm start`). */
  firstAdmin?: "given" | "printed";
  /** Also copies everything the console prints to this file. */
  logFile?: string;
  /** Options for node itself, before the script (e.g. --cpu-prof, which NODE_OPTIONS may not carry). */
  nodeArgs?: string[];
}): Promise<ConsoleServer> {
  ensureBuilt();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "planton-it-"));
  const { PLANTON_ADMIN_EMAIL: _email, PLANTON_ADMIN_PASSWORD: _password, ...inherited } = process.env;
  const log = opts.logFile ? fs.createWriteStream(opts.logFile) : null;
  let out = "";
  const onData = (d: Buffer) => {
    out += d;
    log?.write(d);
  };
  const launch = () => {
    const proc = spawn(process.execPath, [...(opts.nodeArgs ?? []), path.join(root, "scripts/serve.mjs"), "-p", String(port), "-H", "127.0.0.1"], {
      cwd: root,
      env: {
        ...inherited,
        DATABASE_URL: opts.databaseUrl,
        PLANTON_DATA_DIR: dataDir,
        PLANTON_URL: url,
        PORT: String(port),
        PLANTON_HOSTED_RUNNERS: String(opts.hostedRunners ?? 0),
        ...(opts.firstAdmin === "printed" ? {} : { PLANTON_ADMIN_PASSWORD: "integration-admin-pw" }),
        NODE_ENV: "production",
        ...opts.env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    proc.stdout!.on("data", onData);
    proc.stderr!.on("data", onData);
    return proc;
  };
  let child = launch();

  /** Resolves once the output printed after `from` matches `pattern`; rejects if the process exits first. */
  const waitFrom = (from: number, pattern: RegExp, what: string) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const proc = child;
      const check = () => {
        const m = out.slice(from).match(pattern);
        if (!m) return false;
        done();
        resolve(m);
        return true;
      };
      const onExit = () => {
        if (check()) return;
        done();
        reject(new Error(`The console exited before ${what}:\n${out.slice(from)}`));
      };
      const done = () => {
        proc.stdout!.off("data", check);
        proc.stderr!.off("data", check);
        proc.off("exit", onExit);
      };
      if (check()) return;
      if (proc.exitCode !== null) return onExit();
      proc.stdout!.on("data", check);
      proc.stderr!.on("data", check);
      proc.once("exit", onExit);
    });
  const waitForOutput = (pattern: RegExp, what: string) => waitFrom(0, pattern, what);

  const halt = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      // A console that ignores SIGTERM (stuck in a request) is killed rather than left behind.
      const stuck = setTimeout(() => child.kill("SIGKILL"), 8000);
      await exited;
      clearTimeout(stuck);
    }
  };
  const stop = async () => {
    await halt();
    log?.end();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  const ready = async (from: number) => {
    // scripts/serve.mjs prints this once it listens.
    await waitFrom(from, /Serving on http/, "it listened");
    // A console that stops while it starts (a setting it refuses) has printed why: say it with the failure.
    const health = await fetch(`${url}/api/health`).catch((err: Error) => {
      throw new Error(`The console listened but did not answer its health request (${err.message}):\n${out.slice(from)}`);
    });
    if (!health.ok) throw new Error(`The console started but is not healthy (${health.status} ${await health.text()}):\n${out.slice(from)}`);
  };
  const restart = async (whileDown?: () => Promise<void>) => {
    await halt();
    await whileDown?.();
    const from = out.length;
    child = launch();
    await ready(from);
  };

  try {
    await ready(0);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url,
    dataDir,
    get process() {
      return child;
    },
    output: () => out,
    waitForOutput,
    stop,
    restart,
  };
}
