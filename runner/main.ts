// The runner process: `node --import tsx runner/main.ts --url http://localhost:3000 --token rnr_…`
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Command, InvalidArgumentError } from "commander";
import { ClaimLoop } from "./claim-loop";
import { detectEngines } from "./engines/detect";
import { runnerConfig, type RunnerConfig } from "./config";
import { HttpError, RunnerClient } from "./client";
import { createLogger, type Logger } from "./log";
import { privateFolder } from "./private-files";
import { lowerPriority, MOST_NICE } from "./priority";
import { startTracing, stopTracing } from "../lib/telemetry";

export const RUNNER_VERSION = "0.1.0";

export interface RunnerOptions {
  url: string;
  token: string;
  capacity?: number;
  workDir?: string;
  name?: string;
  /** How long in-flight steps may run on after a stop (ms). */
  graceMs?: number;
  log?: Logger;
  waitSeconds?: number;
  /** The environment its engines run in (PATH decides which it has); this process's by default. */
  env?: NodeJS.ProcessEnv;
  /** Lowers the process's CPU priority to this nice value (runner/priority.ts); 0 leaves it as started. */
  nice?: number;
}

export interface RunningRunner {
  /** Stops claiming, lets in-flight steps finish within the grace period, ends attempts. */
  stop(): Promise<void>;
  /** Settles when the runner has stopped; rejects when the server refuses the token. */
  done: Promise<void>;
  loop: ClaimLoop;
}

/** Refused at start: a missing option, a token the server refuses, or a server that cannot be reached. */
export class RunnerStartError extends Error {
  name = "RunnerStartError";
}

/** Asks the server whose token this is, so a bad token or an unreachable server is told before anything starts. */
async function checkToken(client: RunnerClient, url: string) {
  try {
    return (await client.whoami()).runner;
  } catch (err) {
    if (err instanceof HttpError && err.status < 500) {
      const why = err.said?.replace(/^Nothing was done: /, "") ?? "check the token.";
      throw new RunnerStartError(`No runner was started: the server at ${url} refused the runner token (${err.status}): ${why}`);
    }
    const why = err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
    throw new RunnerStartError(`No runner was started: the server at ${url} could not be reached (${why}). Check --url and that the console is running, then start the runner again.`);
  }
}

/** Starts a runner in this process (used by main and by `planton runner start`), once the server accepted its token. */
export async function startRunner(opts: RunnerOptions): Promise<RunningRunner> {
  if (!opts.url) throw new RunnerStartError("No runner was started: no server URL. Pass --url https://planton.example.com (or set PLANTON_URL).");
  if (!opts.token) throw new RunnerStartError("No runner was started: no runner token. Pass --token rnr_… (or set PLANTON_RUNNER_TOKEN); an admin creates one in Settings → Runners.");
  const client = new RunnerClient(opts.url, opts.token);
  const name = opts.name ?? os.hostname();
  const log = (opts.log ?? createLogger()).child({ runner: name });
  const registered = await checkToken(client, opts.url);
  const workRoot = path.join(opts.workDir ?? os.tmpdir(), "planton-runner");
  try {
    await privateFolder(workRoot);
  } catch (err) {
    throw new RunnerStartError(`No runner was started: ${(err as Error).message}`);
  }
  let nice: number;
  try {
    nice = opts.nice ? lowerPriority(opts.nice) : os.getPriority(0);
  } catch (err) {
    throw new RunnerStartError(`No runner was started: its CPU priority could not be lowered to nice ${opts.nice} (${(err as Error).message}). Start it with a --nice this machine allows, or without one.`);
  }
  const env = opts.env ?? process.env;
  // Jobs are traced when OTEL_EXPORTER_OTLP_ENDPOINT is set (a hosted runner inherits the console's OTEL_* settings).
  if (await startTracing("planton-runner", env)) log.info("tracing jobs over OTLP", { endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT });
  const engines = await detectEngines(env, log);
  const loop = new ClaimLoop({
    runner: client,
    capacity: opts.capacity ?? 2,
    workRoot,
    log,
    waitSeconds: opts.waitSeconds,
    // The engines and their versions go separately (detectEngines), so the version is the runner's own.
    version: RUNNER_VERSION,
    engines,
    ...(opts.env ? { job: { env: opts.env } } : {}),
  });
  log.info("runner started", { url: opts.url, as: registered.name, capacity: opts.capacity ?? 2, workRoot, nice, version: RUNNER_VERSION, engines });
  const done = loop.start();
  let stopping: Promise<void> | undefined;
  return {
    loop,
    done,
    stop: () => (stopping ??= loop.stop(opts.graceMs ?? 30_000).then(() => stopTracing()).then(() => log.info("runner stopped"))),
  };
}

