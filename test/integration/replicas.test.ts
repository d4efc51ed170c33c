// Two console replicas on one Postgres behind nginx (README's example configuration), the way an
// operator scales the console out. Replica A starts first and leads the scheduler; B follows. The
// runners talk to B directly; five viewers watch the job through nginx, spread over both replicas.
// Mid-job (the apply held on a test gate) A is killed with SIGKILL: its viewers reconnect through
// nginx to B and resume after the last seq they saw, B takes over the scheduler and proves it by
// declaring a killed runner lost, and the job finishes with every viewer holding every event once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { secrets } from "../../db/schema";
import { createPlantonClient } from "../../lib/client";
import { newId } from "../../lib/ids";
import { encryptSecret } from "../../server/crypto";
import type { ProgressEvent } from "../../lib/runner-protocol";
import { apiClient, type ApiClient } from "../api-client";
import { startConsoleServer, type ConsoleServer } from "../console-server";
import { startLoadBalancer, type LoadBalancer } from "../load-balancer";
import { freePort } from "../postgres-cluster";
import { startJobStack, type JobStack } from "./harness";

// Every replica encrypts and signs with one key (README: "Running replicas").
process.env.PLANTON_SECRET_KEY ??= "7a".repeat(32);
const METRICS_TOKEN = "replicas-test-metrics-token";

let stack: JobStack;
let a: ConsoleServer;
let b: ConsoleServer;
let lb: LoadBalancer;
let replicaEnv: Record<string, string>;

const health = async (server: ConsoleServer) => (await (await fetch(`${server.url}/api/health`)).json()) as { status: string; scheduler?: string };
/** One series of a replica's /metrics, as a number. */
async function metric(server: ConsoleServer, name: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`${server.url}/metrics has no ${name}:\n${text}`);
  return Number(line.split(" ")[1]);
}

beforeAll(async () => {
  const lbPort = await freePort();
  const env = {
    PLANTON_URL: `http://127.0.0.1:${lbPort}`,
    PLANTON_TRUSTED_PROXIES: "127.0.0.1",
    PLANTON_METRICS_TOKEN: METRICS_TOKEN,
    PLANTON_LEASE_SECONDS: "4",
  };
  replicaEnv = env;
  // Replica A: the stack's console, started first, so it is the leader once it says so.
  stack = await startJobStack({ env });
  a = stack.server;
  await a.waitForOutput(/became the scheduler leader/, "replica A became the scheduler leader");
  b = await startConsoleServer({ databaseUrl: stack.t.url!, env });
  await b.waitForOutput(/follows: another replica holds the leader lock/, "replica B followed replica A");
  lb = await startLoadBalancer([new URL(a.url).host, new URL(b.url).host], lbPort);
  await stack.registerKind("TestSlow", "slow", [{ name: "name", type: "string", required: true, description: "folder" }]);
  await stack.component("watched", "dev", "TestSlow", { name: "one" });
  await stack.component("abandoned", "dev", "TestSlow", { name: "two" });
});

afterAll(async () => {
  await lb?.stop();
  await b?.stop();
  await stack?.close();
});

/** A viewer on the REST event stream through nginx, as `planton infra-job … --follow` watches (lib/client reconnects with Last-Event-ID). */
function restViewer(token: string, jobId: string, firstEvent: () => void) {
  const client = createPlantonClient({ url: lb.url, token });
  const seen: number[] = [];
  const done = (async () => {
    for await (const e of client.jobs.streamEvents(jobId)) if (seen.push(e.seq) === 1) firstEvent();
    return seen;
  })();
  return { seen, done };
}

/** A viewer on the tRPC subscription through nginx, as the browser watches (its EventSource reconnects with the last tracked id). */
function browserViewer(api: ApiClient, org: string, jobId: string, firstEvent: () => void) {
  const seen: number[] = [];
  const done = new Promise<number[]>((resolve, reject) => {
    const sub = api.jobs.stream.subscribe(
      { org, id: jobId, lastEventId: null },
      {
        onData: (tracked) => {
          const e = tracked.data as ProgressEvent;
          if (seen.push(e.seq) === 1) firstEvent();
          if (e.type === "job_status" && e.payload.status === "completed") {
            sub.unsubscribe();
            resolve(seen);
          }
        },
        onError: reject,
      },
    );
  });
  return { seen, done };
}

