// Sign-ins and sign-outs in the audit record, through the same handler the console's /api/auth route
// runs (better-auth on the test database): a success in each of the person's organizations, a failure
// as a failure (never the password; an unknown email only as typed, in the platform's chain), a sign-out.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq, isNull } from "drizzle-orm";
import { auditEvents, memberships } from "@/db/schema";
import { newId } from "@/lib/ids";
import { createTestDatabase, testDriver, type TestDatabase } from "../../test/database";
import { seedTestOrg, type TestOrg } from "../../test/fixtures";
import { SOCKET_ADDRESS_HEADER } from "../client-address";
import { createAuth, type Auth } from "./auth";
import { handleAuthRequest } from "./sign-in-limits";

let t: TestDatabase;
let auth: Auth;
let a: TestOrg;
let b: TestOrg;
const CONSOLE = "http://console.test";

beforeAll(async () => {
  t = await createTestDatabase();
  auth = createAuth(t.db);
  [a, b] = [await seedTestOrg(t.db), await seedTestOrg(t.db)];
  // The engineer of a is also a viewer of b: their sign-in shows in both histories.
  await t.db.insert(memberships).values({ id: newId("membership"), orgId: b.orgId, userId: a.users.engineer.userId, role: "viewer" });
  // As scripts/serve.mjs does: the socket's address header is the server's own.
  (globalThis as { __plantonSocketAddressHeader?: boolean }).__plantonSocketAddressHeader = true;
});
afterAll(() => t.close());

async function send(path: string, body: unknown, headers: Record<string, string> = {}) {
  const req = new Request(`${CONSOLE}/api/auth${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: CONSOLE, host: "console.test", [SOCKET_ADDRESS_HEADER]: "198.51.100.7", ...headers },
    body: JSON.stringify(body),
  });
  return handleAuthRequest(t.db, req, (r) => auth.handler(r), {
    limits: true,
    sessionOf: async (h) => {
      const s = await auth.api.getSession({ headers: h });
      return s ? { userId: s.user.id, email: s.user.email, sessionId: s.session.id } : null;
    },
  });
}

const eventsOf = (action: string) => t.db.select().from(auditEvents).where(eq(auditEvents.action, action));

describe(`sign-in audit (${testDriver})`, () => {
  it("a sign-in is recorded in each of the person's organizations, with the session and the client address; a sign-out likewise", async () => {
    const email = a.users.engineer.email;
    const res = await send("/sign-in/email", { email, password: "correct-horse-battery" });
    expect(res.status).toBe(200);
    const signIns = (await eventsOf("session.sign_in")).filter((e) => e.actorId === a.users.engineer.userId);
    expect(signIns.map((e) => e.orgId).sort()).toEqual([a.orgId, b.orgId].sort());
    const cookie = res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
    const session = await auth.api.getSession({ headers: new Headers({ cookie }) });
    for (const e of signIns) {
      expect(e).toMatchObject({ actorLabel: email, targetType: "session", targetId: session!.session.id, targetName: email, result: "success", clientAddress: "198.51.100.7" });
    }
    // The session's token is a bearer secret: no event holds it.
    expect(JSON.stringify(await t.db.select().from(auditEvents))).not.toContain(session!.session.token);

    const out = await send("/sign-out", {}, { cookie });
    expect(out.status).toBe(200);
    const signOuts = await eventsOf("session.sign_out");
    expect(signOuts.map((e) => [e.orgId, e.actorId, e.targetId, e.targetName]).sort()).toEqual(
      [[a.orgId, a.users.engineer.userId, session!.session.id, email], [b.orgId, a.users.engineer.userId, session!.session.id, email]].sort(),
    );
  });

  it("a wrong password is a failure in the account's organizations, and never records the password", async () => {
    const res = await send("/sign-in/email", { email: a.users.viewer.email.toUpperCase(), password: "hunter2-wrong-guess" });
    expect(res.status).toBe(401);
    const [e, ...more] = (await eventsOf("session.sign_in_failed")).filter((x) => x.orgId === a.orgId);
    expect(more).toEqual([]);
    expect(e).toMatchObject({ actorId: null, actorLabel: a.users.viewer.email, targetType: "user", targetId: a.users.viewer.userId, targetName: a.users.viewer.email, result: "failure", clientAddress: "198.51.100.7" });
    expect(e.summary).toBe(`A sign-in as ${a.users.viewer.email} from 198.51.100.7 was refused: wrong email or password`);
    expect(JSON.stringify(await t.db.select().from(auditEvents))).not.toContain("hunter2-wrong-guess");
  });

  it("an unknown email is a failure in the platform's chain, as typed (trimmed, bounded); a locked attempt is a failure too", async () => {
    expect((await send("/sign-in/email", { email: "Nobody@Example.test", password: "guess-one-two" })).status).toBe(401);
    // Refused as malformed before any password check: still a failure, bounded.
    const long = `Nobody.${"x".repeat(400)}@Example.test`;
    expect((await send("/sign-in/email", { email: `  ${long}  `, password: "guess-three" })).status).toBe(400);
    const platform = await t.db.select().from(auditEvents).where(and(isNull(auditEvents.orgId), eq(auditEvents.action, "session.sign_in_failed"))).orderBy(auditEvents.seq);
    expect(platform.map((e) => [e.actorLabel, e.targetName, e.targetId, e.result])).toEqual([
      ["Nobody@Example.test", "Nobody@Example.test", null, "failure"],
      [long.slice(0, 254), long.slice(0, 254), null, "failure"],
    ]);
    expect(platform[0].summary).toBe("A sign-in as Nobody@Example.test from 198.51.100.7 was refused: wrong email or password");
    expect(JSON.stringify(platform)).not.toMatch(/guess-one-two|guess-three/);

    // Past the limit for this (account, address) pair the password is not checked, and the refusal is recorded.
    const email = b.users.admin.email;
    for (let i = 0; i < 5; i++) expect((await send("/sign-in/email", { email, password: "wrong-again-1" })).status).toBe(401);
    expect((await send("/sign-in/email", { email, password: "correct-horse-battery" })).status).toBe(429);
    const failures = (await eventsOf("session.sign_in_failed")).filter((e) => e.orgId === b.orgId && e.targetId === b.users.admin.userId);
    expect(failures).toHaveLength(6);
    expect(failures.filter((e) => e.summary.endsWith("too many failed sign-ins (the sign-in limits); the password was not checked"))).toHaveLength(1);
    expect((await eventsOf("session.sign_in")).filter((e) => e.actorId === b.users.admin.userId)).toEqual([]);
  });
});
