// Job credentials against the built console over HTTP: only the current attempt of a running job
// works on it. A credential of a replaced attempt, of a completed job, issued under a rotated runner
// token, or held by a revoked runner is refused on every job route, with the reason.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { eq } from "drizzle-orm";
import { artifacts, infraJobs, progressEvents, runners, secrets, stateObjects } from "../../db/schema";
import { newId } from "../../lib/ids";
import { RUNNER_API, type ClaimResponse, type StepName } from "../../lib/runner-protocol";
import { encryptSecret } from "../../server/crypto";
import { createJob } from "../../server/services/jobs/create-job";
import { resumeJob } from "../../server/services/jobs/resume-job";
import { orgWithComponent } from "../job-helpers";
import { registerRunner } from "../../server/services/runners/register-runner";
import { revokeRunner } from "../../server/services/runners/revoke-runner";
import { rotateRunnerToken } from "../../server/services/runners/rotate-runner-token";
import { startConsoleServer, type ConsoleServer } from "../console-server";
import { createTestDatabase, type TestDatabase } from "../database";
import type { TestOrg } from "../fixtures";

let t: TestDatabase;
let server: ConsoleServer;

interface Answer {
  status: number;
  body: unknown;
  message: string | undefined;
}

async function call(token: string, method: string, route: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const init: RequestInit & { headers: Record<string, string> } = { method, headers: { authorization: `Bearer ${token}`, ...headers } };
  if (body instanceof Uint8Array) init.body = Buffer.from(body);
  else if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers["content-type"] = "application/json";
  }
  const res = await fetch(`${server.url}${RUNNER_API}${route}`, init);
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: res.status, body: parsed, message: (parsed as { error?: { message?: string } } | null)?.error?.message };
}

/** A job attempt as a runner holds it. */
interface Cred {
  jobId: string;
  attemptId: string;
  token: string;
  artifactId: string;
}

const credOf = (c: ClaimResponse): Cred => ({ jobId: c.job.id, attemptId: c.attemptId, token: c.credential.token, artifactId: "" });

async function claimWith(runnerToken: string): Promise<Cred> {
  const r = await call(runnerToken, "POST", "/claim", { waitSeconds: 0 });
  expect(r.status, r.message).toBe(200);
  return credOf(r.body as ClaimResponse);
}

async function ok(a: Promise<Answer>): Promise<Answer> {
  const r = await a;
  expect(r.status, r.message).toBeLessThan(300);
  return r;
}

const start = (c: Cred, step: StepName) => call(c.token, "POST", `/jobs/${c.jobId}/steps/${step}/start`, { attemptId: c.attemptId });
const finish = (c: Cred, step: StepName, extra: Record<string, unknown> = {}) =>
  call(c.token, "POST", `/jobs/${c.jobId}/steps/${step}/finish`, { attemptId: c.attemptId, result: "succeeded", ...extra });
async function runSteps(c: Cred, steps: StepName[]) {
  for (const s of steps) {
    expect((await ok(start(c, s))).body).toEqual({ proceed: true });
    await ok(finish(c, s));
  }
}

async function upload(c: Cred, kind: string, name: string, text: string) {
  const bytes = new TextEncoder().encode(text);
  const digest = `sha-256=${createHash("sha256").update(bytes).digest("base64")}`;
  return call(c.token, "POST", `/jobs/${c.jobId}/artifacts?${new URLSearchParams({ kind, name })}`, bytes, { digest, "content-type": "application/octet-stream" });
}

const v4 = (serial: number) => ({ version: 4, terraform_version: "1.8.0", serial, lineage: "lin-credentials", outputs: {}, resources: [] });
const lockId = (c: Cred) => `lock-${c.attemptId}`;

/** Every route a job credential opens, called the way a runner calls it. */
const CELLS = {
  lock: (c: Cred) => call(c.token, "POST", `/jobs/${c.jobId}/state/lock`, { ID: lockId(c), Operation: "OperationTypeApply", Who: "runner@test" }),
  unlock: (c: Cred) => call(c.token, "DELETE", `/jobs/${c.jobId}/state/lock?id=${lockId(c)}`),
  "state get": (c: Cred) => call(c.token, "GET", `/jobs/${c.jobId}/state`),
  "state put": (c: Cred) => call(c.token, "PUT", `/jobs/${c.jobId}/state?lockId=${lockId(c)}`, v4(90)),
  events: (c: Cred) =>
    call(c.token, "POST", `/jobs/${c.jobId}/events`, { attemptId: c.attemptId, events: [{ seq: 900, ts: new Date().toISOString(), operation: null, type: "log", payload: { line: "stale line" } }] }),
  outputs: (c: Cred) => call(c.token, "POST", `/jobs/${c.jobId}/outputs`, { attemptId: c.attemptId, outputs: { stale_output: { value: "x", sensitive: false } } }),
  "artifact upload": (c: Cred) => upload(c, "log", "stale-artifact", "stale"),
  "artifact download": (c: Cred) => call(c.token, "GET", `/jobs/${c.jobId}/artifacts/${c.artifactId}`),
  secrets: (c: Cred) => call(c.token, "GET", `/jobs/${c.jobId}/secrets/DB_PASSWORD`),
  heartbeat: (c: Cred) => call(c.token, "POST", `/jobs/${c.jobId}/heartbeat`, { attemptId: c.attemptId }),
  "step start": (c: Cred) => start(c, "apply"),
  "step finish": (c: Cred) => finish(c, "preview"),
} satisfies Record<string, (c: Cred) => Promise<Answer>>;
type Cell = keyof typeof CELLS;