describe("two console replicas behind nginx", () => {
  it("the leader is killed mid-job: its viewers resume on the other replica with no event lost or repeated, and the scheduler moves there", async () => {
    const { org, gates } = stack;
    expect([(await health(a)).scheduler, (await health(b)).scheduler]).toEqual(["leader", "follower"]);
    expect([await metric(a, "planton_scheduler_leader"), await metric(b, "planton_scheduler_leader")]).toEqual([1, 0]);

    // The watched job runs on B's runner and waits at its gate mid-apply.
    gates.hold("one");
    const runnerOne = await stack.startRunner("runner-one", 1, undefined, b.url);
    const job = await stack.run("watched", "update");
    await gates.held("one");

    // Five viewers through nginx; least_conn spreads them over both replicas.
    const token = await stack.tokenFor("viewer");
    const viewerApi = apiClient(lb.url, token);
    let started = 0;
    let allStarted!: () => void;
    const viewing = new Promise<void>((r) => (allStarted = r));
    const firstEvent = () => ++started === 5 && allStarted();
    const viewers = [
      ...Array.from({ length: 3 }, () => restViewer(token, job.id, firstEvent)),
      ...Array.from({ length: 2 }, () => browserViewer(viewerApi, org.slug, job.id, firstEvent)),
    ];
    await viewing;
    const onA = await metric(a, "planton_sse_subscribers");
    const rest = await metric(b, "planton_sse_subscribers");
    expect(onA + rest).toBe(5);
    // Whatever the spread, A serves at least one viewer, so its death cuts live streams.
    expect(onA, `replica A should serve some of the viewers (A ${onA}, B ${rest})`).toBeGreaterThan(0);

    // A second job on a second runner of B, also held at its gate: its runner is killed once A is gone.
    gates.hold("two");
    const runnerTwo = await stack.startRunner("runner-two", 1, undefined, b.url);
    const abandoned = await stack.run("abandoned", "update");
    await gates.held("two");

    // The leader dies.
    const aExited = new Promise((r) => a.process.once("exit", r));
    a.process.kill("SIGKILL");
    await aExited;
    await b.waitForOutput(/became the scheduler leader/, "replica B took over the scheduler");
    expect((await health(b)).scheduler).toBe("leader");
    expect(await metric(b, "planton_scheduler_leader")).toBe(1);

    // The new leader acts: runner two dies mid-apply, its lease lapses, and B declares it lost.
    const twoExited = new Promise((r) => runnerTwo.once("exit", r));
    runnerTwo.kill("SIGKILL");
    await twoExited;
    await b.waitForOutput(new RegExp(`runner lost: [^\\n]*${abandoned.id}`), `replica B declared ${abandoned.id}'s runner lost`);

    // The watched job goes on, its viewers now all on B.
    gates.release("one");
    const seen = await Promise.all(viewers.map((v) => v.done));
    const api = apiClient(lb.url, token);
    const all = (await api.jobs.events.query({ org: org.slug, id: job.id, after: 0, limit: 5000 })).events.map((e) => e.seq);
    expect(all).toEqual(all.map((_, i) => i + 1));
    for (const s of seen) expect(s).toEqual(all);
    expect(await api.jobs.get.query({ org: org.slug, id: job.id })).toMatchObject({ status: "completed", result: "succeeded" });
    expect(await api.jobs.get.query({ org: org.slug, id: abandoned.id })).toMatchObject({ status: "completed", result: "failed", reason: expect.stringMatching(/runner lost/) });
    expect(runnerOne.exitCode).toBeNull();
    console.log(`[replicas] ${lb.version}; ${onA} of the 5 viewers were on the killed leader; ${all.length} events each`);
  });

  it("a replica started with a server key of its own stops at start, naming the key to set, rather than serve what it cannot read", async () => {
    await stack.t.db.insert(secrets).values({ id: newId("secret"), orgId: stack.org.orgId, name: "REPLICA_CHECK", valueEncrypted: encryptSecret("shared") });
    // It stops before it answers its first request; the harness's refusal carries what it printed.
    const started = startConsoleServer({ databaseUrl: stack.t.url!, env: { ...replicaEnv, PLANTON_SECRET_KEY: "5b".repeat(32) } });
    await expect(started).rejects.toThrow(/its server key does not decrypt what is already in the database \(secret REPLICA_CHECK\)[^]*set PLANTON_SECRET_KEY to the key the other replicas use/);
  });
});
