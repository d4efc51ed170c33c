// What a job credential (and a runner token) can do, over HTTP against the built console: a matrix of
// every runner-API route (read from the runner API's route table, so a new route cannot be missed) × who calls it
// (the live attempt on its own job, on another job of its organization, on another organization's
// job; an expired credential; a replaced attempt; a completed job; a revoked runner; a rotated token),
// with the answer each cell must give. Then: renewal only while the job runs; secrets, variables and
// the connection only as the job references them and their scope allows; no way into /api/v1 or tRPC;
// and no token or credential ever logged or returned twice.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import http from "node:http";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { and, eq } from "drizzle-orm";
import { artifacts, connectionAuthorizations, connections, environments, infraJobs, progressEvents, runners, secretEnvironments, secrets, stateObjects, variables } from "../../db/schema";
import { newId } from "../../lib/ids";
import { RUNNER_API, type ClaimResponse, type StepName } from "../../lib/runner-protocol";
import { encryptSecret, sha256Hex } from "../../server/crypto";
import { MAX_RUNNER_BODY_BYTES } from "../../server/input-guard";
import { draftComponent } from "../components";
import { createJob } from "../../server/services/jobs/create-job";
import { resumeJob } from "../../server/services/jobs/resume-job";
import { issueJobCredential } from "../../server/services/runners/credentials";
import { registerRunner } from "../../server/services/runners/register-runner";
import { revokeRunner } from "../../server/services/runners/revoke-runner";
import { rotateRunnerToken } from "../../server/services/runners/rotate-runner-token";
import { createApiToken } from "../../server/services/settings/api-tokens";
import { createConnection } from "../../server/services/settings/connections";
import { orgWithComponent } from "../job-helpers";
import { startConsoleServer, type ConsoleServer } from "../console-server";
import { runnerApiRoutes } from "../../server/runner-api/routes";
import { createTestDatabase, type TestDatabase } from "../database";
import type { TestOrg } from "../fixtures";

const root = path.resolve(import.meta.dirname, "../..");
let t: TestDatabase;
let server: ConsoleServer;

interface Answer {
  status: number;
  body: unknown;
  message: string | undefined;
}

/** Every answer the console gave this suite, with what was asked: no token may come back in more than the one that handed it out. */
const transcript: { asked: string; text: string }[] = [];

async function request(url: string, asked: string, token: string, method: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const init: RequestInit & { headers: Record<string, string> } = { method, headers: { authorization: `Bearer ${token}`, ...headers } };
  if (body instanceof Uint8Array) init.body = Buffer.from(body);
  else if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers["content-type"] = "application/json";
  }
  const res = await fetch(url, init);
  const text = await res.text();
  transcript.push({ asked, text });
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  const error = (parsed as { error?: { message?: string; json?: { message?: string } } } | null)?.error;
  return { status: res.status, body: parsed, message: error?.message ?? error?.json?.message };
}

/** A runner-API call. */
const call = (token: string, method: string, route: string, body?: unknown, headers?: Record<string, string>) =>
  request(`${server.url}${RUNNER_API}${route}`, `${method} ${route.split("?")[0]}`, token, method, body, headers);
/** A call on the console's public API (/api/v1/…) or tRPC (/api/trpc/…). */
const consoleApi = (token: string, method: string, route: string, body?: unknown) => request(`${server.url}${route}`, `${method} ${route.split("?")[0]}`, token, method, body);

/** A job attempt as a runner holds it. */
interface Cred {
  jobId: string;
  attemptId: string;
  token: string;
  artifactId: string;
}

const credOf = (c: ClaimResponse): Cred => ({ jobId: c.job.id, attemptId: c.attemptId, token: c.credential.token, artifactId: "" });