type Row = "replaced attempt" | "completed job" | "rotated runner token" | "revoked runner";
const stale = {} as Record<Row, { cred: Cred; status: number; message: string }>;

let org: TestOrg;
let componentIds: string[];
let lockAfterReplace: Answer;
let lateCalls: Record<string, Answer>;

/** An org runner (counted as Planton-hosted, so it may use Planton-managed state) and its token. */
async function runner(name: string) {
  const { runner, token } = await registerRunner(t.db, org.actor(), { name });
  await t.db.update(runners).set({ kind: "hosted" }).where(eq(runners.id, runner.id));
  return { runner, token };
}

/** A queued job whose IaC input references the secret DB_PASSWORD. */
async function job(componentIndex: number, operation: "preview" | "update") {
  const j = await createJob(t.db, org.actor(), { componentId: componentIds[componentIndex], operation });
  const [row] = await t.db.select().from(infraJobs).where(eq(infraJobs.id, j.id));
  await t.db.update(infraJobs).set({ iacInput: { ...row.iacInput!, variables: { db_password: "$secret/DB_PASSWORD" } } }).where(eq(infraJobs.id, j.id));
  return j;
}

beforeAll(async () => {
  t = await createTestDatabase();
  const made = await orgWithComponent(t.db, { components: 4, policy: { pauseBeforeApply: true } });
  org = made.org;
  componentIds = made.components.map((c) => c.id);
  await t.db.insert(secrets).values({ id: newId("secret"), orgId: org.orgId, name: "DB_PASSWORD", description: "", valueEncrypted: encryptSecret("hunter2") });
  // The test's services and the console share the server key (orgWithComponent's helpers set it).
  server = await startConsoleServer({ databaseUrl: t.url! });

  // Replaced attempt: the first attempt paused after its preview holding a lock, and its runner died; once approved, a second attempt took the job.
  {
    const { token } = await runner("r-replaced");
    await job(0, "update");
    const first = await claimWith(token);
    await runSteps(first, ["init", "refresh"]);
    await ok(start(first, "preview"));
    await ok(CELLS.lock(first));
    const plan = (await ok(upload(first, "plan", "tfplan", '{"plan":"reviewed"}'))).body as { artifactId: string; sha256: string };
    first.artifactId = plan.artifactId;
    expect((await ok(finish(first, "preview", { plan: { ...plan, summary: {} } }))).body).toEqual({ next: "stop" });
    await resumeJob(t.db, org.actor(), { jobId: first.jobId, expectedChecksum: plan.sha256 });
    const second = await claimWith(token);
    expect(second.jobId).toBe(first.jobId);
    await ok(start(second, "apply"));
    lockAfterReplace = await CELLS.lock(second);
    stale["replaced attempt"] = {
      cred: first,
      status: 409,
      message: `Nothing was done: attempt ${first.attemptId} of job ${first.jobId} was replaced by attempt ${second.attemptId}; only the current attempt works on a job. Stop working on job ${first.jobId}.`,
    };
  }

  // Completed job: the live attempt used every route, its last step completed the job, it flushed its last events and ended.
  {
    const { token } = await runner("r-completed");
    await job(1, "preview");
    const c = await claimWith(token);
    await runSteps(c, ["init", "refresh"]);
    await ok(start(c, "preview"));
    c.artifactId = ((await ok(upload(c, "log", "live-artifact", "live"))).body as { artifactId: string }).artifactId;
    await ok(call(c.token, "POST", `/jobs/${c.jobId}/events`, { attemptId: c.attemptId, events: [{ seq: 800, ts: new Date().toISOString(), operation: "preview", type: "log", payload: { line: "live line" } }] }));
    expect((await ok(CELLS.secrets(c))).body).toEqual({ value: "hunter2" });
    for (const cell of ["lock", "state get", "state put", "unlock", "outputs", "artifact download", "heartbeat"] as const) await ok(CELLS[cell](c));
    expect((await ok(finish(c, "preview"))).body).toEqual({ next: "stop" });
    lateCalls = {
      retriedFinish: await finish(c, "preview"),
      events: await call(c.token, "POST", `/jobs/${c.jobId}/events`, { attemptId: c.attemptId, events: [{ seq: 901, ts: new Date().toISOString(), operation: "preview", type: "log", payload: { line: "last line" } }] }),
      lock: await CELLS.lock(c),
      heartbeat: await CELLS.heartbeat(c),
      end: await call(c.token, "POST", `/jobs/${c.jobId}/attempt/end`, { attemptId: c.attemptId, exitCode: 0, reason: "completed" }),
    };
    lateCalls.endAgain = await call(c.token, "POST", `/jobs/${c.jobId}/attempt/end`, { attemptId: c.attemptId, exitCode: 0, reason: "completed" });
    stale["completed job"] = {
      cred: c,
      status: 409,
      message: `Nothing was done: job ${c.jobId} is completed (succeeded) and its attempt ${c.attemptId} has ended (completed), so its credential no longer works. Stop working on job ${c.jobId}.`,
    };
  }

  // Rotated runner token: the credential was issued under the token that was rotated away.
  {
    const { runner: r, token } = await runner("r-rotated");
    await job(2, "preview");
    const c = await claimWith(token);
    await ok(start(c, "init"));
    c.artifactId = ((await ok(upload(c, "log", "live-artifact", "live"))).body as { artifactId: string }).artifactId;
    await rotateRunnerToken(t.db, org.actor(), { id: r.id });
    stale["rotated runner token"] = {
      cred: c,
      status: 401,
      message: `Nothing was done: this job credential was issued under a runner token of r-rotated that has since been rotated, so it no longer works. Stop working on job ${c.jobId}. Start the runner with its new token to claim new work.`,
    };
  }

  // Revoked runner.
  {
    const { runner: r, token } = await runner("r-revoked");
    await job(3, "preview");
    const c = await claimWith(token);
    await ok(start(c, "init"));
    c.artifactId = ((await ok(upload(c, "log", "live-artifact", "live"))).body as { artifactId: string }).artifactId;
    const { runner: revoked } = await revokeRunner(t.db, org.actor(), { id: r.id });
    stale["revoked runner"] = {
      cred: c,
      status: 403,
      message: `Nothing was done: runner r-revoked was revoked at ${revoked.revokedAt!.toISOString()}, so its job credentials no longer work. Stop working on job ${c.jobId}.`,
    };
  }
}, 240_000);

