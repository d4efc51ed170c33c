// The bad-input sweep: every tRPC procedure (walked from the router itself), every REST route (from
// the OpenAPI document the console serves) and every runner route (from the runner API's route table) is sent a
// fixed corpus of hostile values — NUL bytes, lone surrogates, integers past 2³¹, fractions, invalid
// cursors, malformed %-escapes, deep JSON, oversized bodies, huge Last-Event-IDs — on the built
// console over Postgres and over PGlite. No answer may be a 5xx, take past the bound, or echo the
// server's internals. A new procedure or route is swept without editing this file.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fs from "node:fs";
import path from "node:path";
import type { ZodObject, ZodType } from "zod";
import { unsafeInput } from "../../server/input-guard";
import { ensureHostedRunner } from "../../server/services/runners/register-runner";
import { appRouter } from "../../server/trpc/root";
import { startConsoleServer, type ConsoleServer } from "../console-server";
import { runnerApiRoutes } from "../../server/runner-api/routes";
import { createTestDatabase, type TestDatabase } from "../database";

const ADMIN = { email: "admin@acme.example", password: "integration-admin-pw" };
const ORG = "acme";
/** Requests in flight at once: as a few browser tabs would send them (the sweep also looks for races). */
const PARALLEL = 6;

/** Runs `tasks`, at most `n` at a time. */
async function inParallel(tasks: (() => Promise<unknown>)[], n: number): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < tasks.length) await tasks[next++]();
  }));
}

/** Past this, a request counts as hanging. */
const BOUND_MS = 20_000;

const deep = (levels: number): unknown => (levels ? { a: deep(levels - 1) } : "bottom");

/**
 * The values every field, body and parameter is given in turn, each a case of its own: one NUL value,
 * since a NUL anywhere in a string is one case (server/input-guard.ts and Postgres refuse it wherever
 * it is); a lone "\u0000" beside it only doubled that case's requests.
 */
const CORPUS: unknown[] = [
  "name\u0000with-nul",
  "\ud800",
  "tail\udfff",
  2 ** 31,
  2 ** 53 + 2,
  -(2 ** 31) - 1,
  1.5,
  -1,
  "",
  "x".repeat(20_000),
  deep(200),
  [],
  {},
  null,
  true,
  "%E0%A4%A",
  "../../../../etc/passwd",
  "'; drop table users; --",
  "bm90LWEtY3Vyc29y",
];

