// Jobs benchmark: throughput, claim latency and event latency of Infra Jobs through the real
// parts — the built console (`scripts/serve.mjs`) on a throwaway Postgres (a second console process on
// it for the split run), real runner processes running the builtin engine on a module with many
// resources, and viewers on the real live event stream (GET /api/v1/jobs/{id}/events/stream, each chunk kept with its arrival time and decoded when the stream ends, or with --viewer client read by lib/client as the CLI does). It prints figures; it asserts nothing about time.
//
//   npm run bench                      (about 5 minutes on a busy 2-core machine)
//   npx tsx bench/jobs.ts --quick      (about 1–1.5 minutes)
//   npx tsx bench/jobs.ts --jobs 40 --resources 100 --runners 1,2,4 --subscribers 1,10,100,300
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { constants as zlibConstants, createGunzip } from "node:zlib";
import { createParser } from "eventsource-parser";
import { setMaxListeners } from "node:events";
import { eq, inArray, sql } from "drizzle-orm";
import { openDatabase, type DatabaseHandle } from "../db/client";
import { catalogKinds, iacModules, infraComponents, infraJobs, stateObjects } from "../db/schema";
import { JOB_QUEUED_CHANNEL } from "../server/services/jobs/transitions";
import { newId } from "../lib/ids";
import { draftComponent } from "../test/components";
import { ensureHostedRunner } from "../server/services/runners/register-runner";
import { createApiToken } from "../server/services/settings/api-tokens";
import { apiClient, type ApiClient } from "../test/api-client";
import { createPlantonClient } from "../lib/client";
import { RunnerClient } from "../runner/client";
import { decodeEventMessage, JOB_STREAM_END_EVENT, jobEventStreamPath } from "../lib/job-event-stream";
import type { ProgressEvent } from "../lib/runner-protocol";
import { ensureBuilt, startConsoleServer, type ConsoleServer } from "../test/console-server";
import { stateWriteRows } from "./state-writes";
import { HOSTED_RUNNER_NICE } from "../server/config";
import { seedTestOrg, type TestOrg } from "../test/fixtures";
import { startCluster, type Cluster } from "../test/postgres-cluster";

// The consoles of the two-console phase share one server key, as replicas must (server/server-key-check.ts); they inherit this.
process.env.PLANTON_SECRET_KEY ??= randomBytes(32).toString("hex");

const root = path.resolve(import.meta.dirname, "..");

// ── Parameters ──────────────────────────────────────────────────────────────────────────────────
const HELP = `Usage: npx tsx bench/jobs.ts [options]

  --quick               small run, about a minute and a half on a busy 2-core machine (jobs 4, resources 10, claim samples 5)
  --jobs N              update jobs per throughput run, each on its own component (default 10)
  --resources N         count of each of random_id, terraform_data and local_file in the module (default 50)
  --runners 1,3         runner processes per throughput run (default 1,3)
  --capacity N          jobs each runner runs at once (default 2)
  --claim-samples N     jobs created one at a time on an idle runner for claim latency (default 20)
  --subscribers 1,10,100  concurrent viewers of the live event stream on one running job (default 1,10,100)
  --split N             then N viewers split across two console processes on the same Postgres (default 100; 0 skips)
  --viewer raw|client   how the viewers read the stream: raw (default) keeps each chunk with its arrival time and
                        decodes the chunks when the stream ends, each event stamped with its chunk's arrival; client reads through lib/client's async iteration, as
                        the CLI's follow does (its per-event cost, times 100 viewers in this process, competes
                        with the server for the same cores)
  --paced N             the event-latency runs follow two jobs: a paced one of N time_sleep resources (40–130 ms
                        each, ten at a time, as provider calls take; default 120, 0 skips) and the module's update
  --runner-nice N       the runners' CPU priority (nice 0–19); default ${HOSTED_RUNNER_NICE}, as the console's hosted runners run
  --cpu-prof DIR        the consoles and runners write V8 CPU profiles (.cpuprofile) into DIR when they stop
  --help
`;

function badViewer(v: string | undefined): never {
  throw new Error(`--viewer takes raw or client, not ${v}`);
}