afterAll(async () => {
  await server?.stop();
  await t?.close();
});

const ROWS: Row[] = ["replaced attempt", "completed job", "rotated runner token", "revoked runner"];
const MATRIX = ROWS.flatMap((row) => (Object.keys(CELLS) as Cell[]).map((cell) => [row, cell] as const));

describe("a stale job credential is refused on every job route, with the reason", () => {
  it.each(MATRIX)("%s × %s", async (row, cell) => {
    const { cred, status, message } = stale[row];
    const r = await CELLS[cell](cred);
    expect({ status: r.status, message: r.message }).toEqual({ status, message });
  });

  it("and nothing it sent was stored", async () => {
    const jobIds = ROWS.map((r) => stale[r].cred.jobId);
    for (const id of jobIds) {
      const lines = (await t.db.select().from(progressEvents).where(eq(progressEvents.jobId, id))).map((e) => (e.payload as { line?: string }).line);
      expect(lines, id).not.toContain("stale line");
      expect((await t.db.select().from(artifacts).where(eq(artifacts.jobId, id))).map((a) => a.name), id).not.toContain("stale-artifact");
    }
  });
});

describe("the live attempt", () => {
  it("is never blocked by the lock its replaced predecessor left", () => {
    expect(lockAfterReplace.status, lockAfterReplace.message).toBe(200);
  });

  it("after its last step completed the job, still flushes its last events and ends its attempt, but works on the job no more", () => {
    expect(lateCalls.retriedFinish).toMatchObject({ status: 200, body: { next: "stop" } });
    expect(lateCalls.events).toMatchObject({ status: 200, body: { acceptedThrough: 901 } });
    const { jobId } = stale["completed job"].cred;
    const over = `Nothing was done: job ${jobId} is completed (succeeded); a job credential works only while its job runs. Stop working on job ${jobId}.`;
    expect(lateCalls.lock).toMatchObject({ status: 409, message: over });
    expect(lateCalls.heartbeat).toMatchObject({ status: 409, message: over });
    expect(lateCalls.end.status).toBe(200);
    // Ending it again (a retry) is a quiet no-op.
    expect(lateCalls.endAgain.status).toBe(200);
  });

  it("of the next job locks and writes the state when the runner before it was lost mid-apply, and the lost runner's credential is refused", async () => {
    const { org: other, component } = await orgWithComponent(t.db);
    const { runner: r, token } = await registerRunner(t.db, other.actor(), { name: "r-lost" });
    await t.db.update(runners).set({ kind: "hosted" }).where(eq(runners.id, r.id));
    const lostJob = await createJob(t.db, other.actor(), { componentId: component.id, operation: "update" });
    const lost = await claimWith(token);
    await runSteps(lost, ["init", "refresh", "preview"]);
    await ok(start(lost, "apply"));
    await ok(CELLS.lock(lost));
    await ok(call(lost.token, "PUT", `/jobs/${lost.jobId}/state?lockId=${lockId(lost)}`, v4(1)));
    // The runner stops heartbeating: its lease lapses and the console's scheduler declares it lost.
    await t.db.update(infraJobs).set({ leaseExpiresAt: new Date(Date.now() - 1000) }).where(eq(infraJobs.id, lostJob.id));
    await expect.poll(async () => (await t.db.select().from(infraJobs).where(eq(infraJobs.id, lostJob.id)))[0].reason, { timeout: 30_000 }).toBe("runner lost");

    await createJob(t.db, other.actor(), { componentId: component.id, operation: "update" });
    const next = await claimWith(token);
    await runSteps(next, ["init", "refresh", "preview"]);
    await ok(start(next, "apply"));
    expect((await CELLS.lock(next)).status).toBe(200);
    expect((await ok(call(next.token, "PUT", `/jobs/${next.jobId}/state?lockId=${lockId(next)}`, v4(2)))).body).toMatchObject({ serial: 2 });

    const refused = await call(lost.token, "PUT", `/jobs/${lost.jobId}/state?lockId=${lockId(lost)}`, v4(3));
    expect(refused).toMatchObject({ status: 409, message: expect.stringContaining(`job ${lost.jobId} is completed (failed) and its attempt ${lost.attemptId} has ended (runner lost)`) });
    expect((await CELLS.lock(lost)).status).toBe(409);
    const [st] = await t.db.select().from(stateObjects).where(eq(stateObjects.componentId, component.id));
    expect(st).toMatchObject({ serial: 2, lockedByJob: next.jobId, lockInfo: { ID: lockId(next) } });
  });
});

