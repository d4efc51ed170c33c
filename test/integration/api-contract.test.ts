// The public API's contract, against the built console on a real Postgres with a real runner: the
// OpenAPI document it serves is valid and lists every public procedure and every route under
// /api/v1; every method of the typed client (lib/client) is called, and each answer matches the
// document's schema for its route. A new client method without a case here fails the last test.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { createPlantonClient, PlantonApiError, type PlantonClient } from "../../lib/client";
import { readEventStream } from "../../lib/client/sse";
import { decodeEventMessage, JOB_STREAM_END_EVENT, jobEventStreamPath } from "../../lib/job-event-stream";
import { stateBackends } from "../../db/schema";
import { newId } from "../../lib/ids";
import { publicProcedures } from "../../server/public-api/openapi";
import { createApiToken } from "../../server/services/settings/api-tokens";
import { seedTestOrg } from "../fixtures";
import { startJobStack, type JobStack } from "./harness";

let stack: JobStack;
let doc: { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>> };
let client: PlantonClient;
const called = new Set<string>();
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);

/** The client, recording which of its methods were called. */
function recording<T extends object>(target: T, prefix = ""): T {
  return new Proxy(target, {
    get(obj, key: string) {
      const value = Reflect.get(obj, key);
      if (typeof value === "function") {
        return (...args: unknown[]) => {
          called.add(prefix + key);
          return value.apply(obj, args);
        };
      }
      return value && typeof value === "object" ? recording(value, `${prefix}${key}.`) : value;
    },
  });
}

/** Every callable path of the client: `jobs.get`, `whoami`, … */
function methodsOf(obj: object, prefix = ""): string[] {
  return Object.entries(obj).flatMap(([k, v]) => (typeof v === "function" ? [prefix + k] : v && typeof v === "object" ? methodsOf(v, `${prefix}${k}.`) : []));
}

/** Asserts `value` matches the document's JSON answer for `method path` with `status`. */
function conforms(method: string, route: string, status: number, value: unknown) {
  const schema = doc.paths[route]?.[method]?.responses[String(status)]?.content?.["application/json"]?.schema;
  expect(schema, `the document has a ${status} JSON answer for ${method.toUpperCase()} ${route}`).toBeDefined();
  const validate = ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/')));
  const ok = validate(value);
  expect(ok ? [] : validate.errors, `${method.toUpperCase()} ${route} answered off its schema`).toEqual([]);
}

beforeAll(async () => {
  stack = await startJobStack();
  await stack.component("site", "dev", "StaticSite", { site_name: "contract" });
  await stack.component("gated", "dev", "StaticSite", { site_name: "gated" });
  await stack.component("held", "dev", "StaticSite", { site_name: "held" });
  await stack.componentPolicy("gated", { pauseBeforeApply: true, previewBeforeApply: true });
  await stack.componentPolicy("held", { manualStart: true });
  await stack.startRunner("runner-contract", 2);
  doc = await (await fetch(`${stack.server.url}/api/v1/openapi.json`)).json();
  ajv.addSchema({ $id: "openapi", components: (doc as unknown as { components: object }).components });
  client = recording(createPlantonClient({ url: stack.server.url, token: await stack.tokenFor("engineer") }));
}, 180_000);

afterAll(async () => {
  await stack?.close();
});

describe("the OpenAPI document", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const result = await new Validator().validate(structuredClone(doc) as never);
    expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("lists every public procedure at its method and path", () => {
    const procedures = publicProcedures();
    expect(procedures.length).toBeGreaterThan(10);
    for (const p of procedures) {
      const route = p.meta.openapi.path.replace(/\/$/, "");
      const op = doc.paths[route]?.[p.meta.openapi.method.toLowerCase()] as { operationId?: string } | undefined;
      expect(op, `${p.path} is in the document at ${p.meta.openapi.method} ${route}`).toBeDefined();
      expect(op!.operationId).toBe(p.path.replaceAll(".", "-"));
    }
  });

  it("documents every route file under /api/v1", () => {
    const dir = path.resolve(import.meta.dirname, "../../app/api/v1");
    const routes = (fs.readdirSync(dir, { recursive: true }) as string[])
      .filter((f) => f.endsWith("route.ts"))
      .map((f) => `/${path.dirname(f)}`.replace(/\[(\w+)\]/g, "{$1}"))
      .filter((r) => r !== "/[...path]" && r !== "/openapi.json");
    expect(routes.length).toBeGreaterThan(0);
    for (const r of routes) expect(Object.keys(doc.paths), `route ${r}`).toContain(r);
  });

  it("leaves out /metrics, which is the operator's scrape endpoint behind its own token, not the public API", () => {
    // app/metrics/route.ts is outside app/api/v1, so the walk above does not ask for it; nor may the document list it.
    expect(fs.existsSync(path.resolve(import.meta.dirname, "../../app/metrics/route.ts"))).toBe(true);
    expect(Object.keys(doc.paths).filter((p) => p.includes("metrics"))).toEqual([]);
  });
});

