// The web edge of the built console, over real HTTP: the headers on a page, an API answer and a static
// file; a change made with the sign-in cookie from another origin is refused (and nothing changes), from
// the console's own origin it is served, and with an API token it needs no Origin; tRPC batch and body limits.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { environments } from "../../db/schema";
import { TRPC_MAX_BATCH_CALLS, TRPC_MAX_BODY_BYTES } from "../../lib/trpc/limits";
import { createApiToken } from "../../server/services/settings/api-tokens";
import { startConsoleServer, type ConsoleServer } from "../console-server";
import { createTestDatabase, type TestDatabase } from "../database";
import { seedTestOrg, type TestOrg } from "../fixtures";

let t: TestDatabase;
let org: TestOrg;
let server: ConsoleServer;
let cookie: string;
let token: string;
const EVIL = "https://evil.example";

beforeAll(async () => {
  t = await createTestDatabase();
  org = await seedTestOrg(t.db);
  server = await startConsoleServer({ databaseUrl: t.url!, env: { PLANTON_AUTH_RATE_LIMIT: "off" } });
  const signIn = await fetch(`${server.url}/api/auth/sign-in/email`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: server.url },
    body: JSON.stringify({ email: org.users.admin.email, password: "correct-horse-battery" }),
  });
  expect(signIn.status).toBe(200);
  cookie = signIn.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  token = (await createApiToken(t.db, org.actor("admin"), { name: "web-edge" })).token;
});

afterAll(async () => {
  await server?.stop();
  await t?.close();
});

const createEnvironment = (name: string, headers: Record<string, string>) =>
  fetch(`${server.url}/api/trpc/environments.create`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ json: { org: org.slug, name } }),
  });

const environmentExists = async (name: string) =>
  (await t.db.select().from(environments).where(and(eq(environments.orgId, org.orgId), eq(environments.name, name)))).length === 1;

const errorMessage = async (res: Response) => ((await res.json()) as { error: { json: { message: string } } }).error.json.message;

describe("security headers", () => {
  const expectFixedHeaders = (res: Response) => {
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("referrer-policy")).toBe("strict-origin-when-cross-origin");
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
  };

  it("a page carries a policy whose script nonce is new on every response and stamped on its scripts", async () => {
    const [a, b] = await Promise.all([fetch(`${server.url}/sign-in`), fetch(`${server.url}/sign-in`)]);
    for (const res of [a, b]) {
      expect(res.status).toBe(200);
      expectFixedHeaders(res);
      expect(res.headers.get("strict-transport-security")).toBeNull();
    }
    const nonceOf = (res: Response) => res.headers.get("content-security-policy")!.match(/script-src 'self' 'nonce-([^']+)' 'strict-dynamic'/)![1];
    expect(nonceOf(a)).not.toBe(nonceOf(b));
    const html = await a.text();
    const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
    expect(scripts.length).toBeGreaterThan(3);
    for (const s of scripts) expect(s).toContain(`nonce="${nonceOf(a)}"`);
  });

  it("an API answer, a runner API answer and a static file carry the headers and a policy that loads nothing", async () => {
    const html = await (await fetch(`${server.url}/sign-in`)).text();
    const asset = html.match(/src="(\/_next\/static\/[^"]+\.js)"/)![1];
    for (const p of ["/api/health", "/api/trpc/me.get", "/api/v1/whoami", "/api/runner/v1/whoami", asset]) {
      const res = await fetch(`${server.url}${p}`);
      expectFixedHeaders(res);
      expect(res.headers.get("content-security-policy"), p).toBe("default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
    }
  });

  it("HSTS is sent only when the console is served over HTTPS", async () => {
    for (const p of ["/sign-in", "/api/health", "/api/v1/whoami", "/api/runner/v1/whoami"]) {
      const res = await fetch(`${server.url}${p}`, { headers: { "x-forwarded-proto": "https" } });
      expect(res.headers.get("strict-transport-security"), p).toBe("max-age=31536000");
      expect((await fetch(`${server.url}${p}`)).headers.get("strict-transport-security"), p).toBeNull();
    }
  });
});