function parameters() {
  const { values } = parseArgs({
    options: {
      quick: { type: "boolean", default: false },
      jobs: { type: "string" },
      resources: { type: "string" },
      runners: { type: "string" },
      capacity: { type: "string" },
      "claim-samples": { type: "string" },
      subscribers: { type: "string" },
      split: { type: "string" },
      viewer: { type: "string", default: "raw" },
      paced: { type: "string" },
      "cpu-prof": { type: "string" },
      "runner-nice": { type: "string" },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const int = (name: string, v: string | undefined, d: number, min = 1) => {
    if (v === undefined) return d;
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be a whole number of at least ${min}, not ${v}`);
    return n;
  };
  const list = (name: string, v: string | undefined, d: number[]) => (v === undefined ? d : v.split(",").map((x) => int(name, x.trim(), 0, 0)));
  const q = values.quick;
  return {
    quick: q,
    jobs: int("jobs", values.jobs, q ? 4 : 10),
    resources: int("resources", values.resources, q ? 10 : 50),
    runners: list("runners", values.runners, [1, 3]),
    capacity: int("capacity", values.capacity, 2),
    claimSamples: int("claim-samples", values["claim-samples"], q ? 5 : 20, 0),
    subscribers: list("subscribers", values.subscribers, [1, 10, 100]),
    split: int("split", values.split, 100, 0),
    viewer: values.viewer === "client" || values.viewer === "raw" ? values.viewer : badViewer(values.viewer),
    paced: int("paced", values.paced, q ? 30 : 120, 0),
    runnerNice: int("runner-nice", values["runner-nice"], HOSTED_RUNNER_NICE, 0),
    cpuProf: values["cpu-prof"],
  };
}
type Params = ReturnType<typeof parameters>;

// ── Clean-up, also on Ctrl-C ────────────────────────────────────────────────────────────────────
const cleanups: (() => Promise<void> | void)[] = [];
let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  return (cleaning ??= (async () => {
    for (const fn of cleanups.reverse()) {
      try {
        await fn();
      } catch (err) {
        console.error(`clean-up step failed: ${(err as Error).message}`);
      }
    }
  })());
}
let interrupted = false;
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.once(sig, () => {
    interrupted = true;
    console.error(`\n${sig}: stopping runners, console and Postgres, removing temp folders…`);
    void cleanup().finally(() => process.exit(130));
  });
}

const note = (m: string) => console.log(`· ${m}`);

// ── Statistics ──────────────────────────────────────────────────────────────────────────────────
function pct(xs: number[], p: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}
const ms = (x: number) => (Number.isNaN(x) ? "–" : x >= 10_000 ? `${(x / 1000).toFixed(1)} s` : x < 10 ? `${x.toFixed(1)} ms` : `${Math.round(x)} ms`);
const p50p99 = (xs: number[]) => `${ms(pct(xs, 50))} / ${ms(pct(xs, 99))}`;

// ── CPU used by process trees (from /proc), to show where the time goes ─────────────────────────
const TICK = 100; // USER_HZ on Linux
interface Proc {
  ppid: number;
  /** utime + stime of the process itself. */
  self: number;
  /** cutime + cstime: children it has reaped. */
  reaped: number;
}
function procTable(): Map<number, Proc> {
  const out = new Map<number, Proc>();
  for (const d of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // fields after the name: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14)
      out.set(Number(d), { ppid: Number(f[1]), self: Number(f[11]) + Number(f[12]), reaped: Number(f[13]) + Number(f[14]) });
    } catch {
      /* gone */
    }
  }
  return out;
}
/** CPU seconds of the processes under `roots` (live descendants and those already reaped). */
function treeSeconds(table: Map<number, Proc>, roots: number[]): number {
  const kids = new Map<number, number[]>();
  for (const [pid, p] of table) kids.set(p.ppid, [...(kids.get(p.ppid) ?? []), pid]);
  let ticks = 0;
  const seen = new Set<number>();
  const walk = (pid: number) => {
    if (seen.has(pid)) return;
    seen.add(pid);
    const p = table.get(pid);
    if (p) ticks += p.self + p.reaped;
    for (const k of kids.get(pid) ?? []) walk(k);
  };
  roots.forEach(walk);
  return ticks / TICK;
}

// ── The module: N × (random_id → terraform_data → local_file), each chain depending on the one before ──
function moduleSource(n: number): string {
  return `
variable "name" {
  type = string
}
resource "random_id" "seed" {
  count       = ${n}
  byte_length = 4
}
resource "terraform_data" "step" {
  count = ${n}
  input = "\${var.name}-\${count.index}-\${random_id.seed[count.index].hex}"
}
resource "local_file" "out" {
  count    = ${n}
  filename = "bench/\${var.name}/file-\${count.index}.txt"
  content  = "\${terraform_data.step[count.index].output}\\n"
}
resource "terraform_data" "done" {
  input      = length(local_file.out)
  depends_on = [local_file.out]
}
output "files" {
  value = length(local_file.out)
}
`;
}

/**
 * The paced module: `n` time_sleep resources whose creates take 40–130 ms each, ten at a time (the
 * engine's parallelism), as provider calls do: a job whose events come at the pace of a real apply,
 * with the cores free between them, where the bench module's walk is all CPU and its events one burst.
 */
function pacedModuleSource(n: number): string {
  return `
resource "time_sleep" "call" {
  count           = ${n}
  create_duration = "\${40 + (count.index % 7) * 15}ms"
}
output "calls" {
  value = length(time_sleep.call)
}
`;
}

// ── The run ─────────────────────────────────────────────────────────────────────────────────────
type Job = Awaited<ReturnType<ApiClient["jobs"]["get"]["query"]>>;
interface Runner {
  name: string;
  child: ChildProcess;
  log: () => string;
  expectedExit: boolean;
}

interface Ctx {
  p: Params;
  tmp: string;
  cluster: Cluster;
  pgPort: number;
  handle: DatabaseHandle;
  org: TestOrg;
  server: ConsoleServer;
  /** More console processes on the same Postgres (started for the split run). */
  replicas: ConsoleServer[];
  dbUrl: string;
  /** The bench's API token (engineer). */
  token: string;
  api: ApiClient;
  components: string[];
  /** Components of the paced module (one per paced event-latency run). */
  pacedComponents: string[];
  runners: Runner[];
  failures: string[];
}

async function main() {
  const p = parameters();
  const started = Date.now();
  const cpuModel = fs.readFileSync("/proc/cpuinfo", "utf8").match(/^model name\s*:\s*(.*)$/m)?.[1] ?? "unknown";
  const load0 = os.loadavg();

  console.log("Planton console — jobs benchmark");
  console.log("Figures depend on this machine and on whatever else it is doing; compare runs on one machine, not across machines.");
  console.log(`machine: ${os.cpus().length} cores, ${cpuModel}, ${Math.round(os.totalmem() / 2 ** 30)} GiB; load average at start ${load0.map((l) => l.toFixed(2)).join(" ")}; node ${process.version}`);
  console.log(
    `parameters: ${p.quick ? "--quick; " : ""}module ${p.resources} × (random_id → terraform_data → local_file) + 1 = ${3 * p.resources + 1} resources; ` +
      `${p.jobs} update jobs per throughput run; runners ${p.runners.join(",")} × capacity ${p.capacity} at nice ${p.runnerNice}${p.runnerNice === HOSTED_RUNNER_NICE ? " (as hosted runners run)" : ""}; claim samples ${p.claimSamples}; subscribers ${p.subscribers.join(",")}; split across 2 consoles ${p.split}; viewers read the stream ${p.viewer === "raw" ? "raw (chunks kept with their arrival time, decoded after the stream ends)" : "through lib/client (the CLI's follow)"}`,
  );

  if (!fs.existsSync(path.join(root, ".next", "BUILD_ID"))) note("no build of the console yet: running next build (not timed)…");
  ensureBuilt();

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "planton-bench-"));
  cleanups.push(() => fs.rmSync(tmp, { recursive: true, force: true }));

  note("starting Postgres…");
  const cluster = await startCluster();
  cleanups.push(() => cluster.stop());
  const pgPort = Number(new URL(cluster.url("postgres")).port);
  const { default: postgres } = await import("postgres");
  const admin = postgres(cluster.url("postgres"), { max: 1, onnotice: () => {} });
  await admin.unsafe("create database planton_bench");
  await admin.end();
  const dbUrl = cluster.url("planton_bench");
  const handle = await openDatabase({ url: dbUrl });
  cleanups.push(() => handle.close());

  const infraRoot = path.join(tmp, "infra");
  fs.mkdirSync(infraRoot);
  const org = await seedTestOrg(handle.db, { localRoot: infraRoot });
  const moduleDir = path.join(tmp, "module");
  fs.mkdirSync(moduleDir);
  fs.writeFileSync(path.join(moduleDir, "main.tf"), moduleSource(p.resources));
  await handle.db.insert(catalogKinds).values({
    id: newId("catalogKind"), orgId: org.orgId, scopeKey: org.orgId, kind: "BenchFleet", title: "BenchFleet", provider: "local",
    specSchema: { fields: [{ name: "name", type: "string", required: true, description: "folder under bench/" }] },
  });
  await handle.db.insert(iacModules).values({ id: newId("iacModule"), orgId: org.orgId, scopeKey: org.orgId, kind: "BenchFleet", name: "bench-fleet", provisioner: "builtin", version: "0.1.0", source: moduleDir });

  // One component per job that changes something: warm-up, each throughput run, each subscriber run, the upload probe; claim samples reuse a few (previews).
  const needed = 1 + p.jobs * p.runners.length + p.subscribers.length + (p.split > 0 ? 1 : 0) + Math.min(4, p.claimSamples) + 1;
  const components: string[] = [];
  for (let i = 0; i < needed; i++) {
    const name = `fleet-${String(i).padStart(3, "0")}`;
    components.push((await draftComponent(handle.db, org.actor(), { environment: "dev", kind: "BenchFleet", name, spec: { name }, connection: "local-sandbox" })).id);
  }
  note(`${needed} components of BenchFleet in environment dev`);
  const pacedComponents: string[] = [];
  if (p.paced > 0) {
    const pacedDir = path.join(tmp, "paced-module");
    fs.mkdirSync(pacedDir);
    fs.writeFileSync(path.join(pacedDir, "main.tf"), pacedModuleSource(p.paced));
    await handle.db.insert(catalogKinds).values({ id: newId("catalogKind"), orgId: org.orgId, scopeKey: org.orgId, kind: "BenchPaced", title: "BenchPaced", provider: "local", specSchema: { fields: [] } });
    await handle.db.insert(iacModules).values({ id: newId("iacModule"), orgId: org.orgId, scopeKey: org.orgId, kind: "BenchPaced", name: "bench-paced", provisioner: "builtin", version: "0.1.0", source: pacedDir });
    for (let i = 0; i < p.subscribers.length + (p.split > 0 ? 1 : 0); i++) {
      pacedComponents.push((await draftComponent(handle.db, org.actor(), { environment: "dev", kind: "BenchPaced", name: `paced-${String(i).padStart(3, "0")}`, spec: {}, connection: "local-sandbox" })).id);
    }
    note(`${pacedComponents.length} components of BenchPaced (${p.paced} time_sleep resources each)`);
  }

  note("starting the console (scripts/serve.mjs, PLANTON_HOSTED_RUNNERS=0)…");
  const server = await startConsoleServer({ databaseUrl: dbUrl, hostedRunners: 0, nodeArgs: cpuProfArgs(p) });
  cleanups.push(() => server.stop());
  const { token } = await createApiToken(handle.db, org.actor("engineer"), { name: "bench" });
  const api = apiClient(server.url, token);

  const ctx: Ctx = { p, tmp, cluster, pgPort, handle, org, server, replicas: [], dbUrl, token, api, components, pacedComponents, runners: [], failures: [] };
  cleanups.push(() => stopRunners(ctx));

  const rows: [string, string, string][] = [];
  const cpuRows: string[] = [];
  let claimP99: number | undefined;

  // Warm-up (not counted): the first job compiles routes and loads the engine.
  await setRunners(ctx, 1);
  note("warm-up job (not counted)…");
  await runBatch(ctx, [takeComponent(ctx)], "update");

  // Throughput.
  const throughput: { runners: number; perMin: number }[] = [];
  for (const n of p.runners) {
    if (n === 0) continue;
    await setRunners(ctx, n);
    note(`throughput: ${p.jobs} update jobs through ${n} runner${n > 1 ? "s" : ""} × capacity ${p.capacity}…`);
    const cpu = cpuStart(ctx);
    const phaseComponents = Array.from({ length: p.jobs }, () => takeComponent(ctx));
    const jobs = await runBatch(ctx, phaseComponents, "update");
    cpuRows.push(cpuEnd(ctx, cpu, `throughput, ${n} runner(s)`));
    const ok = jobs.filter((j) => j.result === "succeeded");
    const first = Math.min(...jobs.map((j) => +new Date(j.createdAt)));
    const last = Math.max(...jobs.map((j) => +new Date(j.completedAt!)));
    const perMin = (ok.length / (last - first)) * 60_000;
    throughput.push({ runners: n, perMin });
    const durations = ok.map((j) => +new Date(j.completedAt!) - +new Date(j.startedAt!));
    const waits = jobs.map((j) => +new Date(j.startedAt!) - +new Date(j.createdAt));
    rows.push([`throughput, ${n} runner${n > 1 ? "s" : ""} × capacity ${p.capacity}`, `${perMin.toFixed(1)} jobs/min`, `${ok.length} update jobs in ${ms(last - first)} (first created → last completed)`]);
    rows.push([`  job run time (started → completed) p50 / p99`, p50p99(durations), `${durations.length} jobs; steps p50: ${stepMedians(jobs)}`]);
    rows.push([`  queue wait under this backlog p50 / p99`, p50p99(waits), `${waits.length} jobs, all created at once`]);
    const states = await ctx.handle.db
      .select({ serial: stateObjects.serial, bytes: sql<number>`length(${stateObjects.state}::text)` })
      .from(stateObjects)
      .where(inArray(stateObjects.componentId, phaseComponents));
    rows.push([`  final state serial / size p50`, `${pct(states.map((x) => x.serial ?? 0), 50)} / ${Math.round(pct(states.map((x) => Number(x.bytes)), 50) / 1024)} KiB`, `${states.length} states (one update from empty)`]);
    rows.push(...(await stateWriteRows(ctx.handle, ok)));
    const gaps = refillGaps(jobs);
    if (gaps.length) rows.push([`  slot refill (a job ends → that runner claims the next) p50 / p99`, p50p99(gaps), `${gaps.length} claims while work was waiting`]);
  }
  if (throughput.length > 1) {
    const base = throughput[0];
    for (const t of throughput.slice(1)) rows.push([`  speed-up ${t.runners} vs ${base.runners} runner(s)`, `× ${(t.perMin / base.perMin).toFixed(2)}`, `ideal × ${(t.runners / base.runners).toFixed(2)} on ${os.cpus().length} cores`]);
  }

  // Claim latency: one job at a time on idle runners, so a slot is always free and long-polling.
  if (p.claimSamples > 0) {
    await setRunners(ctx, 1);
    note(`claim latency: ${p.claimSamples} preview jobs, one at a time, on an idle runner…`);
    const claimComponents = Array.from({ length: Math.min(4, p.claimSamples) }, () => takeComponent(ctx));
    const claims: number[] = [];
    const firstStep: number[] = [];
    for (let i = 0; i < p.claimSamples; i++) {
      // A little jitter so creation does not line up with any poll or heartbeat period.
      await sleep(50 + Math.random() * 250);
      const [job] = await runBatch(ctx, [claimComponents[i % claimComponents.length]], "preview", { quiet: true });
      claims.push(+new Date(job.startedAt!) - +new Date(job.createdAt));
      const s = job.steps.map((x) => x.startedAt).filter(Boolean).map((x) => +new Date(x!));
      if (s.length) firstStep.push(Math.min(...s) - +new Date(job.createdAt));
    }
    claimP99 = pct(claims, 99);
    rows.push([`claim latency (created → claimed, job startedAt) p50 / p99`, p50p99(claims), `${claims.length} preview jobs on 1 idle runner${claims.length < 100 ? ` (p99 of ${claims.length} = the slowest)` : ""}`]);
    rows.push([`  created → first step started p50 / p99`, p50p99(firstStep), `${firstStep.length} jobs (adds the runner's step-start call)`]);
  }

  // Event latency: subscribers connect before a runner exists, then one runner starts and runs the job.
  // The raw NOTIFY round trip on the same Postgres is sampled by this process alone first, then all
  // through each run (under the same load), to set the latency beside what Postgres itself takes.
  const idleRtt = await notifyRoundTrips(ctx, p.quick ? 100 : 300);
  rows.push([`raw NOTIFY round trip, idle (this process: NOTIFY → its own LISTEN) p50 / p99`, p50p99(idleRtt), `${idleRtt.length} round trips, one at a time, no job running`]);
  const targetRows: [string, string, string][] = [];
  let one: (Awaited<ReturnType<typeof eventLatency>> & { kind: string; viewers: number }) | undefined;
  const viewerRuns = [...p.subscribers.filter((s) => s > 0).map((s) => ({ s, consoles: 1 })), ...(p.split > 0 ? [{ s: p.split, consoles: 2 }] : [])];
  // Two jobs: the paced one (provider calls' pace, cores free between events) and the module's update (one CPU-bound burst).
  const jobKinds = [
    ...(p.paced > 0 ? [{ kind: "paced", pool: ctx.pacedComponents, what: `a paced apply (${p.paced} × time_sleep 40–130 ms)` }] : []),
    { kind: "walk", pool: ctx.components, what: `the module's update (${3 * p.resources + 1} resources, a CPU-bound walk)` },
  ];
  const eventRuns = jobKinds.flatMap((k) => viewerRuns.map((v) => ({ ...v, ...k })));
  for (const { s, consoles, kind, pool, what } of eventRuns) {
    const where = consoles > 1 ? ` split across ${consoles} console processes (runner on the first)` : "";
    const label = `${kind} job, ${s} subscriber${s > 1 ? "s" : ""}${consoles > 1 ? `, ${consoles} consoles` : ""}`;
    if (one && one.kind !== kind) one = undefined;
    note(`event latency: ${s} subscriber${s > 1 ? "s" : ""} on ${what}${where}…`);
    const servers = consoles > 1 ? [ctx.server, ...(await replicas(ctx, consoles - 1))] : [ctx.server];
    const cpu = cpuStart(ctx);
    const r = { kind, ...(await eventLatency(ctx, s, servers, takeComponent(ctx, pool))) };
    cpuRows.push(cpuEnd(ctx, cpu, `events, ${label}`));
    const ratio = pct(r.runner, 99) / pct(r.rtt, 99);
    rows.push([`event latency, ${label} (runner emits → subscriber receives) p50 / p99`, p50p99(r.runner), `${r.runner.length} receipts = ${r.events} runner events × ${s}`]);
    rows.push([`  runner emits → batch committed (NOTIFY seen) p50 / p99`, p50p99(r.toStored), `${r.toStored.length} events in ${r.notifies} commits (runner upload + append)`]);
    rows.push([`  batch committed → subscriber receives p50 / p99`, p50p99(r.toSubscriber), `${r.toSubscriber.length} receipts (NOTIFY → the job's one reader per console → fan-out → SSE)`]);
    rows.push([`  server-made events (stored → received) p50 / p99`, p50p99(r.server), `${r.server.length} receipts (job_status, operation_status)`]);
    rows.push([`  raw NOTIFY round trip during this run p50 / p99`, p50p99(r.rtt), `${r.rtt.length} round trips sampled while the job ran`]);
    rows.push([`  event latency p99 ÷ raw NOTIFY p99 during the run`, `× ${ratio.toFixed(1)}`, `target ≤ × 10`]);
    rows.push([
      `  console CPU per 1 000 deliveries`,
      `${((r.consoleCpu / r.deliveries) * 1000 * 1000).toFixed(0)} ms`,
      `${r.consoleCpu.toFixed(2)} CPU s${consoles > 1 ? ` (${consoles} consoles together)` : ""} for ${r.deliveries} deliveries (all events × ${s}) while the job ran`,
    ]);
    rows.push([`  subscribers connected (all received the backlog)`, ms(r.connectMs), `${s} SSE connections`]);
    // The job's own cost (uploads, claims, state) is in every run; what more viewers add is the difference.
    // The baseline is this job kind's first run (one viewer by default); a run with no more deliveries than it has no margin to divide by.
    const base = one;
    one ??= { ...r, viewers: s };
    const marginal = !base
      ? " (includes the job's own uploads, claim, state)"
      : r.deliveries <= base.deliveries
        ? `; ${((r.consoleCpu - base.consoleCpu) * 1000).toFixed(0)} CPU-ms against the ${base.viewers}-viewer run's (as many deliveries)`
        : `; ${(((r.consoleCpu - base.consoleCpu) / (r.deliveries - base.deliveries)) * 1e6).toFixed(0)} ms per 1 000 deliveries beyond the ${base.viewers}-viewer run`;
    targetRows.push([label.replace("subscriber", "viewer"), `p99 ${ms(pct(r.runner, 99))}, × ${ratio.toFixed(1)} raw NOTIFY`, `console CPU ${((r.consoleCpu / r.deliveries) * 1e6).toFixed(0)} ms / 1 000 deliveries${marginal}`]);
  }
  // Last: it needs no runner process (the event runs keep theirs warm).
  const uploads = await uploadRoundTrips(ctx, p.quick ? 50 : 200);
  rows.push([`event upload round trip, idle (runner client → console → stored) p50 / p99`, p50p99(uploads.request), `${uploads.request.length} uploads of one event, one at a time, through the runner's own client`]);
  rows.push([`  upload sent → NOTIFY seen p50 / p99`, p50p99(uploads.notified), `the same uploads (the floor under "runner emits → batch committed" above)`]);
  if (targetRows.length) {
    rows.push([`summary (targets: p99 ≤ 50 ms with 100 viewers, also split across 2 consoles, ≤ × 10 raw NOTIFY; CPU per delivery flat)`, "", ""]);
    for (const k of jobKinds) rows.push([`  ${k.kind} job = ${k.what}`, "", ""]);
    for (const [a, b, c] of targetRows) rows.push([`  ${a}`, b, c]);
  }
  if (claimP99 !== undefined) rows.push([`  claim latency p99 (target ≤ 100 ms)`, ms(claimP99), `${p.claimSamples} preview jobs on 1 idle runner`]);

  await stopRunners(ctx);
  const width = Math.max(...rows.map((r) => r[0].length));
  const width2 = Math.max(...rows.map((r) => r[1].length));
  console.log("");
  console.log(`${"figure".padEnd(width)}  ${"value".padEnd(width2)}  based on`);
  for (const [a, b, c] of rows) console.log(`${a.padEnd(width)}  ${b.padEnd(width2)}  ${c}`);
  console.log("");
  console.log("CPU seconds used during each phase (process trees; 2 cores give at most 2 s per wall second):");
  for (const c of cpuRows) console.log(`  ${c}`);
  console.log("");
  console.log(`load average at end ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}; total run time ${ms(Date.now() - started)} (includes start-up and warm-up).`);
  console.log("Figures depend on this machine and its load: server, runners, Postgres and subscribers all share these cores.");

  if (ctx.failures.length) {
    console.log("");
    console.log(`FAILED: ${ctx.failures.length} problem(s):`);
    for (const f of ctx.failures) console.log(`  - ${f}`);
    process.exitCode = 1;
  }
}

/** With --cpu-prof DIR, each console and runner process writes a V8 CPU profile there when it stops (open it in Chrome's DevTools). */
function cpuProfArgs(p: Params): string[] {
  if (!p.cpuProf) return [];
  fs.mkdirSync(p.cpuProf, { recursive: true });
  return ["--cpu-prof", `--cpu-prof-dir=${path.resolve(p.cpuProf)}`];
}

/** `n` more console processes on the same database (started once, kept to the end), as a second replica behind a load balancer would be. */
async function replicas(ctx: Ctx, n: number): Promise<ConsoleServer[]> {
  while (ctx.replicas.length < n) {
    note("starting another console process on the same Postgres…");
    const r = await startConsoleServer({ databaseUrl: ctx.dbUrl, hostedRunners: 0, nodeArgs: cpuProfArgs(ctx.p) });
    cleanups.push(() => r.stop());
    ctx.replicas.push(r);
  }
  return ctx.replicas.slice(0, n);
}

function takeComponent(ctx: Ctx, pool: string[] = ctx.components): string {
  const id = pool.shift();
  if (!id) throw new Error("ran out of components (a bug in the benchmark's count)");
  return id;
}

const sleep = (n: number) => new Promise((r) => setTimeout(r, n));

// ── Runners ─────────────────────────────────────────────────────────────────────────────────────
async function startRunner(ctx: Ctx, name: string): Promise<Runner> {
  const { token } = await ensureHostedRunner(ctx.handle.db, name, ctx.p.capacity);
  const child = spawn(
    process.execPath,
    // From its bundle (scripts/runner.mjs), as `planton runner` and the test harness start it, not through tsx.
    [...cpuProfArgs(ctx.p), "scripts/runner.mjs", "--url", ctx.server.url, "--capacity", String(ctx.p.capacity), "--nice", String(ctx.p.runnerNice), "--work-dir", path.join(ctx.tmp, "work", name), "--grace-seconds", "5"],
    {
      cwd: root,
      env: { ...process.env, PLANTON_RUNNER_TOKEN: token, PLANTON_RUNNER_NAME: name, PLANTON_RUNNER_PARENT_PID: String(process.pid) },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let log = "";
  const keep = (d: Buffer) => {
    log += d;
    if (log.length > 200_000) log = log.slice(-100_000);
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const r: Runner = { name, child, log: () => log, expectedExit: false };
  child.on("exit", (code, sig) => {
    if (!r.expectedExit) ctx.failures.push(`runner ${name} exited unexpectedly (${sig ?? code}); its last output:\n${log.slice(-3000)}`);
  });
  ctx.runners.push(r);
  return r;
}

/** Makes exactly `n` runner processes live (starting or stopping the newest). */
async function setRunners(ctx: Ctx, n: number): Promise<void> {
  while (ctx.runners.length > n) await stopRunner(ctx, ctx.runners[ctx.runners.length - 1]);
  while (ctx.runners.length < n) await startRunner(ctx, `bench-runner-${ctx.runners.length + 1}`);
}

async function stopRunner(ctx: Ctx, r: Runner): Promise<void> {
  r.expectedExit = true;
  if (r.child.exitCode === null && r.child.signalCode === null) {
    const exited = new Promise((res) => r.child.once("exit", res));
    r.child.kill("SIGTERM");
    await Promise.race([exited, sleep(10_000)]);
    if (r.child.exitCode === null && r.child.signalCode === null) {
      r.child.kill("SIGKILL");
      await Promise.race([exited, sleep(2_000)]);
    }
  }
  ctx.runners = ctx.runners.filter((x) => x !== r);
}

async function stopRunners(ctx: Ctx): Promise<void> {
  for (const r of [...ctx.runners]) await stopRunner(ctx, r);
}

// ── Jobs ────────────────────────────────────────────────────────────────────────────────────────
/** Creates one job per component at once, waits (one light database query per 250 ms) until all completed, returns them from jobs.get. */
async function runBatch(ctx: Ctx, componentIds: string[], operation: "update" | "preview", opts: { quiet?: boolean } = {}): Promise<Job[]> {
  const created = await Promise.all(componentIds.map((componentId) => ctx.api.jobs.create.mutate({ org: ctx.org.slug, componentId, operation })));
  const ids = created.map((c) => c.id);
  await waitCompleted(ctx, ids, opts.quiet);
  const jobs = await Promise.all(ids.map((id) => ctx.api.jobs.get.query({ org: ctx.org.slug, id })));
  for (const j of jobs) if (j.result !== "succeeded") ctx.failures.push(describeFailure(j));
  return jobs;
}

async function waitCompleted(ctx: Ctx, ids: string[], quiet = false): Promise<void> {
  let lastReport = Date.now();
  for (;;) {
    const rows = await ctx.handle.db.select({ id: infraJobs.id, status: infraJobs.status }).from(infraJobs).where(inArray(infraJobs.id, ids));
    const done = rows.filter((r) => r.status === "completed").length;
    if (done === ids.length) return;
    if (ctx.runners.length && ctx.runners.every((r) => r.child.exitCode !== null || r.child.signalCode !== null)) {
      throw new Error(`every runner process exited while ${ids.length - done} job(s) were unfinished:\n${ctx.failures.join("\n")}`);
    }
    if (!quiet && Date.now() - lastReport > 15_000) {
      lastReport = Date.now();
      note(`  ${done}/${ids.length} completed, ${rows.filter((r) => r.status === "running").length} running`);
    }
    await sleep(250);
  }
}

function describeFailure(j: Job): string {
  const step = j.steps.find((s) => s.result === "failed");
  return `job ${j.id} (${j.operation} on ${j.componentName}) ended ${j.status}/${j.result}: ${step ? `${step.step} failed: ${step.reason}` : (j.reason ?? "no reason recorded")}`;
}

function stepMedians(jobs: Job[]): string {
  const by = new Map<string, number[]>();
  for (const j of jobs)
    for (const s of j.steps)
      if (s.startedAt && s.endedAt) by.set(s.step, [...(by.get(s.step) ?? []), +new Date(s.endedAt) - +new Date(s.startedAt)]);
  return [...by].map(([k, v]) => `${k} ${ms(pct(v, 50))}`).join(", ");
}

/** For each runner: when a job started while others were still queued, the time since that runner's previous job completed. */
function refillGaps(jobs: Job[]): number[] {
  const byRunner = new Map<string, Job[]>();
  for (const j of jobs) {
    const r = j.attempts[0]?.runnerName;
    if (r) byRunner.set(r, [...(byRunner.get(r) ?? []), j]);
  }
  const gaps: number[] = [];
  for (const list of byRunner.values()) {
    const ends = list.map((j) => +new Date(j.completedAt!)).sort((a, b) => a - b);
    for (const j of list) {
      const start = +new Date(j.startedAt!);
      const prev = ends.filter((e) => e <= start).at(-1);
      // Only claims that waited for a free slot: the job was created before that slot freed.
      if (prev !== undefined && +new Date(j.createdAt) < prev) gaps.push(start - prev);
    }
  }
  return gaps;
}

// ── Event latency ───────────────────────────────────────────────────────────────────────────────
const SERVER_MADE = new Set(["job_status", "operation_status"]);

/**
 * One update job with `subscribers` viewers on the live event stream (GET /api/v1/jobs/{id}/events/stream,
 * read raw or through lib/client as the CLI's follow reads it: --viewer), viewer i on console i mod consoles.length; the
 * runner talks to the first console. The runner is the warm one of the throughput runs (a runner is a
 * long-lived process; a fresh one spent the job starting up and compiling, on the same cores). The job
 * waits while the viewers connect: its component's queue is held as a state move holds it (claims skip
 * it), then released and the runners told, as the move's release does.
 */
async function eventLatency(ctx: Ctx, subscribers: number, consoles: ConsoleServer[], componentId: string) {
  await setRunners(ctx, 1);
  await ctx.handle.db.update(infraComponents).set({ stateHold: "bench: the viewers connect first" }).where(eq(infraComponents.id, componentId));
  const job = await ctx.api.jobs.create.mutate({ org: ctx.org.slug, componentId, operation: "update" });
  const receipts: { sub: number; seq: number; type: string; ts: number; at: number }[] = [];
  const notified: { seq: number; at: number }[] = [];
  const unlisten = await ctx.handle.listen("job_events", (payload) => {
    const at = Date.now();
    const [id, seq] = payload.split(":");
    if (id === job.id) notified.push({ seq: Number(seq), at });
  });
  let connected = 0;
  const t0 = Date.now();
  let allConnected!: () => void;
  const ready = new Promise<void>((r) => (allConnected = r));
  const abort = new AbortController();
  setMaxListeners(subscribers + 10, abort.signal); // one per viewer's request
  const clients = consoles.map((c) => createPlantonClient({ url: c.url, token: ctx.token }));
  const finished = Array.from({ length: subscribers }, async (_, i) => {
    let opened = false;
    const first = () => {
      if (opened) return;
      opened = true;
      if (++connected === subscribers) allConnected();
    };
    const got = (e: ProgressEvent, at: number) => void receipts.push({ sub: i, seq: e.seq, type: e.type, ts: Date.parse(e.ts), at });
    if (ctx.p.viewer === "raw") await readStreamRaw(consoles[i % consoles.length].url, ctx.token, job.id, abort.signal, first, got);
    else for await (const e of clients[i % clients.length].jobs.streamEvents(job.id, { signal: abort.signal })) first(), got(e, Date.now());
  });
  const failed = Promise.race(finished).then(
    () => new Promise<never>(() => {}),
    (err: unknown) => Promise.reject(err),
  );
  const sampling = { on: true };
  let rtt: Promise<number[]> | undefined;
  const consoleCpu = () => treeSeconds(procTable(), consoles.map((c) => c.process.pid!));
  try {
    await Promise.race([ready, failed]);
    const connectMs = Date.now() - t0;
    const since = Date.now();
    rtt = notifyRoundTrips(ctx, Infinity, sampling, NOTIFY_SAMPLE_GAP_MS);
    const consoleCpu0 = consoleCpu();
    await ctx.handle.db.update(infraComponents).set({ stateHold: null }).where(eq(infraComponents.id, componentId));
    await ctx.handle.notify(JOB_QUEUED_CHANNEL, ctx.org.orgId);
    await Promise.all(finished);
    const used = consoleCpu() - consoleCpu0;
    sampling.on = false;
    const done = await ctx.api.jobs.get.query({ org: ctx.org.slug, id: job.id });
    if (done.result !== "succeeded") ctx.failures.push(describeFailure(done));
    const live = receipts.filter((r) => r.ts >= since);
    if (process.env.BENCH_DUMP) fs.writeFileSync(`${process.env.BENCH_DUMP}-${subscribers}-${componentId}.json`, JSON.stringify({ receipts: live, notified, since }));
    // Each viewer got every event once, in order (the stream's promise; a break here is a bug, not a figure).
    const bySub = new Map<number, number[]>();
    for (const r of receipts) bySub.set(r.sub, [...(bySub.get(r.sub) ?? []), r.seq]);
    const expected = bySub.get(0) ?? [];
    for (const [i, seqs] of bySub) {
      if (seqs.some((q, k) => q !== k + 1) || seqs.length !== expected.length) ctx.failures.push(`event latency run: viewer ${i} received ${seqs.length} events not 1…${expected.length} once and in order`);
    }
    const runner = live.filter((r) => !SERVER_MADE.has(r.type)).map((r) => r.at - r.ts);
    const server = live.filter((r) => SERVER_MADE.has(r.type)).map((r) => r.at - r.ts);
    // Split each runner event's latency at the moment its batch was committed: the first NOTIFY
    // job_events '<job>:<last seq>' (seen by this process's own LISTEN) whose seq covers the event.
    const notifyAt = (seq: number) => notified.find((n) => n.seq >= seq)?.at;
    const toStored: number[] = [];
    const toSubscriber: number[] = [];
    for (const r of live) {
      if (SERVER_MADE.has(r.type)) continue;
      const n = notifyAt(r.seq);
      if (n === undefined) continue;
      if (r.sub === 0) toStored.push(n - r.ts);
      toSubscriber.push(r.at - n);
    }
    const seqs = new Set(live.filter((r) => !SERVER_MADE.has(r.type)).map((r) => r.seq));
    return { runner, server, toStored, toSubscriber, events: seqs.size, notifies: notified.length, connectMs, rtt: (await rtt) ?? [], consoleCpu: used, deliveries: live.length };
  } finally {
    sampling.on = false;
    await rtt?.catch(() => {});
    abort.abort();
    await Promise.allSettled(finished);
    await unlisten();
  }
}

/**
 * A viewer with `--viewer raw`: the same stream and the same wire format (lib/job-event-stream.ts), read
 * without lib/client's per-event async iteration. The 100 viewers stand for 100 browsers on machines of their
 * own, but here they share the two cores with the console, runner and Postgres: so while the job runs a viewer
 * only keeps each chunk with its arrival time (`first` is called on the first chunk that carries an event), and
 * decodes the chunks (eventsource-parser, as lib/client does) when its stream ends, stamping every event with
 * its chunk's arrival. Decoding as they came, the viewers' own JSON parsing of a plan's burst (hundreds of
 * events × 100 viewers in this one process) delayed when the later viewers' chunks were even looked at.
 * Reconnects with Last-Event-ID as lib/client does; a failure to reconnect fails the run.
 */
async function readStreamRaw(base: string, token: string, jobId: string, signal: AbortSignal, first: () => void, got: (e: ProgressEvent, at: number) => void): Promise<void> {
  let last = 0;
  let opened = false;
  for (let failures = 0; ; ) {
    const chunks: [Buffer, number][] = [];
    let gzipped = false;
    // Decodes what arrived on this connection (gunzipped chunk by chunk, when it came compressed); answers whether it carried the stream's end.
    const decode = async () => {
      let ended = false;
      let at = 0;
      const text = new TextDecoder();
      const parser = createParser({
        onEvent: (m) => {
          if (m.event === JOB_STREAM_END_EVENT) return void (ended = true);
          const e = decodeEventMessage(m.data);
          if (e.seq <= last) return;
          last = e.seq;
          failures = 0;
          got(e, at);
        },
      });
      if (!gzipped) {
        for (const [chunk, t] of chunks) {
          at = t;
          parser.feed(text.decode(chunk, { stream: true }));
        }
        return ended;
      }
      const gunzip = createGunzip({ flush: zlibConstants.Z_SYNC_FLUSH });
      const out: Buffer[] = [];
      gunzip.on("data", (d: Buffer) => out.push(d));
      gunzip.on("error", () => {}); // a connection cut mid-stream ends without the gzip trailer
      for (const [chunk, t] of chunks) {
        gunzip.write(chunk);
        await new Promise<void>((resolve) => gunzip.flush(zlibConstants.Z_SYNC_FLUSH, () => resolve()));
        at = t;
        for (const d of out.splice(0)) parser.feed(text.decode(d, { stream: true }));
      }
      gunzip.destroy();
      return ended;
    };
    const ended = await new Promise<boolean>((resolve, reject) => {
      const req = http.get(
        new URL(`/api/v1${jobEventStreamPath(jobId)}`, base),
        // Gzip, as browsers and fetch ask: each batch is deflated once for every viewer.
        { headers: { authorization: `Bearer ${token}`, accept: "text/event-stream", "accept-encoding": "gzip", "last-event-id": String(last) }, signal },
        (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            return reject(new Error(`event stream answered ${res.statusCode}`));
          }
          gzipped = res.headers["content-encoding"] === "gzip";
          // Compressed, the first event is seen by gunzipping the stream until it shows.
          let opening = gzipped && !opened ? createGunzip({ flush: zlibConstants.Z_SYNC_FLUSH }) : null;
          const open = () => {
            opened = true;
            first();
            opening?.destroy();
            opening = null;
          };
          opening?.on("data", (d: Buffer) => !opened && d.includes("data:") && open()).on("error", () => {});
          res.on("data", (chunk: Buffer) => {
            chunks.push([chunk, Date.now()]);
            if (opened) return;
            if (opening) opening.write(chunk);
            else if (chunk.includes("data:")) open();
          });
          // The server closes the stream after its end event.
          res.on("end", () => resolve(decode()));
          res.on("error", reject);
        },
      );
      req.on("error", reject);
    }).catch(async (err: unknown) => {
      const ended = await decode();
      if (signal.aborted || ended) return true;
      if (++failures > 10) throw err;
      return false;
    });
    if (ended || signal.aborted) return;
    await sleep(250);
  }
}

/**
 * The floor under an event's way to the database: with no runner process, this process claims a job with
 * a runner token as a runner does and, through the runner's own client (runner/client.ts), uploads `count`
 * batches of one event, one at a time — the time each request took, and until this process's LISTEN saw
 * the batch's NOTIFY. Then it ends the attempt (the job fails: "benchmark probe").
 */
async function uploadRoundTrips(ctx: Ctx, count: number): Promise<{ request: number[]; notified: number[] }> {
  await setRunners(ctx, 0);
  const { token } = await ensureHostedRunner(ctx.handle.db, "bench-upload-probe", 1);
  const runner = new RunnerClient(ctx.server.url, token);
  const job = await ctx.api.jobs.create.mutate({ org: ctx.org.slug, componentId: takeComponent(ctx), operation: "update" });
  let claim: Awaited<ReturnType<RunnerClient["claim"]>> = null;
  while (!claim) claim = await runner.claim({ capacity: 1, waitSeconds: 5 });
  if (claim.job.id !== job.id) throw new Error(`the upload probe claimed job ${claim.job.id}, not its own ${job.id}`);
  const client = runner.job(job.id, claim.credential.token);
  let awaited = 0;
  let seen: (() => void) | undefined;
  const unlisten = await ctx.handle.listen("job_events", (payload) => {
    const [id, seq] = payload.split(":");
    if (id === job.id && Number(seq) >= awaited) seen?.();
  });
  const request: number[] = [];
  const notified: number[] = [];
  try {
    for (let i = 1; i <= count; i++) {
      await client.uploadEvents(claim.attemptId, [{ seq: i, ts: new Date().toISOString(), operation: null, type: "log", payload: { message: `probe ${i}` } }]);
    }
    // Timed after a warm-up of the same count: the job's seq is past the server's own events by now.
    const [{ seq: base }] = await ctx.handle.db.select({ seq: infraJobs.eventSeq }).from(infraJobs).where(inArray(infraJobs.id, [job.id]));
    for (let i = 1; i <= count; i++) {
      awaited = base + i;
      const arrived = new Promise<void>((r) => (seen = r));
      const t = performance.now();
      await client.uploadEvents(claim.attemptId, [{ seq: count + i, ts: new Date().toISOString(), operation: null, type: "log", payload: { message: `probe ${count + i}` } }]);
      request.push(performance.now() - t);
      await arrived;
      notified.push(performance.now() - t);
    }
  } finally {
    await unlisten();
    await client.endAttempt({ attemptId: claim.attemptId, exitCode: 1, reason: "benchmark probe" }).catch(() => {});
  }
  return { request, notified };
}

/**
 * The pause between raw NOTIFY samples while a job runs: short enough that a walk job of a few tenths of a
 * second gets a hundred or more (a p99 of nine samples is their maximum, and the event latency's ratio to it
 * followed which nine they were), long enough that the sampling is a small part of Postgres's load.
 */
const NOTIFY_SAMPLE_GAP_MS = 2;

/**
 * Raw NOTIFY round trips on the benchmark's Postgres: NOTIFY from this process's pool, received by
 * its own LISTEN connection, one at a time; `count` of them, or until `running.on` turns false.
 */
async function notifyRoundTrips(ctx: Ctx, count: number, running = { on: true }, gapMs = 0): Promise<number[]> {
  const channel = "bench_notify_rtt";
  let expect = "";
  let arrived: (() => void) | undefined;
  const unlisten = await ctx.handle.listen(channel, (payload) => {
    if (payload === expect) arrived?.();
  });
  const out: number[] = [];
  try {
    for (let i = 0; i < count && running.on; i++) {
      expect = `${process.pid}-${i}`;
      const got = new Promise<void>((r) => (arrived = r));
      const t = performance.now();
      await ctx.handle.notify(channel, expect);
      await got;
      out.push(performance.now() - t);
      if (gapMs) await sleep(gapMs);
    }
  } finally {
    await unlisten();
  }
  return out;
}

// ── CPU accounting ──────────────────────────────────────────────────────────────────────────────
function cpuNow(ctx: Ctx): Record<string, number> {
  const table = procTable();
  let postmaster = 0;
  for (const pid of table.keys()) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
      if (/postgres/.test(cmd) && cmd.includes(`-p ${ctx.pgPort}`)) postmaster = pid;
    } catch {
      /* gone */
    }
  }
  const me = table.get(process.pid);
  return {
    console: treeSeconds(table, [ctx.server, ...ctx.replicas].map((c) => c.process.pid!)),
    // Live runner trees, plus runners this process has already stopped and reaped.
    runners: treeSeconds(table, ctx.runners.map((r) => r.child.pid!)) + (me?.reaped ?? 0) / TICK,
    postgres: postmaster ? treeSeconds(table, [postmaster]) : NaN,
    "bench (subscribers, polling)": (me?.self ?? 0) / TICK,
  };
}
function cpuStart(ctx: Ctx) {
  return { at: Date.now(), used: cpuNow(ctx) };
}
function cpuEnd(ctx: Ctx, start: ReturnType<typeof cpuStart>, label: string): string {
  const now = cpuNow(ctx);
  const wall = (Date.now() - start.at) / 1000;
  const parts = Object.keys(now).map((k) => `${k} ${(now[k] - start.used[k]).toFixed(1)}`);
  return `${label.padEnd(28)} wall ${wall.toFixed(1)} s, CPU s: ${parts.join(", ")}`;
}

main()
  .catch((err) => {
    if (interrupted) return; // the clean-up stopped what main was waiting on
    console.error(`benchmark failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 1;
  })
  .finally(() => cleanup());