/** What a response must never show: SQL, driver or stack text, file paths of the server. */
const INTERNALS = [/syntax error/i, /\bSQL\b/, /postgres(ql)?\b(?!:\/\/)/i, /pglite/i, /relation "/i, /violates/i, /duplicate key/i, /\bat [\w.<>]+ \(/, /node_modules/, /\/work\//, /ECONN/, /\bselect\b[^.]{0,80}\bfrom\b/i];

interface Tally {
  requests: number;
  ok: number;
  refused: number;
  failed: string[];
}

function jsonOrNull(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** Sends one request and checks its answer; resolves with its status (undefined when none came). */
async function probe(tally: Tally, what: string, url: string, init: RequestInit = {}): Promise<number | undefined> {
  tally.requests++;
  let res: Response;
  let text: string;
  try {
    res = await fetch(url, { ...init, signal: AbortSignal.timeout(BOUND_MS) });
    text = res.headers.get("content-type")?.includes("text/event-stream") ? "" : await res.text();
    if (res.headers.get("content-type")?.includes("text/event-stream")) await res.body?.cancel();
  } catch (err) {
    tally.failed.push(`${what}: no answer within ${BOUND_MS} ms (${(err as Error).name})`);
    return undefined;
  }
  if (res.status >= 500) tally.failed.push(`${what}: ${res.status} ${text.slice(0, 300)}`);
  else if (res.status >= 400) tally.refused++;
  else tally.ok++;
  const leak = INTERNALS.find((re) => re.test(text));
  if (leak) tally.failed.push(`${what}: the answer shows internals (${leak}): ${text.slice(0, 300)}`);
  // A refusal says what was wrong in words.
  if (res.status >= 400) {
    // tRPC answers {error: {json: {message}}} (superjson), REST and the runner API {error: {message}}, better-auth {message}.
    type Answer = { error?: { message?: string; json?: { message?: string } }; message?: string };
    const parsed = jsonOrNull(text) as Answer | Answer[] | null;
    const body = Array.isArray(parsed) ? parsed[0] : parsed;
    const message = body?.error?.json?.message ?? body?.error?.message ?? body?.message;
    if (!message) tally.failed.push(`${what}: ${res.status} without a message: ${text.slice(0, 200)}`);
  }
  return res.status;
}

/** The field names of a procedure's input (its merged zod objects). */
function inputFields(procedure: { _def: { inputs: unknown[] } }): string[] {
  return [...new Set(procedure._def.inputs.flatMap((s) => Object.keys((s as ZodObject).shape ?? {})))];
}

/**
 * Whether `input` gets past a procedure's own checks — the input guard and its zod inputs, pure code
 * that runs before any service — to the service, where the database driver can change the answer.
 * An input refused there meets only the caller's token and organization look-ups, which every other
 * case makes too.
 */
function reachesService(procedure: { _def: { inputs: unknown[] } }, input: unknown): boolean {
  return !unsafeInput(input) && procedure._def.inputs.every((s) => (s as ZodType).safeParse(input).success);
}

/** Hostile inputs for one procedure: each field in turn, then the whole input. */
function hostileInputs(fields: string[]): unknown[] {
  const inputs: unknown[] = [];
  for (const field of fields.filter((f) => f !== "org")) for (const v of CORPUS) inputs.push({ org: ORG, [field]: v });
  for (const v of CORPUS) inputs.push(v);
  inputs.push({ org: ORG, extra: deep(200) });
  return inputs;
}

/** Every failure of a surface, in .tmp/, for reading when the assertion's first 40 are not enough. */
function report(name: string, tally: Tally) {
  const dir = path.resolve(import.meta.dirname, "../../.tmp");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `bad-input-sweep-${name}.txt`), tally.failed.join("\n"));
}

const enc = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));

/** encodeURIComponent that sends a lone surrogate as the invalid UTF-8 it would be, instead of throwing. */
const pct = (text: string) => [...text].map((ch) => (/[\ud800-\udfff]/.test(ch) ? "%ED%A0%80" : encodeURIComponent(ch))).join("");