describe("what a runner may upload", () => {
  it("refuses server-owned event types and output names the secret store cannot hold, naming them", async () => {
    const { org: other, component } = await orgWithComponent(t.db);
    const { runner: r, token } = await registerRunner(t.db, other.actor(), { name: "r-uploads" });
    await createJob(t.db, other.actor(), { componentId: component.id, operation: "preview" });
    const c = await claimWith(token);
    await ok(start(c, "init"));
    for (const type of ["job_status", "operation_status"]) {
      const r2 = await call(c.token, "POST", `/jobs/${c.jobId}/events`, {
        attemptId: c.attemptId,
        events: [{ seq: 1, ts: new Date().toISOString(), operation: null, type, payload: { status: "completed", result: "succeeded" } }],
      });
      expect(r2).toMatchObject({
        status: 400,
        message: `Nothing was done: events.0.type: ${type} events are written by the server, not by runners; a runner uploads only log, resource, diagnostic, summary, outputs.`,
      });
    }
    const bad = await call(c.token, "POST", `/jobs/${c.jobId}/outputs`, { attemptId: c.attemptId, outputs: { "bad-name": { value: "x", sensitive: true } } });
    expect(bad).toMatchObject({
      status: 400,
      message:
        'Nothing was done: outputs.bad-name: output "bad-name" has a name the console cannot store: output names must be letters, digits and underscores, not starting with a digit (like DB_PASSWORD). Rename the output in the module',
    });
    const [job] = await t.db.select().from(infraJobs).where(eq(infraJobs.id, c.jobId));
    expect(job).toMatchObject({ status: "running", outputs: null });
    expect((await t.db.select().from(progressEvents).where(eq(progressEvents.jobId, c.jobId))).filter((e) => e.attemptId)).toEqual([]);
    expect(r.name).toBe("r-uploads");
  });
});

describe("GET /whoami", () => {
  it("names the runner a token belongs to, and refuses a token it does not know", async () => {
    const { org: other } = await orgWithComponent(t.db);
    const { runner: r, token } = await registerRunner(t.db, other.actor(), { name: "r-whoami" });
    expect(await call(token, "GET", "/whoami")).toMatchObject({ status: 200, body: { runner: { id: r.id, name: "r-whoami", kind: "self_hosted", orgId: other.orgId } } });
    expect(await call("rnr_unknown", "GET", "/whoami")).toMatchObject({ status: 401, message: expect.stringContaining("this runner token is not known") });
  });
});