/** A nice value for --nice: 0 (as started) to 19 (yields the CPU to everything else). */
export function niceValue(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > MOST_NICE) throw new InvalidArgumentError(`must be a whole number from 0 to ${MOST_NICE}`);
  return n;
}

function positiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 64) throw new InvalidArgumentError("must be a whole number from 1 to 64");
  return n;
}

export async function main(argv = process.argv): Promise<void> {
  let env: RunnerConfig;
  try {
    env = runnerConfig();
  } catch (err) {
    createLogger().error((err as Error).message);
    process.exitCode = 2;
    return;
  }
  const program = new Command("planton-runner")
    .description("Runs Planton Infra Jobs: claims work from the server and executes it with an engine.")
    .option("--url <server>", "server URL (env PLANTON_URL)", env.PLANTON_URL)
    .option("--token <rnr_…>", "runner token (env PLANTON_RUNNER_TOKEN)", env.PLANTON_RUNNER_TOKEN)
    .option("--capacity <n>", "jobs run at once", positiveInt, 2)
    .option("--work-dir <dir>", "folder for job workspaces", os.tmpdir())
    .option("--name <name>", "name shown in logs (env PLANTON_RUNNER_NAME)", env.PLANTON_RUNNER_NAME ?? os.hostname())
    .option("--grace-seconds <n>", "how long in-flight steps may finish after SIGTERM", positiveIntOrZero, 30)
    .option("--nice <n>", "CPU priority of the runner and its engines, 0–19: higher yields the CPU to the rest of the machine (env PLANTON_RUNNER_NICE)", niceValue, env.PLANTON_RUNNER_NICE)
    .parse(argv);
  const o = program.opts<{ url?: string; token?: string; capacity: number; workDir: string; name: string; graceSeconds: number; nice: number }>();
  const log = createLogger();
  let runner: RunningRunner;
  try {
    runner = await startRunner({ url: o.url ?? "", token: o.token ?? "", capacity: o.capacity, workDir: o.workDir, name: o.name, graceMs: o.graceSeconds * 1000, nice: o.nice, log });
  } catch (err) {
    log.error((err as Error).message);
    // A missing option is a usage error (2); a refused token or an unreachable server is 1.
    process.exitCode = o.url && o.token ? 1 : 2;
    return;
  }
  for (const sig of ["SIGTERM", "SIGINT"] as const) {
    process.once(sig, () => {
      log.info("signal received", { signal: sig });
      void runner.stop().then(() => process.exit(0));
    });
  }
  // A hosted runner belongs to the console that started it: when that process is gone (even
  // killed outright, with no chance to stop its children), the runner stops too.
  const parent = env.PLANTON_RUNNER_PARENT_PID;
  if (parent) {
    const watch = setInterval(() => {
      try {
        process.kill(parent, 0);
      } catch {
        clearInterval(watch);
        log.info("the console that started this runner is gone; stopping");
        void runner.stop().then(() => process.exit(0));
      }
    }, 1_000);
    watch.unref();
  }
  try {
    await runner.done;
    await runner.stop();
  } catch (err) {
    log.error((err as Error).message);
    await runner.stop();
    process.exit(1);
  }
}

function positiveIntOrZero(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError("must be a whole number of seconds");
  return n;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) void main();