describe("the typed client against the real server", () => {
  let jobId: string;

  it("whoami and preflight", async () => {
    conforms("get", "/whoami", 200, await client.whoami());
    const pre = await client.preflight({ kind: "StaticSite" });
    expect(pre.reports.map((r) => r.environment).sort()).toEqual(["dev", "prod", "staging"]);
    conforms("get", "/preflight", 200, pre);
    conforms("get", "/preflight", 200, await client.preflight({ kind: "StaticSite", environment: "dev" }));
  });

  it("creates a job, reads it, its list, events, stream, artifacts, IaC input and plan, and reruns it", async () => {
    const created = await client.jobs.create(stack.ids.site, { operation: "update", versionMessage: "contract" });
    conforms("post", "/components/{componentId}/jobs", 201, created);
    jobId = created.id;
    await stack.finished(jobId);
    const job = await client.jobs.get(jobId);
    expect(job.result, job.reason ?? "").toBe("succeeded");
    conforms("get", "/jobs/{id}", 200, job);
    conforms("get", "/components/{componentId}/jobs", 200, await client.components.listJobs(stack.ids.site, { limit: 5 }));
    const page = await client.jobs.list(stack.ids.site, { limit: 1 });
    expect(page.jobs[0].id).toBe(jobId);
    conforms("get", "/components/{componentId}/jobs", 200, page);
    const search = await client.jobs.search({ componentId: stack.ids.site, status: "completed", limit: 10 });
    expect(search.jobs.map((j) => j.id)).toContain(jobId);
    conforms("get", "/jobs", 200, search);
    const events = await client.jobs.events(jobId, 0, 5000);
    expect(events.events.length).toBe(events.lastSeq);
    conforms("get", "/jobs/{id}/events", 200, events);
    const streamed = [];
    for await (const e of client.jobs.streamEvents(jobId)) streamed.push(e);
    expect(streamed.map((e) => e.seq)).toEqual(events.events.map((e) => e.seq));
    const eventSchema = ajv.compile({ $ref: "openapi#/components/schemas/ProgressEvent" });
    expect(streamed.every((e) => eventSchema(e)), JSON.stringify(eventSchema.errors)).toBe(true);
    const artifacts = await client.jobs.listArtifacts(jobId);
    conforms("get", "/jobs/{id}/artifacts", 200, { artifacts });
    const readable = artifacts.find((a) => !a.encrypted)!;
    expect((await client.jobs.getArtifact(jobId, readable.id)).length).toBe(readable.size);
    conforms("get", "/jobs/{id}/iac-input", 200, await client.jobs.getIacInput(jobId));
    conforms("get", "/jobs/{id}/plan", 200, await client.jobs.getPlan(jobId));
    const rerun = await client.jobs.rerun(jobId, { versionMessage: "again" });
    expect(rerun.rerunOf).toBe(jobId);
    conforms("post", "/jobs/{jobId}/rerun", 201, rerun);
    await stack.finished(rerun.id);
  });

  it("approves a paused job with the reviewed plan's checksum, and cancels a held one", async () => {
    const paused = await client.jobs.create(stack.ids.gated, { operation: "update" });
    await stack.waitFor(paused.id, (j) => j.status === "awaiting_approval");
    const plan = await client.jobs.getPlan(paused.id);
    const resumed = await client.jobs.resume(paused.id, { expectedChecksum: plan.checksum, message: "looks right" });
    expect(resumed.approval.planSha256).toBe(plan.checksum);
    conforms("post", "/jobs/{jobId}/resume", 200, resumed);
    expect((await stack.finished(paused.id)).result).toBe("succeeded");

    const held = await client.jobs.create(stack.ids.held, { operation: "update" });
    await stack.waitFor(held.id, (j) => j.status === "awaiting_approval");
    const cancelled = await client.jobs.cancel(held.id);
    expect(cancelled.result).toBe("cancelled");
    conforms("post", "/jobs/{jobId}/cancel", 200, cancelled);
  });

  it("reads, verifies and exports the audit record, the export also with a viewer's session cookie", async () => {
    const page = await client.audit.list({ action: "job", limit: 2 });
    expect(page.events.length).toBe(2);
    expect(page.events.every((e) => e.action.startsWith("job."))).toBe(true);
    conforms("get", "/audit", 200, page);
    const next = await client.audit.list({ action: "job", limit: 2, cursor: page.nextCursor! });
    expect(next.events[0].seq).toBeLessThan(page.events[1].seq);
    const verified = await client.audit.verify();
    expect(verified).toMatchObject({ ok: true, broken: null, from: { seq: 0, checkpoint: null } });
    conforms("get", "/audit/verify", 200, verified);
    const checkpoints = await client.audit.checkpoints();
    expect(checkpoints).toEqual({ checkpoints: [] });
    conforms("get", "/audit/checkpoints", 200, checkpoints);

    const json = JSON.parse(await new Response(await client.audit.export({ action: "job" }, "json")).text()) as { seq: number }[];
    expect(json.map((e) => e.seq).slice(-2)).toEqual(page.events.map((e) => e.seq).reverse());
    const eventSchema = ajv.compile({ $ref: "openapi#/components/schemas/AuditEvent" });
    expect(json.every((e) => eventSchema(e)), JSON.stringify(eventSchema.errors)).toBe(true);
    const csv = await new Response(await client.audit.export({ action: "job.create" })).text();
    expect(csv.split("\r\n")[0]).toBe("seq,at,actorLabel,action,targetKind,targetName,targetId,environment,result,summary,clientAddress,changes,hash");

    const signIn = await fetch(`${stack.server.url}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: stack.server.url },
      body: JSON.stringify({ email: stack.org.users.viewer.email, password: "correct-horse-battery" }),
    });
    const cookie = signIn.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
    const download = await fetch(`${stack.server.url}/api/v1/audit/export?org=${stack.org.slug}&format=csv&action=job.create`, { headers: { cookie } });
    expect(download.status).toBe(200);
    expect(download.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(download.headers.get("content-disposition")).toBe(`attachment; filename="audit-${stack.org.slug}-${new Date().toISOString().slice(0, 10)}.csv"`);
    expect(await download.text()).toBe(csv);
    const bad = await fetch(`${stack.server.url}/api/v1/audit/export?org=${stack.org.slug}&from=last-week`, { headers: { cookie } });
    expect([bad.status, (await bad.json()).error.message]).toEqual([400, "Nothing was exported: from: Give a time as ISO 8601, for example 2026-11-24T00:00:00Z"]);
    const anonymous = await fetch(`${stack.server.url}/api/v1/audit/export?org=${stack.org.slug}`);
    expect(anonymous.status).toBe(401);
  });

  it("streams a job's events to the console's session cookie with ?org=, resumed after Last-Event-ID, and ends the stream with its end message", async () => {
    const signIn = await fetch(`${stack.server.url}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: stack.server.url },
      body: JSON.stringify({ email: stack.org.users.viewer.email, password: "correct-horse-battery" }),
    });
    const cookie = signIn.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
    const url = `${stack.server.url}/api/v1${jobEventStreamPath(jobId, { org: stack.org.slug })}`;
    const res = await fetch(url, { headers: { cookie, "last-event-id": "2" } });
    expect([res.status, res.headers.get("content-type")]).toEqual([200, "text/event-stream; charset=utf-8"]);
    const messages = [];
    for await (const m of readEventStream(res.body!)) messages.push(m);
    const all = (await client.jobs.events(jobId, 0, 5000)).events;
    const streamed = messages.filter((m) => m.event === "message");
    expect(streamed.map((m) => decodeEventMessage(m.data))).toEqual(all.slice(2));
    expect(streamed.map((m) => m.id)).toEqual(all.slice(2).map((e) => String(e.seq)));
    expect(messages.at(-1)!.event).toBe(JOB_STREAM_END_EVENT);
    expect((await fetch(url)).status).toBe(401);
  });

  it("streams gzip-compressed to a client that accepts it (as browsers and fetch do) and plain to one that does not, the same messages either way", async () => {
    const token = await stack.tokenFor("viewer");
    const read = (acceptEncoding?: string) =>
      new Promise<{ encoding: string | undefined; vary: string | undefined; body: Buffer }>((resolve, reject) =>
        http
          .get(`${stack.server.url}/api/v1${jobEventStreamPath(jobId)}`, { headers: { authorization: `Bearer ${token}`, ...(acceptEncoding ? { "accept-encoding": acceptEncoding } : {}) } }, (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("end", () => resolve({ encoding: res.headers["content-encoding"], vary: res.headers.vary, body: Buffer.concat(chunks) }));
            res.on("error", reject);
          })
          .on("error", reject),
      );
    const messages = async (body: Buffer) => {
      const out = [];
      for await (const m of readEventStream(new Response(new Uint8Array(body)).body!)) out.push(m);
      return out;
    };
    const plain = await read();
    const zipped = await read("gzip, deflate, br");
    const refused = await read("gzip;q=0");
    expect([plain.encoding, zipped.encoding, refused.encoding]).toEqual([undefined, "gzip", undefined]);
    expect(zipped.vary).toMatch(/accept-encoding/i);
    // The whole stream is one valid gzip member: gunzipSync checks its trailer's CRC-32 and length.
    const unzipped = gunzipSync(zipped.body);
    expect(await messages(unzipped)).toEqual(await messages(plain.body));
    expect((await messages(plain.body)).at(-1)!.event).toBe(JOB_STREAM_END_EVENT);
    expect(zipped.body.length).toBeLessThan(plain.body.length);
  });

  it("refuses a job's stream in the words a read of the job gets: another organization's member, an unknown job, no sign-in or a forged token", async () => {
    const other = await seedTestOrg(stack.t.db, { localRoot: path.join(stack.infraRoot, "stream-other") });
    const outsider = (await createApiToken(stack.t.db, other.actor("admin"), { name: "stream-outsider" })).token;
    const viewer = await stack.tokenFor("viewer");
    const stream = async (id: string, token: string | null, org?: string) => {
      const res = await fetch(`${stack.server.url}/api/v1${jobEventStreamPath(id, { org })}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
      return [res.status, ((await res.json()) as { error: { message: string } }).error.message];
    };
    const unknown = [404, expect.stringMatching(/^Infra Job job_nope was not found/)];
    // Another organization's token sees no such job in its own organization, and is not a member of this one.
    expect(await stream(jobId, outsider)).toEqual([404, expect.stringMatching(new RegExp(`^Infra Job ${jobId} was not found`))]);
    expect(await stream(jobId, outsider, stack.org.slug)).toEqual([404, expect.stringMatching(/was not found, or you are not a member of it/)]);
    expect(await stream("job_nope", viewer)).toEqual(unknown);
    expect(await stream(jobId, null)).toEqual([401, "You are not signed in. Sign in, or send an API token as Authorization: Bearer <token>."]);
    const cookieless = await fetch(`${stack.server.url}/api/v1${jobEventStreamPath(jobId)}`, { headers: { authorization: "Bearer plt_forged" } });
    expect(cookieless.status).toBe(401);
  });

  it("refuses in the product's words, as {error: {code, message}}", async () => {
    const refusal = (p: Promise<unknown>) => p.then(() => null, (e: PlantonApiError) => ({ status: e.status, code: e.code, message: e.message }));
    expect(await refusal(client.jobs.get("job_nope"))).toMatchObject({ status: 404, code: "NOT_FOUND", message: expect.stringMatching(/^Infra Job job_nope was not found/) });
    expect(await refusal(client.jobs.resume(jobId, { message: "x".repeat(501) }))).toMatchObject({ status: 400, code: "BAD_REQUEST", message: "Nothing was done: message: Keep the approval message under 500 characters" });
    expect(await refusal(client.jobs.create(stack.ids.site, { operation: "apply-everything" }))).toMatchObject({ status: 400, message: expect.stringContaining('Unknown Operation "apply-everything"') });
    const anonymous = await fetch(`${stack.server.url}/api/v1/jobs/${jobId}`);
    expect([anonymous.status, (await anonymous.json()).error.message]).toEqual([401, "You are not signed in. Sign in, or send an API token as Authorization: Bearer <token>."]);
    const forged = await fetch(`${stack.server.url}/api/v1/jobs/${jobId}`, { headers: { authorization: "Bearer plt_forged" } });
    expect([forged.status, (await forged.json()).error.message]).toEqual([401, expect.stringMatching(/^The API token was refused/)]);
    const nowhere = await fetch(`${stack.server.url}/api/v1/nowhere`, { headers: { authorization: `Bearer ${await stack.tokenFor("viewer")}` } });
    expect([nowhere.status, (await nowhere.json()).error.message]).toEqual([404, "Nothing was done: there is no GET /api/v1/nowhere in the Planton API. The routes are listed in /api/v1/openapi.json."]);
    const viewer = createPlantonClient({ url: stack.server.url, token: await stack.tokenFor("viewer") });
    expect(await refusal(viewer.jobs.cancel(jobId))).toMatchObject({ status: 403, message: expect.stringContaining("this needs the engineer role") });
    // A POST without a body or content type (curl -X POST) is an empty JSON object.
    const bare = await fetch(`${stack.server.url}/api/v1/jobs/${jobId}/rerun`, { method: "POST", headers: { authorization: `Bearer ${await stack.tokenFor("engineer")}` } });
    expect(bare.status).toBe(201);
    await stack.finished((await bare.json()).id);
  });

  it("manages state backends as an admin: create, get, update, test access, defaults, Planton-managed usage, force-unlock, delete", async () => {
    const admin = recording(createPlantonClient({ url: stack.server.url, token: await stack.tokenFor("admin") }));
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "planton-contract-backends-"));
    try {
      const created = await admin.stateBackends.create({ name: "contract-files", kind: "local", config: { path: path.join(root, "a") } });
      expect(created.access.ok).toBe(true);
      conforms("post", "/state-backends", 201, created);
      conforms("get", "/state-backends/{name}", 200, await admin.stateBackends.get("contract-files"));
      const updated = await admin.stateBackends.update("contract-files", { config: { path: path.join(root, "b") } });
      expect(updated.backend.config.path).toBe(path.join(root, "b"));
      conforms("patch", "/state-backends/{name}", 200, updated);
      const check = await admin.stateBackends.testAccess({ name: "contract-files" });
      expect(check.steps.map((s) => s.step)).toEqual(["open", "write", "read", "compare", "delete"]);
      conforms("post", "/state-backends/test-access", 200, check);
      const withDefault = await admin.stateBackends.setDefault("tofu", "contract-files");
      expect(withDefault.defaults.tofu).toBe("contract-files");
      conforms("put", "/state-backends/defaults/{provisioner}", 200, withDefault);
      const unset = await admin.stateBackends.unsetDefault("tofu");
      expect(unset.defaults.tofu).toBe("planton-managed");
      conforms("delete", "/state-backends/defaults/{provisioner}", 200, unset);
      const list = await client.stateBackends.list();
      expect(list.backends.map((b) => b.name)).toEqual(["contract-files", "planton-managed"]);
      conforms("get", "/state-backends", 200, list);
      // The site's update job wrote its state on Planton-managed storage.
      const usage = await client.stateBackends.plantonManaged();
      expect(usage.states.map((s) => s.component)).toContain("site");
      conforms("get", "/state-backends/planton-managed", 200, usage);
      // limit bounds the list; the totals and the per-provisioner figures still cover every state.
      const totalsOnly = await client.stateBackends.plantonManaged({ limit: 0 });
      expect(totalsOnly).toEqual({ ...usage, states: [] });
      expect(totalsOnly.byProvisioner.reduce((n, p) => n + p.count, 0)).toBe(usage.totals.count);
      conforms("get", "/state-backends/planton-managed", 200, totalsOnly);
      const unlocked = await admin.components.forceUnlockState(stack.ids.site);
      expect(unlocked).toEqual({ componentId: stack.ids.site, released: null });
      conforms("post", "/components/{componentId}/state/force-unlock", 200, unlocked);
      const refused = await client.stateBackends.delete("contract-files").then(() => null, (e: PlantonApiError) => [e.status, e.message]);
      expect(refused).toEqual([403, expect.stringContaining("this needs the admin role")]);
      const deleted = await admin.stateBackends.delete("contract-files");
      expect(deleted).toEqual({ name: "contract-files", deleted: true });
      conforms("delete", "/state-backends/{name}", 200, deleted);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it("moves the states off Planton-managed storage: dry run, start, current, get, retry, rollback, migrate-backend", async () => {
    const admin = recording(createPlantonClient({ url: stack.server.url, token: await stack.tokenFor("admin") }));
    const dir = (name: string) => path.join(stack.infraRoot, "backends", name);
    await stack.t.db.insert(stateBackends).values([
      { id: newId("stateBackend"), orgId: stack.org.orgId, name: "contract-local", kind: "local", config: { path: dir("a") } },
      { id: newId("stateBackend"), orgId: stack.org.orgId, name: "contract-other", kind: "local", config: { path: dir("b") } },
    ]);
    const dry = await admin.stateMoves.dryRun({ "*": "contract-local" });
    expect(dry.items.map((i) => i.component).sort()).toEqual(["gated", "site"]);
    conforms("post", "/state-moves/dry-run", 200, dry);
    expect(await admin.stateMoves.dryRun({ "*": "contract-local" }, { limit: 1 })).toEqual({ items: dry.items.slice(0, 1), totals: dry.totals });
    // A different state already at gated's destination key: its item fails, and a retry after it is gone moves it.
    const conflicting = path.join(dir("a"), "dev", "gated", "terraform.tfstate");
    fs.mkdirSync(path.dirname(conflicting), { recursive: true });
    fs.writeFileSync(conflicting, JSON.stringify({ version: 4, serial: 1, lineage: "someone-else", resources: [] }));
    const started = await admin.stateMoves.start({ builtin: "contract-local" });
    conforms("post", "/state-moves", 201, started);
    const ended = async (id: string) => vi.waitFor(async () => {
      const now = await admin.stateMoves.current();
      if (now.move?.id !== id || now.move.status === "running") throw new Error("the move still runs");
      return now;
    }, { timeout: 60_000, interval: 100 });
    const failed = await ended(started.id);
    conforms("get", "/state-moves/current", 200, failed);
    expect(failed.move!.status).toBe("failed");
    expect(failed.move!.items.find((i) => i.component === "gated")!.error).toMatch(/already holds a different state/);
    fs.rmSync(conflicting);
    const retried = await admin.stateMoves.retry(started.id);
    conforms("post", "/state-moves/{id}/retry", 200, retried);
    expect((await ended(started.id)).move!.status).toBe("succeeded");
    const got = await admin.stateMoves.get(started.id);
    conforms("get", "/state-moves/{id}", 200, got);
    expect(got.progress).toMatchObject({ total: 2, done: 2, failed: 0 });
    // With ?limit the counts still cover every item (what the CLI reads while it follows a move).
    const counts = await admin.stateMoves.get(started.id, { limit: 0 });
    conforms("get", "/state-moves/{id}", 200, counts);
    expect([counts.items, counts.progress]).toEqual([[], got.progress]);
    expect((await admin.stateMoves.get(started.id, { limit: 1 })).items).toEqual([got.items[0]]);
    const site = got.items.find((i) => i.component === "site")!;
    const rolled = await admin.stateMoves.rollback(started.id, site.id!);
    conforms("post", "/state-moves/{id}/items/{itemId}/rollback", 200, rolled);
    const gatedDry = await admin.stateMoves.migrateBackend(stack.ids.gated, { to: "contract-other", dryRun: true });
    expect(gatedDry.dryRun!.items[0]).toMatchObject({ from: "contract-local", to: "contract-other" });
    conforms("post", "/components/{componentId}/state/migrate-backend", 200, gatedDry);
    const viewer = createPlantonClient({ url: stack.server.url, token: await stack.tokenFor("viewer") });
    const refused = await viewer.stateMoves.start({ "*": "contract-other" }).catch((e: PlantonApiError) => e);
    expect(refused).toMatchObject({ status: 403 });
    conforms("get", "/state-moves/current", 200, await viewer.stateMoves.current());
  });

  it("manages runners as an admin: register, list, get, rotate-token, the default (refused while state is on Planton-managed storage), revoke", async () => {
    const admin = recording(createPlantonClient({ url: stack.server.url, token: await stack.tokenFor("admin") }));
    const registered = await admin.runners.register({ name: "contract-runner", capacity: 3, labels: { zone: "lab" } });
    expect(registered.token).toMatch(/^rnr_/);
    expect(registered.runner).toMatchObject({ name: "contract-runner", kind: "self_hosted", status: "offline", capacity: 3, labels: { zone: "lab" } });
    conforms("post", "/runners", 201, registered);
    const list = await client.runners.list();
    expect(list.runners.map((r) => r.name)).toEqual(expect.arrayContaining(["contract-runner", "runner-contract"]));
    expect(JSON.stringify(list)).not.toContain(registered.token);
    conforms("get", "/runners", 200, list);
    const one = await client.runners.get("contract-runner");
    expect(one).toMatchObject({ name: "contract-runner", runningJobs: [], recentJobs: [] });
    conforms("get", "/runners/{runner}", 200, one);
    const rotated = await admin.runners.rotateToken("contract-runner");
    expect(rotated.token).not.toBe(registered.token);
    conforms("post", "/runners/{runner}/rotate-token", 200, rotated);
    const none = await client.runners.getDefault();
    expect(none.runner).toBeNull();
    conforms("get", "/runners/default", 200, none);
    // The earlier jobs left states on Planton-managed storage (the move's rollback put one back).
    const refused = await admin.runners.setDefault("contract-runner").catch((e: PlantonApiError) => e);
    expect(refused).toMatchObject({ status: 412, message: expect.stringMatching(/^Nothing was changed: contract-runner cannot be the default runner while \d+ states? (is|are) on Planton-managed storage/) });
    const unset = await admin.runners.unsetDefault();
    expect(unset.runner).toBeNull();
    conforms("delete", "/runners/default", 200, unset);
    const revoked = await admin.runners.revoke("contract-runner");
    expect(revoked.runner.status).toBe("revoked");
    conforms("post", "/runners/{runner}/revoke", 200, revoked);
  });

  it("sets a default runner where no state is on Planton-managed storage", async () => {
    // A second organization on the same console, with nothing on Planton-managed storage.
    const other = await seedTestOrg(stack.t.db, { localRoot: path.join(stack.infraRoot, "other") });
    const admin = recording(createPlantonClient({ url: stack.server.url, token: (await createApiToken(stack.t.db, other.actor("admin"), { name: "contract-other" })).token }));
    await admin.runners.register({ name: "own-runner" });
    const set = await admin.runners.setDefault("own-runner");
    expect(set).toEqual({ runner: "own-runner", description: "Deploys and live cloud operations of connections that name no runner run on own-runner." });
    conforms("put", "/runners/default", 200, set);
  });

  it("authorizes connections by name: list, add (the provider must match), remove", async () => {
    const admin = recording(createPlantonClient({ url: stack.server.url, token: await stack.tokenFor("admin") }));
    const list = await client.connections.listAuthorizations();
    expect(list.connections).toEqual([{ connection: "local-sandbox", provider: "local", authorizations: [{ scope: "organization", environment: null }] }]);
    conforms("get", "/connections/authorizations", 200, list);
    conforms("get", "/connections/authorizations", 200, await client.connections.listAuthorizations("local-sandbox"));
    const added = await admin.connections.addAuthorization("local-sandbox", { provider: "local", scope: "environment", environments: ["staging", "prod"] });
    expect(added.added).toEqual(["environment staging", "environment prod"]);
    conforms("post", "/connections/{connection}/authorizations", 201, added);
    const wrong = await admin.connections.addAuthorization("local-sandbox", { provider: "aws", scope: "organization" }).catch((e: PlantonApiError) => e);
    expect(wrong).toMatchObject({ status: 400, message: expect.stringContaining("connection local-sandbox is a local connection, not aws") });
    const removed = await admin.connections.removeAuthorization("local-sandbox", { provider: "local", scope: "environment", environments: ["staging", "prod"] });
    expect([removed.removed, removed.authorizations]).toEqual([["environment prod", "environment staging"], [{ scope: "organization", environment: null }]]);
    conforms("delete", "/connections/{connection}/authorizations", 200, removed);
  });

  it("runs the direct path: create (queues the update job), get, list, update (a new version; a stale base refused), versions, state, delete (a destroy job), forget", async () => {
    const created = await client.components.create({ environment: "dev", kind: "StaticSite", name: "contract-direct", spec: { site_name: "contract-direct" }, connection: "local-sandbox", versionMessage: "contract" });
    conforms("post", "/components", 201, created);
    expect(created.job).toMatchObject({ operation: "update", componentId: created.component.id });
    const id = created.component.id;
    expect((await stack.finished(created.job!.id)).result).toBe("succeeded");
    const one = await client.components.get(id);
    expect(one).toMatchObject({ name: "contract-direct", status: "active", specVersion: 1, lastJob: { id: created.job!.id, specVersion: 1 } });
    conforms("get", "/components/{id}", 200, one);
    const list = await client.components.list({ environment: "dev", kind: "StaticSite" });
    expect(list.components.map((c) => c.id)).toContain(id);
    conforms("get", "/components", 200, list);
    const changed = await client.components.update(id, { baseVersion: 1, spec: { site_name: "contract-direct", title: "Two" } });
    expect(changed.component.specVersion).toBe(2);
    conforms("patch", "/components/{id}", 200, changed);
    expect((await stack.finished(changed.job!.id)).result).toBe("succeeded");
    const stale = await client.components.update(id, { baseVersion: 1, description: "late" }).catch((e: PlantonApiError) => e);
    expect(stale).toMatchObject({ status: 409, message: expect.stringContaining("your change is based on version 1 of contract-direct, but it is at version 2 now") });
    const versions = await client.components.versions(id);
    expect(versions.versions.map((v) => v.version)).toEqual([2, 1]);
    expect(versions.versions[0].changes["spec.title"]).toMatchObject({ to: "Two" });
    conforms("get", "/components/{id}/versions", 200, versions);
    const state = await client.components.state(id);
    expect(state.resources.map((r) => r.address)).toContain("local_file.index");
    conforms("get", "/components/{componentId}/state", 200, state);
    const deleting = await client.components.delete(id, { versionMessage: "retired" });
    expect(deleting.job).toMatchObject({ operation: "destroy" });
    conforms("delete", "/components/{id}", 200, deleting);
    expect((await stack.finished(deleting.job!.id)).result).toBe("succeeded");
    await vi.waitFor(async () => expect((await client.components.get(id)).status).toBe("deleted"), { timeout: 30_000, interval: 100 });
    expect((await client.components.list({ show: "gone" })).components.map((c) => c.id)).toContain(id);

    const admin = recording(createPlantonClient({ url: stack.server.url, token: await stack.tokenFor("admin") }));
    const draft = await client.components.create({ environment: "dev", kind: "StaticSite", name: "contract-draft", spec: { site_name: "contract-draft" }, connection: "local-sandbox", deploy: false });
    expect([draft.component.status, draft.job]).toEqual(["draft", null]);
    const unconfirmed = await admin.components.forget(draft.component.id).catch((e: PlantonApiError) => e);
    expect(unconfirmed).toMatchObject({ status: 400, message: expect.stringMatching(/^Nothing was forgotten: forgetting contract-draft removes it from Planton without destroying anything/) });
    const forgot = await admin.components.forget(draft.component.id, { confirmName: "contract-draft" });
    expect(forgot.component.status).toBe("forgotten");
    conforms("post", "/components/{id}/forget", 200, forgot);
  });

  it("registers and reads modules: register from an archive (201), list, get, versions, version, the policy; a second registration of a version refused", async () => {
    const admin = recording(createPlantonClient({ url: stack.server.url, token: await stack.tokenFor("admin") }));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "planton-contract-module-"));
    try {
      fs.mkdirSync(path.join(dir, "mod"));
      fs.writeFileSync(path.join(dir, "mod", "main.tf"), 'variable "greeting" {\n  type    = string\n  default = "hello"\n}\n\nresource "local_file" "hello" {\n  filename = "hello.txt"\n  content  = var.greeting\n}\n');
      execFileSync("tar", ["-czf", path.join(dir, "mod.tar.gz"), "-C", dir, "mod"]);
      const body = { name: "contract-hello", version: "1.0.0", kind: "ContractHello", provisioner: "builtin" as const, source: { type: "archive" as const, fileName: "mod.tar.gz", contentBase64: fs.readFileSync(path.join(dir, "mod.tar.gz")).toString("base64") } };
      const registered = await admin.modules.register(body);
      expect(registered).toMatchObject({ name: "contract-hello", version: "1.0.0", kind: "ContractHello", scope: "organization", fileCount: 1, inputs: [{ name: "greeting", required: false, default: "hello" }] });
      conforms("post", "/modules", 201, registered);
      const again = await admin.modules.register(body).catch((e: PlantonApiError) => e);
      expect(again).toMatchObject({ status: 409, message: expect.stringContaining("a version, once registered, never changes; register a new version") });
      const list = await client.modules.list();
      expect(list.modules.map((m) => m.name)).toEqual(expect.arrayContaining(["contract-hello", "static-site", "aws-s3-bucket"]));
      expect(list).toMatchObject({ policy: { engineersMayRegister: false }, mayRegister: false });
      conforms("get", "/modules", 200, list);
      conforms("get", "/modules", 200, await client.modules.list({ kind: "ContractHello" }));
      const latest = await client.modules.get("contract-hello");
      expect(latest.sha256).toBe(registered.sha256);
      conforms("get", "/modules/{name}", 200, latest);
      const versions = await client.modules.versions("contract-hello");
      expect(versions.versions.map((v) => v.version)).toEqual(["1.0.0"]);
      conforms("get", "/modules/{name}/versions", 200, versions);
      const one = await client.modules.version("static-site", "1.0.0");
      expect(one).toMatchObject({ scope: "platform", source: { kind: "builtin", path: "catalog/modules/static-site" } });
      conforms("get", "/modules/{name}/versions/{version}", 200, one);
      const policy = await admin.modules.setPolicy({ engineersMayRegister: true });
      expect(policy).toEqual({ engineersMayRegister: true });
      conforms("put", "/modules/policy", 200, policy);
      const refused = await client.modules.setPolicy({ engineersMayRegister: false }).catch((e: PlantonApiError) => e);
      expect(refused).toMatchObject({ status: 403 });
      await admin.modules.setPolicy({ engineersMayRegister: false });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("called every method of the client", () => {
    const all = methodsOf(createPlantonClient({ url: "http://unused", token: "unused" }));
    expect(all.filter((m) => !called.has(m))).toEqual([]);
  });
});