describe("changes made with the sign-in cookie", () => {
  it("from another origin are refused with 403, the reason and the setting, and nothing changes", async () => {
    const res = await createEnvironment("from-evil", { cookie, origin: EVIL });
    expect(res.status).toBe(403);
    expect(await errorMessage(res)).toBe(
      `Nothing was done: the request came from ${EVIL}, which is not the console's address ${server.url}, so it may be another site acting with your sign-in. If you open the console at that address, set PLANTON_URL to it (or add it to PLANTON_TRUSTED_ORIGINS) and restart the console; otherwise open the console at ${server.url} and try again.`,
    );
    // Naming the foreign site as the Host changes nothing: trust comes from configuration only.
    expect((await createEnvironment("from-evil", { cookie, origin: EVIL, "x-forwarded-host": "evil.example" })).status).toBe(403);
    expect((await createEnvironment("from-evil", { cookie, referer: `${EVIL}/page` })).status).toBe(403);
    expect((await createEnvironment("from-evil", { cookie, "sec-fetch-site": "cross-site" })).status).toBe(403);
    expect(await environmentExists("from-evil")).toBe(false);
  });

  it("from the console's own origin are served", async () => {
    const res = await createEnvironment("from-console", { cookie, origin: server.url });
    expect(res.status).toBe(200);
    expect(await environmentExists("from-console")).toBe(true);
  });

  it("with an API token need no Origin, even a foreign one", async () => {
    const res = await createEnvironment("from-token", { authorization: `Bearer ${token}`, origin: EVIL });
    expect(res.status).toBe(200);
    expect(await environmentExists("from-token")).toBe(true);
  });

  it("better-auth's sign-in and sign-out from another origin are refused in words its client shows", async () => {
    const signIn = await fetch(`${server.url}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: EVIL },
      body: JSON.stringify({ email: org.users.admin.email, password: "correct-horse-battery" }),
    });
    expect(signIn.status).toBe(403);
    expect(signIn.headers.getSetCookie()).toEqual([]);
    expect(((await signIn.json()) as { message: string }).message).toMatch(/^Nothing was done: the request came from https:\/\/evil\.example,/);
    const signOut = await fetch(`${server.url}/api/auth/sign-out`, { method: "POST", headers: { cookie, origin: EVIL } });
    expect(signOut.status).toBe(403);
    // The session still works.
    const me = await fetch(`${server.url}/api/trpc/me.get`, { headers: { cookie } });
    expect(me.status).toBe(200);
  });
});

describe("tRPC request limits", () => {
  const batch = (n: number) => {
    const paths = Array.from({ length: n }, () => "me.get").join(",");
    const input = Object.fromEntries(Array.from({ length: n }, (_, i) => [i, { json: null }]));
    return fetch(`${server.url}/api/trpc/${paths}?batch=1&input=${encodeURIComponent(JSON.stringify(input))}`, { headers: { authorization: `Bearer ${token}` } });
  };

  it(`a batch of ${TRPC_MAX_BATCH_CALLS} calls is served; one more is refused before any runs`, async () => {
    const atLimit = await batch(TRPC_MAX_BATCH_CALLS);
    expect(atLimit.status).toBe(200);
    expect(((await atLimit.json()) as unknown[]).length).toBe(TRPC_MAX_BATCH_CALLS);
    const over = await batch(TRPC_MAX_BATCH_CALLS + 1);
    expect(over.status).toBe(400);
    expect(await errorMessage(over)).toBe(
      `Nothing was done: the request batches ${TRPC_MAX_BATCH_CALLS + 1} calls and the console takes at most ${TRPC_MAX_BATCH_CALLS} in one request. Send them in smaller batches (httpBatchLink's maxItems: ${TRPC_MAX_BATCH_CALLS}).`,
    );
  });

  it("a body over the limit is refused with 413 and nothing changes", async () => {
    const res = await fetch(`${server.url}/api/trpc/environments.create`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ json: { org: org.slug, name: "too-large", description: "x".repeat(TRPC_MAX_BODY_BYTES) } }),
    });
    expect(res.status).toBe(413);
    expect(await errorMessage(res)).toMatch(/^Nothing was done: the request body is larger than 1 MiB/);
    expect(await environmentExists("too-large")).toBe(false);
  });
});