async function claimWith(runnerToken: string): Promise<Cred & { claim: ClaimResponse }> {
  const r = await call(runnerToken, "POST", "/claim", { waitSeconds: 0 });
  expect(r.status, r.message).toBe(200);
  return { ...credOf(r.body as ClaimResponse), claim: r.body as ClaimResponse };
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
const lockId = (c: { attemptId: string }) => `lock-${c.attemptId}`;
const lock = (c: Cred) => call(c.token, "POST", `/jobs/${c.jobId}/state/lock`, { ID: lockId(c), Operation: "OperationTypeApply", Who: "runner@test" });
const heartbeat = (c: { token: string; jobId: string; attemptId: string }) => call(c.token, "POST", `/jobs/${c.jobId}/heartbeat`, { attemptId: c.attemptId });
const secret = (c: { token: string; jobId: string }, name: string) => call(c.token, "GET", `/jobs/${c.jobId}/secrets/${name}`);
const events = (c: Cred, seq: number, line: string) =>
  call(c.token, "POST", `/jobs/${c.jobId}/events`, { attemptId: c.attemptId, events: [{ seq, ts: new Date().toISOString(), operation: "preview", type: "log", payload: { line } }] });

// ——— The matrix ———

const ROWS = [
  "own job",
  "other job of the organization",
  "other organization's job",
  "expired credential",
  "replaced attempt",
  "completed job",
  "revoked runner",
  "rotated token",
] as const;
type Row = (typeof ROWS)[number];

/**
 * Who calls, and on what: the bearer the runner-token routes get (the runner's token where the row is
 * about the runner, else the row's job credential, which is no runner token), the job credential and
 * the attempt it was issued for, and the job (and one of its artifacts) the path names.
 */
interface Holder {
  row: Row;
  runnerBearer: string;
  token: string;
  attemptId: string;
  jobId: string;
  artifactId: string;
}

/** Every runner-API route, called the way a runner calls it, in the order a runner calls them (the own-job row runs its job to its end). */
const ROUTES: Record<string, (h: Holder) => Promise<Answer>> = {
  "GET /whoami": (h) => call(h.runnerBearer, "GET", "/whoami"),
  "POST /claim": (h) => call(h.runnerBearer, "POST", "/claim", { waitSeconds: 0 }),
  "POST /jobs/[jobId]/heartbeat": (h) => heartbeat(h),
  "POST /jobs/[jobId]/steps/[step]/start": (h) => call(h.token, "POST", `/jobs/${h.jobId}/steps/preview/start`, { attemptId: h.attemptId }),
  "POST /jobs/[jobId]/events": (h) => events(h, 1, `sent as ${h.row}`),
  "GET /jobs/[jobId]/secrets/[name]": (h) => secret(h, "DB_PASSWORD"),
  "GET /jobs/[jobId]/connection": (h) => call(h.token, "GET", `/jobs/${h.jobId}/connection`),
  "GET /jobs/[jobId]/state": (h) => call(h.token, "GET", `/jobs/${h.jobId}/state`),
  "POST /jobs/[jobId]/state/lock": (h) => lock(h),
  // A change that makes exactly v4(1), compacted by the commit: the whole-state PUT after it is then an equal write.
  "POST /jobs/[jobId]/state/journal": (h) =>
    call(h.token, "POST", `/jobs/${h.jobId}/state/journal`, {
      step: "apply",
      lockId: lockId(h),
      entries: [{ seq: 1, baseSerial: 0, delta: { serial: 1, lineage: "lin-credentials", resources: [], fields: { version: 4, terraform_version: "1.8.0", outputs: {} } } }],
    }),
  "POST /jobs/[jobId]/state/journal/commit": (h) => call(h.token, "POST", `/jobs/${h.jobId}/state/journal/commit`, { step: "apply" }),
  "PUT /jobs/[jobId]/state": (h) => call(h.token, "PUT", `/jobs/${h.jobId}/state?lockId=${lockId(h)}`, v4(1)),
  "DELETE /jobs/[jobId]/state/lock": (h) => call(h.token, "DELETE", `/jobs/${h.jobId}/state/lock?id=${lockId(h)}`),
  "POST /jobs/[jobId]/artifacts": (h) => upload(h, "log", `sent as ${h.row}`, "matrix bytes"),
  "GET /jobs/[jobId]/artifacts/[artifactId]": (h) => call(h.token, "GET", `/jobs/${h.jobId}/artifacts/${h.artifactId}`),
  "POST /jobs/[jobId]/outputs": (h) => call(h.token, "POST", `/jobs/${h.jobId}/outputs`, { attemptId: h.attemptId, outputs: { sent_as: { value: h.row, sensitive: false } } }),
  "POST /jobs/[jobId]/steps/[step]/finish": (h) => call(h.token, "POST", `/jobs/${h.jobId}/steps/preview/finish`, { attemptId: h.attemptId, result: "succeeded" }),
  "POST /jobs/[jobId]/attempt/end": (h) => call(h.token, "POST", `/jobs/${h.jobId}/attempt/end`, { attemptId: h.attemptId, exitCode: 0, reason: "completed" }),
};
const RUNNER_TOKEN_ROUTES = ["GET /whoami", "POST /claim"];

/** The runner API's routes as its table declares them (server/runner-api/routes.ts): `METHOD /path/[param]`. */
const SERVED = runnerApiRoutes().map((r) => `${r.method} ${r.route}`);
/** The matrix's columns: the table's routes in its order, then any served route it lacks (those cells fail, naming the route). */
const COLUMNS = [...Object.keys(ROUTES).filter((r) => SERVED.includes(r)), ...SERVED.filter((r) => !(r in ROUTES))];

interface Expected {
  status: number;
  message?: string;
  body?: unknown;
}
const refused = (status: number, message: string): Expected => ({ status, message });
const answered = (status: number, body: unknown): Expected => ({ status, body });

let org: TestOrg;
let theirs: TestOrg;
let componentIds: string[];
const holders = {} as Record<Row, Holder>;
let expected: Record<Row, Record<string, Expected>>;
/** Runner tokens handed out in this process (not over HTTP): none may appear in any answer or log. */
const knownRunnerTokens: string[] = [];
/** Runner tokens handed out over the API: each in that one answer, and in no log. */
const apiRunnerTokens: string[] = [];
let live: { token: string; runnerId: string };
let ownJob: Cred;
let otherJob: Cred & { claim: ClaimResponse };
let lockAfterReplace: Answer;
let lateCalls: Record<string, Answer>;

/** An org runner (counted as Planton-hosted, so it may use Planton-managed state) and its token. */
async function runner(name: string, of: TestOrg = org) {
  const { runner, token } = await registerRunner(t.db, of.actor(), { name });
  await t.db.update(runners).set({ kind: "hosted" }).where(eq(runners.id, runner.id));
  knownRunnerTokens.push(token);
  return { runner, token };
}

/** A queued job whose IaC input references `refs` as secrets and deploys through `connection` (the input a claim hands over). */
async function job(of: TestOrg, componentId: string, operation: "preview" | "update", opts: { refs?: string[]; connection?: string } = {}) {
  const j = await createJob(t.db, of.actor(), { componentId, operation });
  const [row] = await t.db.select().from(infraJobs).where(eq(infraJobs.id, j.id));
  const refs = opts.refs ?? ["DB_PASSWORD"];
  await t.db
    .update(infraJobs)
    .set({
      iacInput: {
        ...row.iacInput!,
        variables: Object.fromEntries(refs.map((n) => [n.toLowerCase(), `$secret/${n}`])),
        ...(opts.connection ? { connection: { name: opts.connection, provider: "aws", mode: "stored" as const, config: { region: "eu-west-1" } } } : {}),
      },
    })
    .where(eq(infraJobs.id, j.id));
  return j;
}

async function addSecret(of: TestOrg, name: string, value: string, scope: "organization" | "environment" = "organization") {
  await t.db.insert(secrets).values({ id: newId("secret"), orgId: of.orgId, name, description: "", valueEncrypted: encryptSecret(value), scope });
}

/** A stored aws connection the whole organization may deploy through. */
async function awsConnection(of: TestOrg, name: string, keyId: string, secretKey: string) {
  const conn = await createConnection(t.db, of.actor(), { name, provider: "aws", config: { region: "eu-west-1" }, mode: "stored", credentials: { access_key_id: keyId, secret_access_key: secretKey } });
  await t.db.insert(connectionAuthorizations).values({ id: newId("connectionAuthorization"), connectionId: conn.id, scope: "organization" });
  return conn;
}

/** The answer of every cell: the table the matrix asserts. */
function expectedAnswers(f: { replaced: { first: Cred; second: Cred }; completed: Cred; revoked: Cred & { at: string }; rotated: Cred; theirJob: Cred }): Record<Row, Record<string, Expected>> {
  const { replaced, completed, revoked, rotated, theirJob } = f;
  const onJobRoutes = (e: Expected) => Object.fromEntries(COLUMNS.filter((r) => !RUNNER_TOKEN_ROUTES.includes(r)).map((r) => [r, e]));
  const onRunnerTokenRoutes = (e: Expected) => Object.fromEntries(RUNNER_TOKEN_ROUTES.map((r) => [r, e]));
  const notARunnerToken = onRunnerTokenRoutes(refused(401, "Nothing was done: send the runner token as Authorization: Bearer rnr_…."));
  const notThisJob = (target: Cred) => refused(403, `Nothing was done: this job credential is for job ${ownJob.jobId}, not ${target.jobId}. A credential works only for its own job.`);
  const stop = (c: Cred) => `Stop working on job ${c.jobId}.`;
  return {
    "own job": {
      "GET /whoami": answered(200, { runner: { id: live.runnerId, name: "r-live", kind: "hosted", orgId: org.orgId } }),
      "POST /claim": answered(204, ""),
      // A fresh credential is not renewed: the heartbeat hands out no second one.
      "POST /jobs/[jobId]/heartbeat": answered(200, { signal: "none", leaseExpiresAt: expect.any(String) }),
      "POST /jobs/[jobId]/steps/[step]/start": answered(200, { proceed: true }),
      "POST /jobs/[jobId]/events": answered(200, { acceptedThrough: 1 }),
      "GET /jobs/[jobId]/secrets/[name]": answered(200, { value: "hunter2" }),
      "GET /jobs/[jobId]/connection": answered(200, {
        provider: "aws",
        mode: "stored",
        env: { AWS_REGION: "eu-west-1", AWS_ACCESS_KEY_ID: "AKIAOURPROD", AWS_SECRET_ACCESS_KEY: "our-prod-secret-key" },
      }),
      "GET /jobs/[jobId]/state": answered(204, ""),
      "POST /jobs/[jobId]/state/lock": answered(200, { lock: expect.objectContaining({ ID: lockId(ownJob), Operation: "OperationTypeApply" }) }),
      "POST /jobs/[jobId]/state/journal": answered(200, { acceptedThrough: 1 }),
      "POST /jobs/[jobId]/state/journal/commit": answered(200, expect.objectContaining({ entries: 1, written: true, serial: 1 })),
      "PUT /jobs/[jobId]/state": answered(200, { ok: true, serial: 1, checksum: expect.any(String) }),
      "DELETE /jobs/[jobId]/state/lock": answered(200, { ok: true }),
      "POST /jobs/[jobId]/artifacts": answered(200, { artifactId: expect.stringMatching(/^art_/), sha256: createHash("sha256").update("matrix bytes").digest("hex") }),
      "GET /jobs/[jobId]/artifacts/[artifactId]": answered(200, "own job's input"),
      "POST /jobs/[jobId]/outputs": answered(200, { outputs: { sent_as: { value: "own job", sensitive: false } } }),
      "POST /jobs/[jobId]/steps/[step]/finish": answered(200, { next: "stop" }),
      "POST /jobs/[jobId]/attempt/end": answered(200, { ok: true }),
    },
    "other job of the organization": { ...notARunnerToken, ...onJobRoutes(notThisJob(otherJob)) },
    "other organization's job": { ...notARunnerToken, ...onJobRoutes(notThisJob(theirJob)) },
    "expired credential": { ...notARunnerToken, ...onJobRoutes(refused(401, "Nothing was done: the job credential expired. A runner renews it through its heartbeat while the job runs.")) },
    "replaced attempt": {
      ...notARunnerToken,
      ...onJobRoutes(
        refused(
          409,
          `Nothing was done: attempt ${replaced.first.attemptId} of job ${replaced.first.jobId} was replaced by attempt ${replaced.second.attemptId}; only the current attempt works on a job. ${stop(replaced.first)}`,
        ),
      ),
    },
    "completed job": {
      ...notARunnerToken,
      ...onJobRoutes(
        refused(
          409,
          `Nothing was done: job ${completed.jobId} is completed (succeeded) and its attempt ${completed.attemptId} has ended (completed), so its credential no longer works. ${stop(completed)}`,
        ),
      ),
      // Ending an ended attempt again (a retry) is a quiet no-op.
      "POST /jobs/[jobId]/attempt/end": answered(200, { ok: true }),
    },
    "revoked runner": {
      ...onRunnerTokenRoutes(
        refused(403, `Nothing was done: runner r-revoked was revoked at ${revoked.at} and may claim no more work. Stop this runner; an admin registers a new one in Settings → Runners.`),
      ),
      ...onJobRoutes(refused(403, `Nothing was done: runner r-revoked was revoked at ${revoked.at}, so its job credentials no longer work. ${stop(revoked)}`)),
    },
    "rotated token": {
      ...onRunnerTokenRoutes(
        refused(
          401,
          "Nothing was done: this runner token is not known (it may have been rotated, or the runner removed). Start the runner with its current token, or register it again in Settings → Runners.",
        ),
      ),
      ...onJobRoutes(
        refused(
          401,
          `Nothing was done: this job credential was issued under a runner token of r-rotated that has since been rotated, so it no longer works. ${stop(rotated)} Start the runner with its new token to claim new work.`,
        ),
      ),
    },
  };
}

beforeAll(async () => {
  t = await createTestDatabase();
  const made = await orgWithComponent(t.db, { components: 6, policy: { pauseBeforeApply: true } });
  org = made.org;
  componentIds = made.components.map((c) => c.id);
  const other = await orgWithComponent(t.db);
  theirs = other.org;
  await addSecret(org, "DB_PASSWORD", "hunter2");
  await addSecret(theirs, "DB_PASSWORD", "their-hunter2");
  await awsConnection(org, "aws-prod", "AKIAOURPROD", "our-prod-secret-key");
  await awsConnection(org, "aws-other", "AKIAOUROTHER", "our-other-secret-key");
  await awsConnection(theirs, "aws-prod", "AKIATHEIRPROD", "their-prod-secret-key");
  // The test's services and the console share the server key (orgWithComponent's helpers set it).
  // The matrix holds its attempts claimed, without heartbeats, for as long as the suite takes; on a busy
  // machine (or beside another test file) that outlasted the 30-second lease, the scheduler declared
  // the live runner lost, and the own job's rows failed. No row here is about leases: they outlast the suite.
  server = await startConsoleServer({ databaseUrl: t.url!, env: { PLANTON_LEASE_SECONDS: "3600" } });

  // The live attempt: one runner holding two running jobs of the organization, each with an artifact.
  {
    const { runner: r, token } = await runner("r-live");
    live = { token, runnerId: r.id };
    await job(org, componentIds[4], "preview", { connection: "aws-prod" });
    ownJob = await claimWith(token);
    await runSteps(ownJob, ["init", "refresh"]);
    ownJob.artifactId = ((await ok(upload(ownJob, "iac_input", "own input", "own job's input"))).body as { artifactId: string }).artifactId;
    await job(org, componentIds[5], "preview", { connection: "aws-other", refs: ["DB_PASSWORD", "PROD_ONLY", "GHOST", "THEIR_ONLY"] });
    otherJob = await claimWith(token);
    await ok(start(otherJob, "init"));
    otherJob.artifactId = ((await ok(upload(otherJob, "iac_input", "other input", "other job's input"))).body as { artifactId: string }).artifactId;
  }

  // Another organization's running job.
  const { token: theirToken } = await runner("r-theirs", theirs);
  await job(theirs, other.component.id, "preview", { connection: "aws-prod" });
  const theirJob = await claimWith(theirToken);
  await ok(start(theirJob, "init"));
  theirJob.artifactId = ((await ok(upload(theirJob, "iac_input", "their input", "their job's input"))).body as { artifactId: string }).artifactId;

  // Replaced attempt: the first attempt paused after its preview holding a lock, and its runner died; once approved, a second attempt took the job.
  let replaced: { first: Cred; second: Cred };
  {
    const { token } = await runner("r-replaced");
    await job(org, componentIds[0], "update");
    const first = await claimWith(token);
    await runSteps(first, ["init", "refresh"]);
    await ok(start(first, "preview"));
    await ok(lock(first));
    const plan = (await ok(upload(first, "plan", "tfplan", '{"plan":"reviewed"}'))).body as { artifactId: string; sha256: string };
    first.artifactId = plan.artifactId;
    expect((await ok(finish(first, "preview", { plan: { ...plan, summary: {} } }))).body).toEqual({ next: "stop" });
    await resumeJob(t.db, org.actor(), { jobId: first.jobId, expectedChecksum: plan.sha256 });
    const second = await claimWith(token);
    expect(second.jobId).toBe(first.jobId);
    await ok(start(second, "apply"));
    lockAfterReplace = await lock(second);
    replaced = { first, second };
  }

  // Completed job: the live attempt used every route, its last step completed the job, it flushed its last events and ended.
  let completed: Cred;
  {
    const { token } = await runner("r-completed");
    await job(org, componentIds[1], "preview");
    const c = await claimWith(token);
    await runSteps(c, ["init", "refresh"]);
    await ok(start(c, "preview"));
    c.artifactId = ((await ok(upload(c, "log", "live-artifact", "live"))).body as { artifactId: string }).artifactId;
    await ok(events(c, 800, "live line"));
    expect((await ok(secret(c, "DB_PASSWORD"))).body).toEqual({ value: "hunter2" });
    await ok(lock(c));
    await ok(call(c.token, "PUT", `/jobs/${c.jobId}/state?lockId=${lockId(c)}`, v4(90)));
    await ok(call(c.token, "DELETE", `/jobs/${c.jobId}/state/lock?id=${lockId(c)}`));
    await ok(heartbeat(c));
    expect((await ok(finish(c, "preview"))).body).toEqual({ next: "stop" });
    lateCalls = {
      retriedFinish: await finish(c, "preview"),
      events: await events(c, 901, "last line"),
      lock: await lock(c),
      heartbeat: await heartbeat(c),
      end: await call(c.token, "POST", `/jobs/${c.jobId}/attempt/end`, { attemptId: c.attemptId, exitCode: 0, reason: "completed" }),
    };
    completed = c;
  }

  // Rotated runner token: the credential was issued under the token that was rotated away.
  let rotated: Cred & { oldToken: string };
  {
    const { runner: r, token } = await runner("r-rotated");
    await job(org, componentIds[2], "preview");
    const c = await claimWith(token);
    await ok(start(c, "init"));
    c.artifactId = ((await ok(upload(c, "log", "live-artifact", "live"))).body as { artifactId: string }).artifactId;
    knownRunnerTokens.push((await rotateRunnerToken(t.db, org.actor(), { id: r.id })).token);
    rotated = { ...c, oldToken: token };
  }

  // Revoked runner.
  let revoked: Cred & { runnerToken: string; at: string };
  {
    const { runner: r, token } = await runner("r-revoked");
    await job(org, componentIds[3], "preview");
    const c = await claimWith(token);
    await ok(start(c, "init"));
    c.artifactId = ((await ok(upload(c, "log", "live-artifact", "live"))).body as { artifactId: string }).artifactId;
    const { runner: gone } = await revokeRunner(t.db, org.actor(), { id: r.id });
    revoked = { ...c, runnerToken: token, at: gone.revokedAt!.toISOString() };
  }

  // Expired: issued for the live attempt with the console's key, already past its expiry (no waiting on the clock).
  const expiredToken = (await issueJobCredential({ jobId: ownJob.jobId, orgId: org.orgId, attemptId: ownJob.attemptId, runnerTokenHash: sha256Hex(live.token) }, -60)).token;

  const on = (row: Row, cred: Cred, target: Cred, runnerBearer = cred.token): Holder => ({ row, runnerBearer, token: cred.token, attemptId: cred.attemptId, jobId: target.jobId, artifactId: target.artifactId });
  Object.assign(holders, {
    "own job": on("own job", ownJob, ownJob, live.token),
    "other job of the organization": on("other job of the organization", ownJob, otherJob),
    "other organization's job": on("other organization's job", ownJob, theirJob),
    "expired credential": on("expired credential", { ...ownJob, token: expiredToken }, ownJob),
    "replaced attempt": on("replaced attempt", replaced.first, replaced.first),
    "completed job": on("completed job", completed, completed),
    "revoked runner": on("revoked runner", revoked, revoked, revoked.runnerToken),
    "rotated token": on("rotated token", rotated, rotated, rotated.oldToken),
  } satisfies Record<Row, Holder>);

  expected = expectedAnswers({ replaced, completed, revoked, rotated, theirJob });
}, 240_000);

afterAll(async () => {
  await server?.stop();
  await t?.close();
});

describe("every runner-API route × every holder answers as the table says", () => {
  it("the table has a call for every route the runner API serves, and no call for a route that does not exist", () => {
    expect(SERVED.length).toBeGreaterThan(10);
    expect(SERVED.filter((r) => !(r in ROUTES))).toEqual([]);
    expect(Object.keys(ROUTES).filter((r) => !SERVED.includes(r))).toEqual([]);
  });

  it.each(ROWS.flatMap((row) => COLUMNS.map((route) => [row, route] as const)))("%s × %s", async (row, route) => {
    const want = expected[row][route];
    expect(ROUTES[route], `the matrix has no call for the runner route ${route}`).toBeDefined();
    expect(want, `the table has no expected answer for ${row} × ${route}`).toBeDefined();
    const got = await ROUTES[route]!(holders[row]);
    const seen = { status: got.status, message: got.message, ...("body" in want ? { body: got.body } : {}) };
    expect(seen).toEqual({ status: want.status, message: want.message, ...("body" in want ? { body: want.body } : {}) });
  });

  it("and nothing a refused holder sent was stored", async () => {
    const refusedRows = ROWS.filter((r) => r !== "own job");
    const stored = await t.db.select({ name: artifacts.name }).from(artifacts);
    expect(stored.map((a) => a.name).filter((n) => refusedRows.some((r) => n === `sent as ${r}`))).toEqual([]);
    const lines = (await t.db.select({ payload: progressEvents.payload }).from(progressEvents)).map((e) => (e.payload as { line?: string }).line);
    expect(lines.filter((l) => refusedRows.some((r) => l === `sent as ${r}`))).toEqual([]);
    const outputs = (await t.db.select({ outputs: infraJobs.outputs }).from(infraJobs)).map((j) => JSON.stringify(j.outputs ?? {}));
    expect(outputs.filter((o) => refusedRows.some((r) => o.includes(`"${r}"`)))).toEqual([]);
    // Only the own job's component had its state written (serial 1), and no refused holder took a lock.
    const states = await t.db.select().from(stateObjects);
    expect(states.filter((s) => s.serial === 1).map((s) => s.componentId)).toEqual([componentIds[4]]);
    expect(states.map((s) => (s.lockInfo as { ID?: string } | null)?.ID).filter((id) => refusedRows.some((r) => id === lockId(holders[r])))).toEqual([]);
  });
});

describe("renewal", () => {
  it("a credential close to expiry is renewed through the heartbeat while its job runs, for at most an hour; never once the job completed", async () => {
    // A claim's credential lasts an hour at most, and so does one asked for longer.
    expect(Date.parse(otherJob.claim.credential.expiresAt) - Date.now()).toBeLessThanOrEqual(3600_000);
    const long = await issueJobCredential({ jobId: otherJob.jobId, orgId: org.orgId, attemptId: otherJob.attemptId, runnerTokenHash: sha256Hex(live.token) }, 24 * 3600);
    expect(Date.parse(long.expiresAt) - Date.now()).toBeLessThanOrEqual(3600_000);

    const soon = (c: Cred, hash: string) => issueJobCredential({ jobId: c.jobId, orgId: org.orgId, attemptId: c.attemptId, runnerTokenHash: hash }, 60);
    const running = await heartbeat({ ...otherJob, token: (await soon(otherJob, sha256Hex(live.token))).token });
    expect(running.status, running.message).toBe(200);
    const renewed = (running.body as { credential?: { token: string; expiresAt: string } }).credential!;
    expect(renewed.token).toMatch(/^jcr_/);
    expect(Date.parse(renewed.expiresAt) - Date.now()).toBeLessThanOrEqual(3600_000);
    expect(Date.parse(renewed.expiresAt) - Date.now()).toBeGreaterThan(3000_000);
    // The renewed credential works on its job like the first.
    expect(await secret({ ...otherJob, token: renewed.token }, "DB_PASSWORD")).toMatchObject({ status: 200, body: { value: "hunter2" } });

    // The own job completed in the matrix: a credential of its attempt, however fresh, gets no new one.
    const done = await heartbeat({ ...ownJob, token: (await soon(ownJob, sha256Hex(live.token))).token });
    expect(done).toMatchObject({
      status: 409,
      message: `Nothing was done: job ${ownJob.jobId} is completed (succeeded) and its attempt ${ownJob.attemptId} has ended (completed), so its credential no longer works. Stop working on job ${ownJob.jobId}.`,
    });
    expect(done.body).not.toHaveProperty("credential");
  });
});

describe("what a job credential reads", () => {
  it("only the secrets its job references, where their scope allows, of its own organization", async () => {
    await addSecret(org, "PROD_ONLY", "prod-value", "environment");
    await addSecret(org, "A_ONLY", "a-value");
    await addSecret(theirs, "THEIR_ONLY", "their-value");
    // The other job references DB_PASSWORD, PROD_ONLY (scoped to no environment of dev's), GHOST (no such secret) and THEIR_ONLY (another organization's).
    expect(await secret(otherJob, "DB_PASSWORD")).toMatchObject({ status: 200, body: { value: "hunter2" } });
    expect(await secret(otherJob, "PROD_ONLY")).toMatchObject({
      status: 403,
      message: "Nothing ran: environment dev may not use the secret PROD_ONLY. Allow it in Settings → Secrets & Variables (scope: environments dev, or the organization), then run the job again.",
    });
    expect(await secret(otherJob, "GHOST")).toMatchObject({
      status: 404,
      message: "Nothing ran: the spec references the secret GHOST, which does not exist. Create it in Settings → Secrets & Variables, or fix the reference in the component's spec, then run the job again.",
    });
    expect(await secret(otherJob, "THEIR_ONLY")).toMatchObject({ status: 404, message: expect.stringContaining("the secret THEIR_ONLY, which does not exist") });
    expect(await secret(otherJob, "A_ONLY")).toMatchObject({
      status: 403,
      message: `Nothing was read: job ${otherJob.jobId} does not reference the secret A_ONLY. A job credential reads only the secrets its IaC input names.`,
    });
    // Once the scope allows the job's environment, the same credential reads it.
    const [dev] = await t.db.select().from(environments).where(and(eq(environments.orgId, org.orgId), eq(environments.name, "dev")));
    const [prodOnly] = await t.db.select().from(secrets).where(eq(secrets.name, "PROD_ONLY"));
    await t.db.insert(secretEnvironments).values({ secretId: prodOnly.id, environmentId: dev.id });
    expect(await secret(otherJob, "PROD_ONLY")).toMatchObject({ status: 200, body: { value: "prod-value" } });
  });

  it("only the connection its job deploys through, while the connection is authorized for the job's environment", async () => {
    const read = () => call(otherJob.token, "GET", `/jobs/${otherJob.jobId}/connection`);
    expect(await read()).toMatchObject({
      status: 200,
      body: { provider: "aws", mode: "stored", env: { AWS_REGION: "eu-west-1", AWS_ACCESS_KEY_ID: "AKIAOUROTHER", AWS_SECRET_ACCESS_KEY: "our-other-secret-key" } },
    });
    // An admin withdraws the connection's authorization mid-job: its credentials are handed over no more.
    const [conn] = await t.db.select().from(connections).where(and(eq(connections.orgId, org.orgId), eq(connections.name, "aws-other")));
    await t.db.delete(connectionAuthorizations).where(eq(connectionAuthorizations.connectionId, conn.id));
    const refusedRead = await read();
    expect(refusedRead).toMatchObject({
      status: 403,
      message:
        "Nothing ran: environment dev may not use the aws connection aws-other. Authorize it (planton connection auth create --provider aws --connection aws-other --scope environment --environments dev), or make it the organization's (--scope organization), then run the job again.",
    });
    expect(JSON.stringify(refusedRead.body)).not.toContain("our-other-secret-key");
  });

  it("only the variables its job references, where their scope allows, handed over in the claim", async () => {
    await t.db.insert(variables).values([
      { id: newId("variable"), orgId: org.orgId, name: "SITE_TITLE", value: "Title from a variable" },
      { id: newId("variable"), orgId: org.orgId, name: "UNUSED_VAR", value: "not-for-this-job" },
    ]);
    const c = await draftComponent(t.db, org.actor(), { environment: "dev", kind: "StaticSite", name: "titled", spec: { site_name: "titled", title: "$var/SITE_TITLE" }, connection: "local-sandbox" });
    await createJob(t.db, org.actor(), { componentId: c.id, operation: "preview" });
    const claimed = await claimWith(live.token);
    expect(claimed.claim.input.variables).toMatchObject({ title: "Title from a variable" });
    expect(JSON.stringify(claimed.claim)).not.toContain("not-for-this-job");
    expect(JSON.stringify(claimed.claim)).not.toContain("hunter2");
  });
});

describe("a job credential or a runner token on the console's own API", () => {
  it("is not accepted: it changes and reads nothing there, and the refusal says what it is", async () => {
    const credential = otherJob.token;
    const refusals = {
      [credential]:
        "Nothing was done: the bearer token is a job credential (jcr_…), which works only on the runner API (/api/runner/v1) for its own job, not on the console's API. Sign in, or send an API token (Settings → API Tokens).",
      [live.token]: "Nothing was done: the bearer token is a runner token (rnr_…), which works only on the runner API (/api/runner/v1), not on the console's API. Sign in, or send an API token (Settings → API Tokens).",
    };
    for (const [bearer, refusal] of Object.entries(refusals)) {
      const tries = [
        await consoleApi(bearer, "GET", `/api/v1/jobs/${otherJob.jobId}`),
        await consoleApi(bearer, "POST", `/api/v1/jobs/${otherJob.jobId}/cancel`, {}),
        await consoleApi(bearer, "POST", "/api/v1/runners", { name: "smuggled" }),
        await consoleApi(bearer, "GET", `/api/trpc/secrets.list?input=${encodeURIComponent(JSON.stringify({ json: { org: org.slug } }))}`),
        await consoleApi(bearer, "POST", "/api/trpc/jobs.cancel", { json: { org: org.slug, jobId: otherJob.jobId } }),
      ];
      expect(tries.map((a) => [a.status, a.message])).toEqual(tries.map(() => [401, refusal]));
    }
    const [j] = await t.db.select().from(infraJobs).where(eq(infraJobs.id, otherJob.jobId));
    expect(j).toMatchObject({ status: "running", cancelRequestedAt: null });
    expect(await t.db.select().from(runners).where(eq(runners.name, "smuggled"))).toEqual([]);
  });
});

describe("the live attempt", () => {
  it("is never blocked by the lock its replaced predecessor left", () => {
    expect(lockAfterReplace.status, lockAfterReplace.message).toBe(200);
  });

  it("after its last step completed the job, still flushes its last events and ends its attempt, but works on the job no more", () => {
    expect(lateCalls.retriedFinish).toMatchObject({ status: 200, body: { next: "stop" } });
    expect(lateCalls.events).toMatchObject({ status: 200, body: { acceptedThrough: 901 } });
    const { jobId } = holders["completed job"];
    const over = `Nothing was done: job ${jobId} is completed (succeeded); a job credential works only while its job runs. Stop working on job ${jobId}.`;
    expect(lateCalls.lock).toMatchObject({ status: 409, message: over });
    expect(lateCalls.heartbeat).toMatchObject({ status: 409, message: over });
    expect(lateCalls.end.status).toBe(200);
  });

  it("of the next job locks and writes the state when the runner before it was lost mid-apply, and the lost runner's credential is refused", async () => {
    const { org: other, component } = await orgWithComponent(t.db);
    const { token } = await runner("r-lost", other);
    const lostJob = await createJob(t.db, other.actor(), { componentId: component.id, operation: "update" });
    const lost = await claimWith(token);
    await runSteps(lost, ["init", "refresh", "preview"]);
    await ok(start(lost, "apply"));
    await ok(lock(lost));
    await ok(call(lost.token, "PUT", `/jobs/${lost.jobId}/state?lockId=${lockId(lost)}`, v4(1)));
    // The runner stops heartbeating: its lease lapses and the console's scheduler declares it lost.
    await t.db.update(infraJobs).set({ leaseExpiresAt: new Date(Date.now() - 1000) }).where(eq(infraJobs.id, lostJob.id));
    await expect.poll(async () => (await t.db.select().from(infraJobs).where(eq(infraJobs.id, lostJob.id)))[0].reason, { timeout: 30_000 }).toBe("runner lost");

    await createJob(t.db, other.actor(), { componentId: component.id, operation: "update" });
    const next = await claimWith(token);
    await runSteps(next, ["init", "refresh", "preview"]);
    await ok(start(next, "apply"));
    expect((await lock(next)).status).toBe(200);
    expect((await ok(call(next.token, "PUT", `/jobs/${next.jobId}/state?lockId=${lockId(next)}`, v4(2)))).body).toMatchObject({ serial: 2 });

    const refusedPut = await call(lost.token, "PUT", `/jobs/${lost.jobId}/state?lockId=${lockId(lost)}`, v4(3));
    expect(refusedPut).toMatchObject({ status: 409, message: expect.stringContaining(`job ${lost.jobId} is completed (failed) and its attempt ${lost.attemptId} has ended (runner lost)`) });
    expect((await lock(lost)).status).toBe(409);
    const [st] = await t.db.select().from(stateObjects).where(eq(stateObjects.componentId, component.id));
    expect(st).toMatchObject({ serial: 2, lockedByJob: next.jobId, lockInfo: { ID: lockId(next) } });
  });
});

describe("what a runner may upload", () => {
  it("refuses server-owned event types and output names the secret store cannot hold, naming them", async () => {
    const { org: other, component } = await orgWithComponent(t.db);
    const { token } = await runner("r-uploads", other);
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
    const [row] = await t.db.select().from(infraJobs).where(eq(infraJobs.id, c.jobId));
    expect(row).toMatchObject({ status: "running", outputs: null });
    expect((await t.db.select().from(progressEvents).where(eq(progressEvents.jobId, c.jobId))).filter((e) => e.attemptId)).toEqual([]);
  });

  it("is answered by the console's own server (not Next.js) as a client expects: a large JSON answer gzip'd when accepted, a body over the bound refused unread, an address or method no route serves refused naming it", async () => {
    const { org: other, component } = await orgWithComponent(t.db);
    const { token } = await runner("r-edge", other);
    await createJob(t.db, other.actor(), { componentId: component.id, operation: "preview" });
    // undici's fetch asks for gzip and unpacks it; the header says what came over the wire.
    const claimed = await fetch(`${server.url}${RUNNER_API}/claim`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ waitSeconds: 0 }) });
    expect([claimed.status, claimed.headers.get("content-encoding"), claimed.headers.get("x-content-type-options")]).toEqual([200, "gzip", "nosniff"]);
    const c = credOf((await claimed.json()) as ClaimResponse);
    const small = await fetch(`${server.url}${RUNNER_API}/whoami`, { headers: { authorization: `Bearer ${token}` } });
    expect([small.status, small.headers.get("content-encoding")]).toEqual([200, null]);

    // Declared larger than the bound: refused before a byte of it is read (the client never sends it).
    const declared = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request(`${server.url}${RUNNER_API}/jobs/${c.jobId}/events`, {
        method: "POST",
        headers: { authorization: `Bearer ${c.token}`, "content-type": "application/json", "content-length": String(MAX_RUNNER_BODY_BYTES + 1) },
      });
      req.on("response", (res) => {
        let text = "";
        res.on("data", (d) => (text += d));
        res.on("end", () => (resolve({ status: res.statusCode!, text }), req.destroy()));
      });
      req.on("error", reject);
      req.flushHeaders();
    });
    expect(declared.status).toBe(400);
    expect(JSON.parse(declared.text).error.message).toBe("Nothing was done: the body is larger than 64 MiB. Send less at a time.");

    expect(await call(c.token, "GET", `/jobs/${c.jobId}/nowhere`)).toMatchObject({
      status: 404,
      message: `Nothing was done: there is no GET ${RUNNER_API}/jobs/${c.jobId}/nowhere. The REST API is listed at /api/v1/openapi.json; runners speak /api/runner/v1 (lib/runner-protocol.ts).`,
    });
    expect(await call(c.token, "DELETE", `/jobs/${c.jobId}/events`)).toMatchObject({ status: 404, message: expect.stringContaining(`there is no DELETE ${RUNNER_API}/jobs/${c.jobId}/events.`) });
    expect(await call(c.token, "GET", `/jobs/${c.jobId}/secrets/%E0%A4%A`)).toMatchObject({ status: 400, message: expect.stringContaining("malformed %-escape") });
    expect((await t.db.select().from(progressEvents).where(eq(progressEvents.jobId, c.jobId))).filter((e) => e.attemptId)).toEqual([]);
  });

  it("GET /whoami refuses a token it does not know", async () => {
    expect(await call("rnr_unknown", "GET", "/whoami")).toMatchObject({ status: 401, message: expect.stringContaining("this runner token is not known") });
  });
});

