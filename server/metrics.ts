// The console's Prometheus metrics, served at /metrics (app/metrics/route.ts). One registry per process,
// kept on globalThis: Next.js's dev reloads and separately bundled routes all observe into the same series.
// Labels stay bounded: steps, results, statuses, route templates (never ids) and runner names.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type Metric } from "prom-client";
import { sql } from "drizzle-orm";
import { rowsOf, type DatabaseHandle } from "@/db/client";
import { routeTemplate } from "./route-template";
import { isSchedulerLeader } from "./services/jobs/scheduler";

/** Seconds, from a few milliseconds (a claim, an event) to an hour (a long apply). */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

/**
 * A histogram (no labels) whose one observation may stand for many equal ones: `observe(value, times)`. The event
 * delivery lag is one value per event and viewer, and the hundred viewers of a batch written in the same millisecond
 * have the same lags: observed one by one, prom-client's Histogram (one value per call, each call hashing its labels
 * and searching the buckets) cost the console a tenth of its CPU while a job had a hundred viewers, more than
 * writing the batch to them. prom-client has no weighted observation, hence this metric of our own; the registry
 * prints it exactly as it prints a prom-client Histogram (server/metrics.test.ts compares the two).
 */
export class CountedHistogram {
  readonly name: string;
  readonly help: string;
  readonly type = "histogram";
  readonly aggregator = "sum";
  private readonly bounds: readonly number[];
  /** Observations per bucket (not cumulative); the last is above every bound. */
  private counts: number[];
  private sum = 0;
  private count = 0;

  constructor(opts: { name: string; help: string; buckets: readonly number[]; registers: Registry[] }) {
    this.name = opts.name;
    this.help = opts.help;
    this.bounds = opts.buckets;
    this.counts = new Array<number>(opts.buckets.length + 1).fill(0);
    for (const r of opts.registers) r.registerMetric(this as unknown as Metric);
  }

  observe(value: number, times = 1): void {
    if (!Number.isFinite(value) || !(times > 0)) return;
    let i = 0;
    while (i < this.bounds.length && value > this.bounds[i]) i++;
    this.counts[i] += times;
    this.sum += value * times;
    this.count += times;
  }

  reset(): void {
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
  }

  /** What the registry reads: a histogram's series, as prom-client's Histogram gives them (its typings call `type` an enum; it is this string). */
  async get(): Promise<{ name: string; help: string; type: "histogram"; aggregator: "sum"; values: { value: number; metricName: string; labels: Record<string, string | number> }[] }> {
    let cumulative = 0;
    const buckets = this.bounds.map((le, i) => ({ value: (cumulative += this.counts[i]), metricName: `${this.name}_bucket`, labels: { le } }));
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: [
        ...buckets,
        { value: this.count, metricName: `${this.name}_bucket`, labels: { le: "+Inf" } },
        { value: this.sum, metricName: `${this.name}_sum`, labels: {} },
        { value: this.count, metricName: `${this.name}_count`, labels: {} },
      ],
    };
  }
}

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
    eventLag: new CountedHistogram({ name: "planton_event_delivery_lag_seconds", help: "From a runner emitting a progress event to the console writing it to a live SSE stream", buckets: BUCKETS, registers }),
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
  const at = Date.parse(ts);
  observeDeliveries({ emittedAt: [at], earliestEmittedAt: at }, streamOpenedAt, Date.now());
}

/** Events written together, by when their runners emitted them (ms since the epoch): EventBatch parses them once for every viewer. */
export interface EmittedTimes {
  readonly emittedAt: readonly number[];
  /** The earliest of those that parse (NaN when none does). */
  readonly earliestEmittedAt: number;
}

/** Deliveries waiting to be observed: per batch, per millisecond written, how many viewers were written the whole batch then. */
const pendingLags = new Map<readonly number[], Map<number, number>>();

/**
 * A batch of events written to a live stream at `writtenAt`. Observed after this turn's I/O (with a hundred viewers
 * of a plan's burst, observing each event for each viewer before the next viewer's write held that write back), and
 * once per event for all the viewers written the same batch in the same millisecond (CountedHistogram). A stream
 * that opened after the batch's earliest event counts only the events from its opening on (earlier ones were its
 * backlog, not lag), on its own.
 */
export function observeDeliveries(batch: EmittedTimes, streamOpenedAt: number, writtenAt: number): void {
  if (!batch.emittedAt.length) return;
  if (!(batch.earliestEmittedAt >= streamOpenedAt)) {
    const lag = metrics().eventLag;
    const own = batch.emittedAt;
    return void setImmediate(() => {
      for (const at of own) if (at >= streamOpenedAt) lag.observe(seconds(at, writtenAt));
    });
  }
  if (pendingLags.size === 0) setImmediate(observePendingLags);
  let byTime = pendingLags.get(batch.emittedAt);
  if (!byTime) pendingLags.set(batch.emittedAt, (byTime = new Map()));
  byTime.set(writtenAt, (byTime.get(writtenAt) ?? 0) + 1);
}

function observePendingLags(): void {
  const lag = metrics().eventLag;
  for (const [emittedAt, byTime] of pendingLags) {
    for (const [writtenAt, viewers] of byTime) for (const at of emittedAt) lag.observe(seconds(at, writtenAt), viewers);
  }
  pendingLags.clear();
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
