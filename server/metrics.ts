// The console's Prometheus metrics, served at /metrics (app/metrics/route.ts). One registry per process,
// kept on globalThis: Next.js's dev reloads and separately bundled routes all observe into the same series.
// Labels stay bounded: steps, results, statuses, route templates (never ids) and runner names.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { sql } from "drizzle-orm";
import { rowsOf, type DatabaseHandle } from "@/db/client";
import { routeTemplate } from "./route-template";
import { isSchedulerLeader } from "./services/jobs/scheduler";

/** Seconds, from a few milliseconds (a claim, an event) to an hour (a long apply). */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    jobs: new Gauge({ name: "planton_jobs", help: "Infra Jobs by status and result, read from the database at scrape time", labelNames: ["status", "result"] as const, registers }),
    queueWait: new Histogram({ name: "planton_job_queue_wait_seconds", help: "How long a job waited in the queue before a runner claimed it (created or resumed → claimed)", buckets: BUCKETS, registers }),
    claimDuration: new Histogram({ name: "planton_claim_duration_seconds", help: "How long the server took to claim a job for a runner (the claim's transaction)", buckets: BUCKETS, registers }),
    stepDuration: new Histogram({ name: "planton_job_step_duration_seconds", help: "How long a job's step ran, started → finished as the runner reported them", labelNames: ["step", "result"] as const, buckets: BUCKETS, registers }),
    eventLag: new Histogram({ name: "planton_event_delivery_lag_seconds", help: "From a runner emitting a progress event to the console writing it to a live SSE stream", buckets: BUCKETS, registers }),
    sseSubscribers: new Gauge({ name: "planton_sse_subscribers", help: "Open server-sent event streams of job events", registers }),
    sseCatchUps: new Counter({
      name: "planton_sse_catch_ups_total",
      help: "Times a live stream's viewer fell a buffer behind its job's feed and caught up from the database (a slow viewer: it loses nothing and holds no one back)",
      registers,
    }),
    heartbeats: new Counter({ name: "planton_runner_heartbeats_total", help: "Job heartbeats received, by runner", labelNames: ["runner"] as const, registers }),
    httpDuration: new Histogram({ name: "planton_http_request_duration_seconds", help: "HTTP requests by method, route template and status", labelNames: ["method", "route", "status"] as const, buckets: BUCKETS, registers }),
    dbInUse: new Gauge({ name: "planton_db_connections_in_use", help: "Database connections busy with a query or transaction (PGlite: its one connection)", registers }),
    schedulerLeader: new Gauge({
      name: "planton_scheduler_leader",
      help: "1 while this console process is the scheduler leader (lease expiry runs on the leader only), else 0",
      registers,
      collect() {
        this.set(isSchedulerLeader() ? 1 : 0);
      },
    }),
    dbMax: new Gauge({ name: "planton_db_connections_max", help: "The most database connections the server opens (PLANTON_DB_POOL; PGlite: 1)", registers }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

const g = globalThis as unknown as { __plantonMetrics?: Metrics; __plantonObserveRequest?: (method: string, url: string, status: number, seconds: number) => void };

/** The process's metrics, registered once. */
export function metrics(): Metrics {
  if (!g.__plantonMetrics) {
    g.__plantonMetrics = createMetrics();
    // scripts/serve.mjs times every request and reports it here, once the console has loaded this module.
    g.__plantonObserveRequest = (method, url, status, seconds) => {
      const m = /^[A-Z]+$/.test(method) && method.length <= 7 ? method : "OTHER";
      g.__plantonMetrics!.httpDuration.observe({ method: m, route: routeTemplate(url, status), status: String(status) }, seconds);
    };
  }
  return g.__plantonMetrics;
}

const seconds = (from: Date | number, to = Date.now()) => Math.max(0, (to - (typeof from === "number" ? from : from.getTime())) / 1000);

/** A job was claimed: how long it queued (since it was created, or resumed after an approval) and how long the claim took. */
export function observeClaim(job: { createdAt: Date; resumedAt: Date | null }, claimStartedAt: number): void {
  const m = metrics();
  const queuedSince = job.resumedAt && job.resumedAt > job.createdAt ? job.resumedAt : job.createdAt;
  m.queueWait.observe(seconds(queuedSince));
  m.claimDuration.observe(seconds(claimStartedAt));
}

export function observeStep(step: string, result: string, startedAt: Date | null): void {
  if (startedAt) metrics().stepDuration.observe({ step, result }, seconds(startedAt));
}

/** An event written to a live stream; `ts` is when its runner emitted it. Events from before the stream opened (its backlog) are not lag. */
export function observeDelivery(ts: string, streamOpenedAt: number): void {
  observeDeliveries([Date.parse(ts)], streamOpenedAt, Date.now());
}

/**
 * Events written to a live stream at `writtenAt`, by when their runners emitted them (ms since the epoch, as
 * EventBatch.emittedAt parses them once for every subscriber). Recorded after this turn's I/O: with a hundred
 * viewers of a plan's burst, observing each event for each viewer before the next viewer's write held that write back.
 */
export function observeDeliveries(emittedAt: readonly number[], streamOpenedAt: number, writtenAt: number): void {
  setImmediate(() => {
    const lag = metrics().eventLag;
    for (const at of emittedAt) if (Number.isFinite(at) && at >= streamOpenedAt) lag.observe(seconds(at, writtenAt));
  });
}

/** The database gauges, read when /metrics is scraped: jobs by status and result (one grouped count), and the pool's use. */
export async function readDatabaseGauges(handle: DatabaseHandle): Promise<void> {
  const m = metrics();
  const rows = rowsOf<{ status: string; result: string; n: number | string }>(await handle.db.execute(sql`select status, result, count(*) as n from infra_jobs group by status, result`));
  m.jobs.reset();
  for (const r of rows) m.jobs.set({ status: r.status, result: r.result }, Number(r.n));
  const pool = await handle.poolUse();
  m.dbInUse.set(pool.inUse);
  m.dbMax.set(pool.max);
}