describe("tokens and credentials", () => {
  let processLog = "";

  it("a runner registered and rotated over the API, and run as a real runner process on a job that reads a secret, works", async () => {
    const { org: other } = await orgWithComponent(t.db);
    const admin = (await createApiToken(t.db, other.actor("admin"), { name: "matrix-admin" })).token;
    const registered = await consoleApi(admin, "POST", "/api/v1/runners", { name: "r-process" });
    expect(registered.status, registered.message).toBe(201);
    const rotated = await consoleApi(admin, "POST", "/api/v1/runners/r-process/rotate-token", {});
    expect(rotated.status, rotated.message).toBe(200);
    const token = (rotated.body as { token: string }).token;
    expect(token).toMatch(/^rnr_/);
    expect(token).not.toBe((registered.body as { token: string }).token);
    apiRunnerTokens.push((registered.body as { token: string }).token, token);
    await t.db.update(runners).set({ kind: "hosted" }).where(eq(runners.name, "r-process"));
    await addSecret(other, "SITE_TITLE", "title-from-a-secret");
    const c = await draftComponent(t.db, other.actor(), { environment: "dev", kind: "StaticSite", name: "secret-titled", spec: { site_name: "secret-titled", title: "$secret/SITE_TITLE" }, connection: "local-sandbox" });
    const j = await createJob(t.db, other.actor(), { componentId: c.id, operation: "preview" });

    const work = fs.mkdtempSync(path.join(os.tmpdir(), "planton-matrix-runner-"));
    const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "runner/main.ts", "--url", server.url, "--work-dir", work, "--name", "r-process"], {
      cwd: root,
      env: { ...process.env, PLANTON_RUNNER_TOKEN: token, PLANTON_RUNNER_HEARTBEAT_MS: "200" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout!.on("data", (d) => (processLog += d));
    child.stderr!.on("data", (d) => (processLog += d));
    const exited = new Promise((r) => child.once("exit", r));
    try {
      await expect.poll(async () => (await t.db.select().from(infraJobs).where(eq(infraJobs.id, j.id)))[0].result, { timeout: 60_000 }).toBe("succeeded");
      await expect.poll(() => processLog, { timeout: 15_000 }).toContain('"msg":"attempt ended"');
      // Answers given to someone else about the runner and the job.
      for (const route of ["/api/v1/runners", "/api/v1/runners/r-process", `/api/v1/jobs/${j.id}`, `/api/v1/jobs/${j.id}/events`]) {
        const a = await consoleApi(admin, "GET", route);
        expect(a.status, `${route}: ${a.message}`).toBe(200);
      }
    } finally {
      child.kill("SIGTERM");
      await exited;
      fs.rmSync(work, { recursive: true, force: true });
      fs.rmSync(`/tmp/planton-test-${other.slug}`, { recursive: true, force: true });
    }
  });

  it("are never logged, by the console or the runner, nor are the secrets they read", () => {
    const logs = { console: server.output(), runner: processLog };
    expect(logs.runner).toContain('"msg":"job claimed"');
    for (const [who, text] of Object.entries(logs)) {
      expect(text.match(/jcr_eyJ[\w.-]*/g), `${who} log`).toBeNull();
      expect([...knownRunnerTokens, ...apiRunnerTokens].filter((tk) => text.includes(tk)), `${who} log`).toEqual([]);
      // Nor the secrets they read.
      expect(["hunter2", "our-prod-secret-key", "our-other-secret-key", "title-from-a-secret"].filter((v) => text.includes(v)), `${who} log`).toEqual([]);
    }
  });

  it("are returned once: a credential only by the claim (or the heartbeat that renewed it), a runner token only by the register or rotate that made it", () => {
    const handedOut = new Map<string, string[]>();
    for (const { asked, text } of transcript) {
      for (const tk of new Set(text.match(/jcr_eyJ[\w.-]+|rnr_[\w-]{32}(?![\w-])/g) ?? [])) handedOut.set(tk, [...(handedOut.get(tk) ?? []), asked]);
    }
    expect(handedOut.size).toBeGreaterThan(10);
    const handsOut = (tk: string, asked: string) =>
      tk.startsWith("jcr_") ? asked === "POST /claim" || /^POST \/jobs\/[^/]+\/heartbeat$/.test(asked) : /^POST \/api\/v1\/runners(\/[^/]+\/rotate-token)?$/.test(asked);
    const wrong = [...handedOut].filter(([tk, asked]) => asked.length !== 1 || !handsOut(tk, asked[0])).map(([tk, asked]) => `${tk.slice(0, 10)}… in ${asked.join(", ")}`);
    expect(wrong).toEqual([]);
    expect(apiRunnerTokens.map((tk) => handedOut.get(tk))).toEqual([["POST /api/v1/runners"], ["POST /api/v1/runners/r-process/rotate-token"]]);
    // The runner tokens handed out in this process never came back in any answer.
    expect(knownRunnerTokens.filter((tk) => transcript.some((a) => a.text.includes(tk)))).toEqual([]);
  });
});
