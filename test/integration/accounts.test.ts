// Accounts and sessions over real HTTP: the built console (scripts/serve.mjs) on a real Postgres.
// Sign-in limits that X-Forwarded-For cannot dodge, the address audit events record, cookies that
// follow the console's scheme, change password ending other sessions, and the takeover that fails.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import superjson from "superjson";
import { auditEvents, memberships, users } from "../../db/schema";
import { newId } from "../../lib/ids";
import { createAuth, createUserWithPassword } from "../../server/auth/auth";
import { choosePasswordWithInvitation } from "../../server/services/accounts/invitations";
import { startConsoleServer, type ConsoleServer } from "../console-server";
import { createTestDatabase, type TestDatabase } from "../database";
import { seedTestOrg, type TestOrg } from "../fixtures";

// Two consoles on one database share one server key, as replicas must (each would otherwise generate its own
// into its data folder, and the second would be refused at start: server/server-key-check.ts).
process.env.PLANTON_SECRET_KEY ??= "ac".repeat(32);

const PROXY_URL = "https://planton.example.test";
let t: TestDatabase;
let a: TestOrg;
let b: TestOrg;
/** No proxy trusted: the socket's address is the client's. */
let direct: ConsoleServer;
/** Behind a trusted proxy (127.0.0.1) that terminates TLS for PROXY_URL. */
let proxied: ConsoleServer;

beforeAll(async () => {
  t = await createTestDatabase();
  a = await seedTestOrg(t.db);
  b = await seedTestOrg(t.db);
  direct = await startConsoleServer({ databaseUrl: t.url! });
  proxied = await startConsoleServer({ databaseUrl: t.url!, env: { PLANTON_TRUSTED_PROXIES: "127.0.0.1", PLANTON_URL: PROXY_URL } });
});
afterAll(async () => {
  await direct?.stop();
  await proxied?.stop();
  await t?.close();
});

let n = 0;
const newUser = async (password = "right-password-1") => {
  const email = `person${++n}-${Math.random().toString(36).slice(2, 6)}@example.test`;
  await createUserWithPassword(createAuth(t.db), { email, name: email, password });
  return email;
};

// The Origin a browser on that console would send.
const originOf = (s: ConsoleServer) => (s === proxied ? PROXY_URL : s.url);