function sweepOn(driver: "postgres" | "pglite") {
  describe(`the bad-input sweep on ${driver}`, () => {
    let t: TestDatabase | undefined;
    let server: ConsoleServer;
    let token: string;
    const headers = () => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });

    beforeAll(async () => {
      if (driver === "postgres") t = await createTestDatabase();
      server = await startConsoleServer({ databaseUrl: t?.url ?? "", env: { PLANTON_AUTH_RATE_LIMIT: "off", ...(driver === "pglite" ? { DATABASE_URL: "" } : {}) } });
      const signIn = await fetch(`${server.url}/api/auth/sign-in/email`, { method: "POST", headers: { "content-type": "application/json", origin: server.url }, body: JSON.stringify(ADMIN) });
      expect(signIn.status, await signIn.clone().text()).toBe(200);
      const cookie = signIn.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
      const created = await fetch(`${server.url}/api/trpc/me.apiTokens.create`, {
        method: "POST",
        headers: { cookie, origin: server.url, "content-type": "application/json" },
        body: JSON.stringify({ json: { org: ORG, name: "sweep" } }),
      });
      token = ((await created.json()) as { result: { data: { json: { token: string } } } }).result.data.json.token;
    }, 180_000);

    afterAll(async () => {
      await server?.stop();
      await t?.close();
    });

    it("every tRPC procedure answers hostile input with a 4xx in words, never a 5xx or internals", async () => {
      const tally: Tally = { requests: 0, ok: 0, refused: 0, failed: [] };
      const procedures = Object.entries(appRouter._def.procedures as unknown as Record<string, { _def: { type: string; inputs: unknown[] } }>);
      expect(procedures.length).toBeGreaterThan(30);
      const requests: (() => Promise<void>)[] = [];
      let refusedUpFront = 0;
      for (const [name, p] of procedures) {
        if (p._def.type === "subscription") continue; // live streams: swept through the REST event stream below
        for (const input of hostileInputs(inputFields(p))) {
          // On PGlite, only the cases a service sees: the rest take the same path on either driver (nineteen
          // in twenty of the cases, and PGlite answers one request at a time), and the Postgres sweep sends them.
          const reaches = reachesService(p, input);
          if (driver === "pglite" && !reaches) {
            refusedUpFront++;
            continue;
          }
          const body = JSON.stringify({ json: input });
          const what = `tRPC ${name} ${body.slice(0, 80)}`;
          const sent = () =>
            p._def.type === "query"
              ? probe(tally, what, `${server.url}/api/trpc/${name}?input=${encodeURIComponent(body)}`, { headers: headers() })
              : probe(tally, what, `${server.url}/api/trpc/${name}`, { method: "POST", headers: headers(), body });
          requests.push(async () => {
            const status = await sent();
            // What PGlite is spared must be what the server refuses as bad input (or, past the address bound, as too large).
            if (!reaches && status !== undefined && status !== 400 && status !== 431) tally.failed.push(`${what}: refused by the input checks here, yet answered ${status}`);
          });
        }
      }
      await inParallel(requests, PARALLEL);
      // Bodies past the bound, and bodies that are not JSON.
      await probe(tally, "tRPC oversized body", `${server.url}/api/trpc/environments.create`, { method: "POST", headers: headers(), body: JSON.stringify({ json: { org: ORG, name: "x".repeat(2 * 1024 * 1024) } }) });
      await probe(tally, "tRPC body not JSON", `${server.url}/api/trpc/environments.create`, { method: "POST", headers: headers(), body: "{not json" });
      console.log(
        `bad-input sweep (${driver}) tRPC: ${tally.requests} requests, ${tally.ok} 2xx, ${tally.refused} 4xx, ${tally.failed.length} failures (5xx, hangs, leaks)` +
          (refusedUpFront ? `; ${refusedUpFront} cases refused before any service left to the Postgres sweep` : ""),
      );
      report(`${driver}-tRPC`, tally);
      expect(tally.failed.slice(0, 40)).toEqual([]);
      // Thousands of requests, growing with every procedure; PGlite answers them one at a time.
    }, 300_000);

    // The REST edge (paths, queries, bodies) is the same code on either driver, and what it hands on is
    // what the tRPC sweep already sends each procedure on PGlite: it is swept once, on Postgres.
    if (driver === "postgres") it("every REST route answers hostile paths, queries and bodies with a 4xx in words", async () => {
      const tally: Tally = { requests: 0, ok: 0, refused: 0, failed: [] };
      const doc = (await (await fetch(`${server.url}/api/v1/openapi.json`)).json()) as {
        paths: Record<string, Record<string, { parameters?: { name: string; in: string }[]; requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> } }>>;
      };
      const routes = Object.entries(doc.paths).flatMap(([route, ops]) => Object.entries(ops).map(([method, op]) => ({ route, method: method.toUpperCase(), op })));
      expect(routes.length).toBeGreaterThan(10);
      const tasks: (() => Promise<unknown>)[] = [];
      for (const { route, method, op } of routes) {
        const params = op.parameters ?? [];
        const fill = (value: string, raw = false) => route.replace(/\{(\w+)\}/g, () => (raw ? value : pct(value)));
        const query = params.filter((p) => p.in === "query").map((p) => p.name);
        const fields = Object.keys(op.requestBody?.content["application/json"]?.schema.properties ?? {});
        const live = route.endsWith("/events/stream");
        for (const v of CORPUS) {
          const text = enc(v);
          // Path segments: encoded, and as sent raw (a malformed %-escape stays malformed).
          tasks.push(() => probe(tally, `${method} ${route} path=${text.slice(0, 40)}`, `${server.url}/api/v1${fill(text)}`, { method, headers: headers(), ...(method === "GET" ? {} : { body: "{}" }) }));
          if (text === "%E0%A4%A") tasks.push(() => probe(tally, `${method} ${route} raw malformed path`, `${server.url}/api/v1${fill(text, true)}`, { method, headers: headers(), ...(method === "GET" ? {} : { body: "{}" }) }));
          if (live) continue; // a real stream stays open by design; its inputs are the id and Last-Event-ID below
          for (const q of query) tasks.push(() => probe(tally, `${method} ${route} ?${q}=${text.slice(0, 40)}`, `${server.url}/api/v1${fill("job_none")}?${q}=${pct(text)}`, { method, headers: headers(), ...(method === "GET" ? {} : { body: "{}" }) }));
          if (method !== "GET") {
            for (const f of fields) tasks.push(() => probe(tally, `${method} ${route} body.${f}=${text.slice(0, 40)}`, `${server.url}/api/v1${fill("job_none")}`, { method, headers: headers(), body: JSON.stringify({ [f]: v }) }));
            tasks.push(() => probe(tally, `${method} ${route} body=${text.slice(0, 40)}`, `${server.url}/api/v1${fill("job_none")}`, { method, headers: headers(), body: JSON.stringify(v) }));
          }
        }
      }
      for (const id of ["99999999999999999999", "-1", "1e3", "abc", "9".repeat(5000), "1.5"]) {
        tasks.push(() => probe(tally, `event stream Last-Event-ID=${id.slice(0, 20)}`, `${server.url}/api/v1/jobs/job_none/events/stream`, { headers: { ...headers(), "last-event-id": id } }));
      }
      // As many at once as the tRPC sweep sends: a few tabs' worth, which also shakes out races.
      await inParallel(tasks, PARALLEL);
      await probe(tally, "REST oversized body", `${server.url}/api/v1/jobs/job_none/rerun`, { method: "POST", headers: headers(), body: JSON.stringify({ versionMessage: "x".repeat(2 * 1024 * 1024) }) });
      await probe(tally, "REST body not JSON", `${server.url}/api/v1/jobs/job_none/rerun`, { method: "POST", headers: headers(), body: "{not json" });
      console.log(`bad-input sweep (${driver}) REST: ${tally.requests} requests, ${tally.ok} 2xx, ${tally.refused} 4xx, ${tally.failed.length} failures (5xx, hangs, leaks)`);
      report(`${driver}-REST`, tally);
      expect(tally.failed.slice(0, 40)).toEqual([]);
      // Grows with every route, as the tRPC sweep does.
    }, 300_000);

    it("every runner route answers hostile tokens, paths and bodies with a 4xx in words", async () => {
      const tally: Tally = { requests: 0, ok: 0, refused: 0, failed: [] };
      const routes = runnerApiRoutes();
      expect(routes.length).toBeGreaterThan(10);

      // A job credential to speak with, on Postgres where the test can register a runner (the console has no registration yet).
      let credential = "jcr_none";
      let runnerToken = "rnr_none";
      let jobId = "job_none";
      let attemptId = "run_none";
      if (t) {
        runnerToken = (await ensureHostedRunner(t.db, "sweep-runner", 1)).token;
        const list = await (await fetch(`${server.url}/api/v1/jobs?limit=1`, { headers: headers() })).json();
        const components = await (
          await fetch(`${server.url}/api/trpc/components.list?input=${encodeURIComponent(JSON.stringify({ json: { org: ORG } }))}`, { headers: headers() })
        ).json();
        const componentId = (components as { result: { data: { json: { components: { id: string }[] } } } }).result.data.json.components[0].id;
        expect(list).toBeDefined();
        const job = await (await fetch(`${server.url}/api/v1/components/${componentId}/jobs`, { method: "POST", headers: headers(), body: JSON.stringify({ operation: "preview" }) })).json();
        const claim = await fetch(`${server.url}/api/runner/v1/claim`, { method: "POST", headers: { authorization: `Bearer ${runnerToken}`, "content-type": "application/json" }, body: JSON.stringify({ waitSeconds: 0 }) });
        expect(claim.status).toBe(200);
        const claimed = (await claim.json()) as { job: { id: string }; attemptId: string; credential: { token: string } };
        expect(claimed.job.id).toBe((job as { id: string }).id);
        ({ attemptId } = claimed);
        jobId = claimed.job.id;
        credential = claimed.credential.token;
      }
      const FIELDS = ["attemptId", "events", "seq", "ts", "type", "payload", "result", "reason", "plan", "outputs", "exitCode", "capacity", "waitSeconds", "version", "ID", "Operation", "Who", "Path"];
      const tasks: (() => Promise<unknown>)[] = [];
      for (const { route, method } of routes) {
        const bearer = route.startsWith("/jobs/") ? credential : runnerToken;
        const auth = { authorization: `Bearer ${bearer}`, "content-type": "application/json" };
        const fill = (v: string) => route.replace("[jobId]", jobId).replace(/\[(\w+)\]/g, () => pct(v));
        // A claim long-polls by design: the sweep asks it not to wait.
        const extra = route === "/claim" ? { waitSeconds: 0 } : {};
        const empty = JSON.stringify(extra);
        for (const v of CORPUS) {
          const text = enc(v);
          tasks.push(() => probe(tally, `runner ${method} ${route} token=${text.slice(0, 30)}`, `${server.url}/api/runner/v1${fill("x")}`, { method, headers: { authorization: `Bearer ${text.replace(/[^\x21-\x7e]/g, "?")}` }, ...(method === "GET" ? {} : { body: empty }) }));
          tasks.push(() => probe(tally, `runner ${method} ${route} path=${text.slice(0, 30)}`, `${server.url}/api/runner/v1${route.replace("[jobId]", pct(text)).replace(/\[(\w+)\]/g, () => pct(text))}`, { method, headers: auth, ...(method === "GET" ? {} : { body: empty }) }));
          if (method === "GET") continue;
          tasks.push(() => probe(tally, `runner ${method} ${route} body=${text.slice(0, 30)}`, `${server.url}/api/runner/v1${fill("x")}`, { method, headers: auth, body: JSON.stringify(v && typeof v === "object" && !Array.isArray(v) ? { ...v, ...extra } : v) }));
          const body = Object.fromEntries(FIELDS.map((f) => [f, f === "attemptId" && typeof v !== "string" ? attemptId : v]));
          tasks.push(() => probe(tally, `runner ${method} ${route} fields=${text.slice(0, 30)}`, `${server.url}/api/runner/v1${fill("x")}`, { method, headers: auth, body: JSON.stringify({ ...body, ...extra }) }));
          tasks.push(() => probe(tally, `runner ${method} ${route} event=${text.slice(0, 30)}`, `${server.url}/api/runner/v1${fill("x")}`, {
            method,
            headers: auth,
            body: JSON.stringify({ attemptId, events: [{ seq: v, ts: v, type: "log", payload: { line: v } }], ...extra }),
          }));
        }
      }
      await inParallel(tasks, PARALLEL);
      console.log(`bad-input sweep (${driver}) runner API: ${tally.requests} requests, ${tally.ok} 2xx, ${tally.refused} 4xx, ${tally.failed.length} failures (5xx, hangs, leaks)`);
      report(`${driver}-runner`, tally);
      if (tally.failed.length) fs.writeFileSync(path.resolve(import.meta.dirname, `../../.tmp/bad-input-sweep-${driver}-console.log`), server.output());
      expect(tally.failed.slice(0, 40)).toEqual([]);
    });
  });
}

sweepOn("postgres");
sweepOn("pglite");
