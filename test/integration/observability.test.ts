// Metrics and traces for real: the built console and a runner process run one gated update job; the
// test scrapes /metrics (with and without its token) and receives the job's spans at a FAKE OTLP/HTTP
// collector (a real collector cannot run here): a small HTTP server in this file that decodes the
// exporter's JSON export requests with the exporter's own types and checks who is whose parent.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { IExportTraceServiceRequest, ISpan } from "@opentelemetry/otlp-transformer/build/src/trace/internal-types";
import { appendEvents, readEventsAfter } from "../../server/services/jobs/events";
import { startJobStack, type JobStack } from "./harness";

const METRICS_TOKEN = "observability-test-token-0123456789";

interface FakeCollector {
  url: string;
  spans: ISpan[];
  /** Resolves once the spans received satisfy `done` (checked on every export request). */
  until: (done: (spans: ISpan[]) => boolean) => Promise<void>;
  close: () => Promise<void>;
}

/** A FAKE OTLP/HTTP trace collector: takes POST /v1/traces as JSON, keeps every span, answers 200. */
async function startFakeCollector(): Promise<FakeCollector> {
  const spans: ISpan[] = [];
  const waiters: { done: (s: ISpan[]) => boolean; resolve: () => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) if (w.done(spans)) (waiters.splice(waiters.indexOf(w), 1), w.resolve());
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method === "POST" && req.url === "/v1/traces" && String(req.headers["content-type"]).startsWith("application/json")) {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as IExportTraceServiceRequest;
        for (const rs of body.resourceSpans ?? []) for (const ss of rs.scopeSpans) spans.push(...(ss.spans ?? []));
        check();
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    until: (done) => new Promise((resolve) => (waiters.push({ done, resolve }), check())),
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** Prometheus's text format, as { name, labels, value } samples. */
function parseMetrics(text: string) {
  return text
    .split("\n")
    .filter((l) => l && !l.startsWith("#"))
    .map((l) => {
      const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(l)!;
      const labels = Object.fromEntries([...(m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
      return { name: m[1]!, labels: labels as Record<string, string>, value: Number(m[3]) };
    });
}
type Samples = ReturnType<typeof parseMetrics>;
/** The sum of the samples named `name` whose labels include `labels`. */
const total = (s: Samples, name: string, labels: Record<string, string> = {}) =>
  s.filter((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v)).reduce((a, x) => a + x.value, 0);

let stack: JobStack;
let collector: FakeCollector;
let jobId: string;
let before: Samples;

const scrape = async (authorization?: string) => fetch(`${stack.server.url}/metrics`, { headers: authorization ? { authorization } : {} });
const metricsNow = async () => {
  const res = await scrape(`Bearer ${METRICS_TOKEN}`);
  expect(res.status).toBe(200);
  return parseMetrics(await res.text());
};

beforeAll(async () => {
  collector = await startFakeCollector();
  // The console's batch of spans goes out within 100 ms; the runner sends its own when each job ends.
  const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: "100" };
  stack = await startJobStack({ env: { PLANTON_METRICS_TOKEN: METRICS_TOKEN, ...otel }, runnerEnv: otel });
  await stack.registerKind("TestSlow", "slow", [{ name: "name", type: "string", required: true, description: "folder" }]);
  await stack.component("watched", "dev", "TestSlow", { name: "obs" });
  await stack.startRunner("runner-obs", 1);
  before = await metricsNow();

  // One update job, held at its gate mid-apply while a viewer follows it and heartbeats arrive.
  stack.gates.hold("obs");
  jobId = (await stack.run("watched", "update")).id;
  await stack.gates.held("obs");
  const stream = await fetch(`${stack.server.url}/api/v1/jobs/${jobId}/events/stream`, { headers: { authorization: `Bearer ${await stack.tokenFor("viewer")}` } });
  const reader = stream.body!.getReader();
  let seen = "";
  const readUntil = async (text: string) => {
    while (!seen.includes(text)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the event stream ended before ${JSON.stringify(text)}:\n${seen}`);
      seen += new TextDecoder().decode(value);
    }
  };
  await readUntil(": stream open");
  await vi.waitFor(
    async () => {
      const m = await metricsNow();
      expect(total(m, "planton_sse_subscribers")).toBeGreaterThanOrEqual(1);
      expect(total(m, "planton_runner_heartbeats_total", { runner: "runner-obs" })).toBeGreaterThanOrEqual(1);
    },
    { timeout: 30_000, interval: 200 },
  );
  stack.gates.release("obs");
  await readUntil("event: end");
  await reader.cancel();
  expect((await stack.finished(jobId)).result).toBe("succeeded");
}, 240_000);

afterAll(async () => {
  await stack?.close();
  await collector?.close();
});

describe("metrics at /metrics", () => {
  it("refuses a scrape without its token, or with another, saying what to send", async () => {
    for (const authorization of [undefined, "Bearer not-the-token", `Basic ${Buffer.from(`x:${METRICS_TOKEN}`).toString("base64")}`]) {
      const res = await scrape(authorization);
      expect(res.status, String(authorization)).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
      expect((await res.json()).error.message).toMatch(/No metrics were returned: .*Send Authorization: Bearer <PLANTON_METRICS_TOKEN>/);
    }
  });

  it("counts the job that ran: jobs by status and result, queue wait, claim, steps, events, heartbeats, requests and the pool", async () => {
    const after = await vi.waitFor(
      async () => {
        const m = await metricsNow();
        // The viewer's stream closed when the job ended.
        expect(total(m, "planton_sse_subscribers")).toBe(0);
        return m;
      },
      { timeout: 10_000, interval: 100 },
    );
    const moved = (name: string, labels: Record<string, string> = {}) => total(after, name, labels) - total(before, name, labels);
    expect(total(after, "planton_jobs", { status: "completed", result: "succeeded" })).toBeGreaterThanOrEqual(1);
    expect(moved("planton_jobs", { status: "completed", result: "succeeded" })).toBe(1);
    expect(moved("planton_job_queue_wait_seconds_count")).toBe(1);
    expect(moved("planton_claim_duration_seconds_count")).toBe(1);
    for (const step of ["init", "refresh", "preview", "apply"]) expect(moved("planton_job_step_duration_seconds_count", { step, result: "succeeded" }), step).toBe(1);
    // The apply's events after the gate opened reached the viewer live.
    expect(moved("planton_event_delivery_lag_seconds_count")).toBeGreaterThan(0);
    expect(total(after, "planton_runner_heartbeats_total", { runner: "runner-obs" })).toBeGreaterThanOrEqual(1);
    expect(total(after, "planton_db_connections_max")).toBe(10);
    expect(after.some((s) => s.name === "planton_db_connections_in_use")).toBe(true);

    // Request durations are labelled by route template: ids never become labels.
    const routes = new Set(after.filter((s) => s.name === "planton_http_request_duration_seconds_count").map((s) => `${s.labels.method} ${s.labels.route} ${s.labels.status}`));
    expect(routes).toContain("POST /api/runner/v1/jobs/{id}/heartbeat 200");
    expect(routes).toContain("POST /api/runner/v1/jobs/{id}/steps/apply/finish 200");
    expect(routes).toContain("GET /api/v1/jobs/{id}/events/stream 200");
    expect(routes).toContain("GET /metrics 401");
    expect([...routes].filter((r) => /job_|run_|cmp_/.test(r))).toEqual([]);
  });
});

describe("traces over OTLP", () => {
  it("the job is one trace: create → claim → each step → the engine's walks → each resource applied", async () => {
    const hex = (id: string | Uint8Array | undefined) => (id === undefined || id === "" ? undefined : typeof id === "string" ? id : Buffer.from(id).toString("hex"));
    const attr = (s: ISpan, key: string) => s.attributes.find((a) => a.key === key)?.value.stringValue;
    const create = () => collector.spans.find((s) => s.name === "job create" && attr(s, "planton.job.id") === jobId);
    const ofJob = () => collector.spans.filter((s) => hex(s.traceId) === hex(create()?.traceId));
    // The runner sends its spans when the job's attempt ends; the console's within its batch delay.
    await collector.until(() => !!create() && ["job claim", "step apply", "engine apply", "create plantontest_gate.wait"].every((n) => ofJob().some((s) => s.name === n)));

    const spans = ofJob();
    const byId = new Map(spans.map((s) => [hex(s.spanId), s]));
    const parentOf = (s: ISpan) => byId.get(hex(s.parentSpanId))?.name ?? (hex(s.parentSpanId) ? "(not in the trace)" : "(root)");
    const one = (name: string) => {
      const found = spans.filter((s) => s.name === name);
      expect(found.map((s) => s.name), name).toEqual([name]);
      return found[0]!;
    };
    expect(parentOf(one("job create"))).toBe("(root)");
    expect(parentOf(one("job claim"))).toBe("job create");
    for (const step of ["init", "refresh", "preview", "apply"]) expect(parentOf(one(`step ${step}`)), step).toBe("job claim");
    expect(parentOf(one("engine refresh"))).toBe("step refresh");
    expect(parentOf(one("engine plan"))).toBe("step preview");
    expect(parentOf(one("engine apply"))).toBe("step apply");
    // One span per resource the apply created, under its walk; the plan's changes are events on the plan's walk.
    const applied = spans.filter((s) => parentOf(s) === "engine apply").map((s) => s.name).sort();
    expect(applied).toEqual(["create local_file.after", "create local_file.first", "create plantontest_gate.wait"]);
    expect(one("engine plan").events.filter((e) => e.name === "planned_change")).toHaveLength(3);
    expect(spans.every((s) => s.status?.code !== 2)).toBe(true);
  });
});

describe("a live stream's slow viewer", () => {
  it("falls a buffer behind while it reads nothing, catches up from the database and gets every event once and in order, without holding another viewer back", async () => {
    await stack.component("streamed", "dev", "TestSlow", { name: "slow-viewer" });
    stack.gates.hold("slow-viewer");
    const id = (await stack.run("streamed", "update")).id;
    await stack.gates.held("slow-viewer");
    const token = await stack.tokenFor("viewer");
    const url = `${stack.server.url}/api/v1/jobs/${id}/events/stream`;
    /** A stream's lines as they come: its event ids, and whether it has opened and ended (nothing kept but these). */
    const reading = () => {
      const r = { seqs: [] as number[], open: false, end: false, partial: "" };
      const take = (text: string) => {
        const lines = (r.partial + text).split("\n");
        r.partial = lines.pop()!;
        for (const l of lines) {
          if (l.startsWith("id: ")) r.seqs.push(Number(l.slice(4)));
          else if (l === ": stream open") r.open = true;
          else if (l === "event: end") r.end = true;
        }
      };
      return { r, take };
    };

    // The slow viewer takes the stream's first bytes, then stops reading (its socket's buffers fill).
    const slowRead = reading();
    const slow = await new Promise<http.IncomingMessage>((resolve, reject) =>
      http.get(url, { headers: { authorization: `Bearer ${token}` } }, resolve).on("error", reject),
    );
    slow.setEncoding("utf8");
    // One listener throughout, paused in the same turn as its first chunk: nothing arrives with no one to take it.
    await new Promise<void>((resolve) => {
      let first = true;
      slow.on("data", (d: string) => {
        slowRead.take(d);
        if (first) (first = false, slow.pause(), resolve());
      });
    });
    const slowDone = new Promise<void>((resolve) => slow.on("end", resolve));

    // The other viewer reads as the events come.
    const fast = (await fetch(url, { headers: { authorization: `Bearer ${token}` } })).body!.getReader();
    const fastRead = reading();
    const decoder = new TextDecoder();
    const fastUntil = async (done: () => boolean) => {
      while (!done()) {
        const r = await fast.read();
        if (r.done) throw new Error("the fast viewer's stream ended early");
        fastRead.take(decoder.decode(r.value, { stream: true }));
      }
    };
    await fastUntil(() => fastRead.r.open);

    // 6 000 events of 4 KiB (24 MiB), far past what sockets buffer and the feed's 1 000 events a viewer may have waiting.
    const catchUpsBefore = total(await metricsNow(), "planton_sse_catch_ups_total");
    const line = "x".repeat(4096);
    let last = 0;
    for (let b = 0; b < 60; b++) last = await appendEvents(stack.t.db, id, Array.from({ length: 100 }, (_, i) => ({ operation: "apply" as const, type: "log" as const, payload: { line: `${b * 100 + i} ${line}` } })));
    await fastUntil(() => fastRead.r.seqs.at(-1)! >= last);
    expect(total(await metricsNow(), "planton_sse_catch_ups_total")).toBeGreaterThan(catchUpsBefore);

    // The slow viewer reads again; the job ends; both have every event once, in order, and the end.
    slow.resume();
    stack.gates.release("slow-viewer");
    await fastUntil(() => fastRead.r.end);
    await slowDone;
    expect(slowRead.r.end).toBe(true);
    const all = (await readEventsAfter(stack.t.db, id, 0, 100_000)).map((e) => e.seq);
    expect(all.length).toBeGreaterThan(6000);
    expect(fastRead.r.seqs).toEqual(all);
    expect(slowRead.r.seqs).toEqual(all);
    expect((await stack.finished(id)).result).toBe("succeeded");
  }, 120_000);
});