async function signIn(s: ConsoleServer, email: string, password: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${s.url}/api/auth/sign-in/email`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: originOf(s), ...headers },
    body: JSON.stringify({ email, password }),
  });
  const body = (await res.json().catch(() => null)) as { message?: string; code?: string } | null;
  const setCookie = res.headers.getSetCookie();
  return { status: res.status, body, setCookie, cookie: setCookie.map((c) => c.split(";")[0]).join("; "), retryAfter: res.headers.get("retry-after") };
}

async function trpc<T>(s: ConsoleServer, cookie: string, path: string, input: unknown, kind: "query" | "mutation", headers: Record<string, string> = {}) {
  const h = { cookie, origin: originOf(s), "content-type": "application/json", ...headers };
  const payload = JSON.stringify(superjson.serialize(input));
  const res =
    kind === "query"
      ? await fetch(`${s.url}/api/trpc/${path}?input=${encodeURIComponent(payload)}`, { headers: h })
      : await fetch(`${s.url}/api/trpc/${path}`, { method: "POST", headers: h, body: payload });
  const body = (await res.json()) as { result?: { data: unknown }; error?: { json: { message: string; data: { code: string } } } };
  if (body.error) return { ok: false as const, status: res.status, message: body.error.json.message, code: body.error.json.data.code };
  return { ok: true as const, status: res.status, data: superjson.deserialize(body.result!.data as never) as T };
}

async function sessionOf(s: ConsoleServer, cookie: string) {
  const res = await fetch(`${s.url}/api/auth/get-session`, { headers: { cookie, origin: originOf(s) } });
  return (await res.json()) as { user: { email: string } } | null;
}

const LOCKED = /^Too many failed sign-ins for this account\. Try again after \d\d:\d\d UTC$/;

describe("sign-in limits", () => {
  it("rotating X-Forwarded-For (or forging the socket header) does not get around the limit without a trusted proxy", async () => {
    const email = await newUser();
    for (let i = 0; i < 5; i++) {
      const r = await signIn(direct, email, "wrong-guess", { "x-forwarded-for": `198.51.100.${i}`, "x-planton-socket-address": `10.9.9.${i}` });
      expect(r.status).toBe(401);
    }
    // Even the right password from yet another made-up address is stopped before it is checked.
    const locked = await signIn(direct, email, "right-password-1", { "x-forwarded-for": "198.51.100.200", "x-planton-socket-address": "10.9.9.200" });
    expect(locked.status).toBe(429);
    expect(locked.body?.message).toMatch(LOCKED);
    expect(Number(locked.retryAfter)).toBeGreaterThan(0);
    expect(locked.setCookie).toEqual([]);
  });

  it("one account's failures do not lock out another account at the same address", async () => {
    const noisy = await newUser();
    const quiet = await newUser("quiet-password-1");
    for (let i = 0; i < 7; i++) await signIn(direct, noisy, "wrong-guess");
    expect((await signIn(direct, noisy, "right-password-1")).status).toBe(429);
    const ok = await signIn(direct, quiet, "quiet-password-1");
    expect(ok.status).toBe(200);
    expect((await sessionOf(direct, ok.cookie))?.user.email).toBe(quiet);
  });

  it("behind a trusted proxy each client address has its own limit, so the owner at another address still signs in", async () => {
    const email = await newUser();
    for (let i = 0; i < 5; i++) expect((await signIn(proxied, email, "wrong-guess", { "x-forwarded-for": "203.0.113.1" })).status).toBe(401);
    expect((await signIn(proxied, email, "right-password-1", { "x-forwarded-for": "203.0.113.1" })).status).toBe(429);
    // A made-up hop to the left of the proxy's own entry changes nothing: the proxy appended the real one.
    expect((await signIn(proxied, email, "right-password-1", { "x-forwarded-for": "192.0.2.77, 203.0.113.1" })).status).toBe(429);
    expect((await signIn(proxied, email, "right-password-1", { "x-forwarded-for": "203.0.113.2" })).status).toBe(200);
  });

  it("guessing from many addresses meets the account's ceiling, which never stops the owner at an address they signed in from before", async () => {
    const email = await newUser();
    expect((await signIn(proxied, email, "right-password-1", { "x-forwarded-for": "198.18.0.1" })).status).toBe(200);
    // 50 failures over 10 addresses: each address stays under its own limits.
    for (let addr = 0; addr < 10; addr++) {
      for (let i = 0; i < 5; i++) expect((await signIn(proxied, email, "wrong-guess", { "x-forwarded-for": `198.51.100.${100 + addr}` })).status).toBe(401);
    }
    const fresh = await signIn(proxied, email, "right-password-1", { "x-forwarded-for": "198.18.0.99" });
    expect(fresh.status).toBe(429);
    expect(fresh.body?.message).toMatch(LOCKED);
    // The account's lock is a while, not forever: at most SIGN_IN_LIMITS.maxLockSeconds.
    expect(Number(fresh.retryAfter)).toBeLessThanOrEqual(15 * 60);
    expect((await signIn(proxied, email, "right-password-1", { "x-forwarded-for": "198.18.0.1" })).status).toBe(200);
  });
});

describe("addresses and cookies", () => {
  it("audit events record the socket's address, or the forwarded one only behind a trusted proxy", async () => {
    const admin = await signIn(direct, a.users.admin.email, "correct-horse-battery");
    const spoofed = { "x-forwarded-for": "6.6.6.6", "x-real-ip": "6.6.6.7", "x-planton-socket-address": "6.6.6.8" };
    expect((await trpc(direct, admin.cookie, "members.add", { org: a.slug, email: "audit-direct@example.test", role: "viewer" }, "mutation", spoofed)).ok).toBe(true);
    const viaProxy = await signIn(proxied, a.users.admin.email, "correct-horse-battery");
    expect((await trpc(proxied, viaProxy.cookie, "members.add", { org: a.slug, email: "audit-proxied@example.test", role: "viewer" }, "mutation", { "x-forwarded-for": "6.6.6.6, 203.0.113.9" })).ok).toBe(true);
    const events = await t.db.select().from(auditEvents).where(and(eq(auditEvents.orgId, a.orgId), eq(auditEvents.action, "member.invite")));
    const addressOf = (email: string) => events.find((e) => e.summary.includes(email))?.clientAddress;
    expect(addressOf("audit-direct@example.test")).toBe("127.0.0.1");
    expect(addressOf("audit-proxied@example.test")).toBe("203.0.113.9");
  });

  it("sign-ins, failed sign-ins and sign-outs are in the audit record of the person's organization, with the client's address", async () => {
    const email = await newUser();
    const [user] = await t.db.select({ id: users.id }).from(users).where(eq(users.email, email));
    await t.db.insert(memberships).values({ id: newId("membership"), orgId: b.orgId, userId: user.id, role: "viewer" });
    expect((await signIn(direct, email, "wrong-password-9")).status).toBe(401);
    const ok = await signIn(direct, email, "right-password-1");
    expect(ok.status).toBe(200);
    const out = await fetch(`${direct.url}/api/auth/sign-out`, { method: "POST", headers: { cookie: ok.cookie, origin: direct.url, "content-type": "application/json" }, body: "{}" });
    expect(out.status).toBe(200);
    const events = await t.db.select().from(auditEvents).where(and(eq(auditEvents.orgId, b.orgId), eq(auditEvents.targetName, email))).orderBy(auditEvents.seq);
    expect(events.map((e) => [e.action, e.result, e.actorLabel, e.clientAddress])).toEqual([
      ["session.sign_in_failed", "failure", email, "127.0.0.1"],
      ["session.sign_in", "success", email, "127.0.0.1"],
      ["session.sign_out", "success", email, "127.0.0.1"],
    ]);
    expect(JSON.stringify(events)).not.toContain("wrong-password-9");
  });

  it("session cookies follow the console's scheme: plain over http, Secure and __Secure- named when PLANTON_URL is https", async () => {
    const email = await newUser();
    const plain = await signIn(direct, email, "right-password-1");
    expect(plain.setCookie.length).toBeGreaterThan(0);
    for (const c of plain.setCookie) {
      expect(c).not.toMatch(/;\s*secure/i);
      expect(c).not.toMatch(/^__Secure-/);
    }
    const secure = await signIn(proxied, email, "right-password-1", { "x-forwarded-for": "198.18.1.1" });
    expect(secure.setCookie.find((c) => c.includes("session_token"))).toMatch(/^__Secure-better-auth\.session_token=.*;\s*Secure/i);
  });
});

describe("passwords and takeover", () => {
  it("changing a password ends the user's other sessions, and the old password stops working", async () => {
    const email = await newUser("first-password-1");
    const laptop = await signIn(direct, email, "first-password-1");
    const phone = await signIn(direct, email, "first-password-1");
    expect((await sessionOf(direct, phone.cookie))?.user.email).toBe(email);
    const res = await fetch(`${direct.url}/api/auth/change-password`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: laptop.cookie, origin: direct.url },
      body: JSON.stringify({ currentPassword: "first-password-1", newPassword: "second-password-2", revokeOtherSessions: true }),
    });
    expect(res.status).toBe(200);
    const laptopNow = res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
    expect((await sessionOf(direct, laptopNow))?.user.email).toBe(email);
    expect(await sessionOf(direct, phone.cookie)).toBeNull();
    expect((await signIn(direct, email, "first-password-1")).status).toBe(401);
    expect((await signIn(direct, email, "second-password-2")).status).toBe(200);
  });

  it("the takeover across organizations fails: what B's admin holds never signs in as A's member", async () => {
    const victim = `victim-${Math.random().toString(36).slice(2, 6)}@example.test`;
    const bAdmin = await signIn(direct, b.users.admin.email, "correct-horse-battery");
    const fromB = await trpc<{ invitation: { path: string } }>(direct, bAdmin.cookie, "members.add", { org: b.slug, email: victim, role: "viewer" }, "mutation");
    expect(fromB.ok && Object.keys(fromB.data).sort()).toEqual(["email", "invitation", "role"]);
    // B's admin opens B's own link and chooses the password themselves (what the invitation page does).
    await choosePasswordWithInvitation(t.db, { token: fromB.ok ? fromB.data.invitation.path.split("/").pop()! : "", name: "Victim", password: "b-admin-chose-it" });

    // A later adds the same email; the answer is the same kind as for any new person.
    const aAdmin = await signIn(direct, a.users.admin.email, "correct-horse-battery");
    const fromA = await trpc<{ invitation: { path: string } }>(direct, aAdmin.cookie, "members.add", { org: a.slug, email: victim, role: "admin" }, "mutation");
    expect(fromA.ok && Object.keys(fromA.data).sort()).toEqual(["email", "invitation", "role"]);

    // B's admin signs in with the password they chose: A stays closed to them.
    const squatter = await signIn(direct, victim, "b-admin-chose-it");
    expect(squatter.status).toBe(200);
    const inA = await trpc(direct, squatter.cookie, "members.list", { org: a.slug }, "query");
    expect(inA).toMatchObject({ ok: false, code: "NOT_FOUND" });
    const me = await trpc<{ organizations: { slug: string }[] }>(direct, squatter.cookie, "me.get", undefined, "query");
    expect(me.ok && me.data.organizations.map((o) => o.slug)).toEqual([b.slug]);
    // A's link, opened by anyone, offers no password form for the existing account.
    const page = await (await fetch(`${direct.url}${fromA.ok ? fromA.data.invitation.path : ""}`)).text();
    expect(page).toContain("already has a Planton account");
    expect(page).not.toContain("New password");
  });
});
