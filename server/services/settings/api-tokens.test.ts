import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { count, eq } from "drizzle-orm";
import { apiTokens } from "@/db/schema";
import { createTestDatabase, testDriver, type TestDatabase } from "../../../test/database";
import { auditCount, auditOf, callerAs, refusal, seedSettingsOrg, type SettingsOrg } from "../../../test/settings";
import { sha256Hex } from "../../crypto";
import { callerFromApiToken, TOKEN_LAST_USED_PRECISION_MS } from "../../trpc/context";
import { createApiToken, listApiTokens, revokeApiToken } from "./api-tokens";
import { acceptInvitation } from "../accounts/invitations";

let t: TestDatabase;
let org: SettingsOrg;

beforeAll(async () => {
  t = await createTestDatabase();
  org = await seedSettingsOrg(t.db);
});
afterAll(() => t.close());

describe(`API tokens (${testDriver})`, () => {
  it("a member creates a token, shown once; it authenticates as them in this organization; revoked, it no longer does", async () => {
    const viewer = org.as("viewer");
    const created = await viewer.me.apiTokens.create({ org: org.slug, name: "laptop-cli", expiresInDays: 30 });
    expect(created.token).toMatch(/^plt_[A-Za-z0-9_-]{32}$/);
    expect(created.token.startsWith(created.prefix)).toBe(true);
    expect(created.expiresAt!.getTime() - Date.now()).toBeGreaterThan(29 * 86_400_000);

    const [row] = await t.db.select().from(apiTokens).where(eq(apiTokens.id, created.id));
    expect(row.tokenHash).toBe(sha256Hex(created.token));
    expect(JSON.stringify(row)).not.toContain(created.token);

    const caller = await callerFromApiToken(t.db, created.token);
    expect(caller).toMatchObject({ userId: org.users.viewer.userId, tokenOrgId: org.orgId, tokenName: "laptop-cli" });
    // "Last used" is written at most once a minute per token, not on every call.
    const usedAt = async () => (await t.db.select({ at: apiTokens.lastUsedAt }).from(apiTokens).where(eq(apiTokens.id, created.id)))[0].at;
    const first = await usedAt();
    expect(first).toEqual(expect.any(Date));
    await callerFromApiToken(t.db, created.token);
    expect(await usedAt()).toEqual(first);
    const older = new Date(first!.getTime() - TOKEN_LAST_USED_PRECISION_MS);
    await t.db.update(apiTokens).set({ lastUsedAt: older }).where(eq(apiTokens.id, created.id));
    await callerFromApiToken(t.db, created.token);
    expect((await usedAt())!.getTime()).toBeGreaterThan(older.getTime());
    const asToken = callerAs(t.db, caller!);
    expect((await asToken.environments.list({ org: org.slug })).map((e) => e.name)).toEqual(["dev", "staging", "prod"]);

    const list = await viewer.me.apiTokens.list({ org: org.slug });
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ name: "laptop-cli", prefix: created.prefix, mine: true, expired: false, lastUsedAt: expect.any(Date) });
    expect(JSON.stringify(list)).not.toContain(created.token);

    await viewer.me.apiTokens.revoke({ org: org.slug, id: created.id });
    expect(await callerFromApiToken(t.db, created.token)).toBeNull();
    expect(await viewer.me.apiTokens.list({ org: org.slug })).toEqual([]);

    const [made] = await auditOf(t.db, org.orgId, "api_token.create");
    expect(made.summary).toBe(`Created API token laptop-cli (${created.prefix}…), expiring ${created.expiresAt!.toISOString().slice(0, 10)}`);
    expect(JSON.stringify(made)).not.toContain(created.token);
    const [revoked] = await auditOf(t.db, org.orgId, "api_token.revoke");
    expect(revoked.summary).toBe(`Revoked API token laptop-cli (${created.prefix}…)`);
  });

  it("an expired token does not authenticate", async () => {
    const { id, token } = await createApiToken(t.db, org.actor("engineer"), { name: "short-lived", expiresInDays: 1 });
    await t.db.update(apiTokens).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(apiTokens.id, id));
    expect(await callerFromApiToken(t.db, token)).toBeNull();
    expect((await listApiTokens(t.db, org.actor("engineer"))).find((x) => x.id === id)?.expired).toBe(true);
  });

  it("refuses a duplicate name or a bad expiry beside the field, and writes nothing", async () => {
    await createApiToken(t.db, org.actor("engineer"), { name: "ci" });
    const before = { rows: (await t.db.select({ n: count() }).from(apiTokens))[0].n, audit: await auditCount(t.db, org.orgId) };
    const dup = await refusal(org.as("engineer").me.apiTokens.create({ org: org.slug, name: "ci" }));
    expect(dup).toMatchObject({ code: "CONFLICT", field: "name" });
    expect(dup.message).toBe("You already have a token named ci. No token was created. Choose another name, or revoke the old one first.");
    const days = await refusal(org.as("engineer").me.apiTokens.create({ org: org.slug, name: "other", expiresInDays: 0 }));
    expect(days).toMatchObject({ code: "BAD_REQUEST", field: "expiresInDays" });
    const blank = await refusal(createApiToken(t.db, org.actor("engineer"), { name: "  " }));
    expect(blank.field).toBe("name");
    expect((await t.db.select({ n: count() }).from(apiTokens))[0].n).toBe(before.rows);
    expect(await auditCount(t.db, org.orgId)).toBe(before.audit);
    // Another member may use the same name for their own token.
    await createApiToken(t.db, org.actor("viewer"), { name: "ci" });
  });

  it("a member sees and revokes only their own tokens; an admin sees and revokes every member's", async () => {
    const engineerTokens = await listApiTokens(t.db, org.actor("engineer"));
    const ci = engineerTokens.find((x) => x.name === "ci")!;
    expect((await refusal(org.as("viewer").me.apiTokens.revoke({ org: org.slug, id: ci.id }))).code).toBe("NOT_FOUND");
    expect((await refusal(org.as("engineer").apiTokens.list({ org: org.slug }))).code).toBe("FORBIDDEN");
    expect((await refusal(org.as("engineer").apiTokens.revoke({ org: org.slug, id: ci.id }))).code).toBe("FORBIDDEN");

    const all = await org.as("admin").apiTokens.list({ org: org.slug });
    expect(all.map((x) => x.owner).sort()).toEqual(expect.arrayContaining([org.users.engineer.email, org.users.viewer.email]));
    expect(all.every((x) => !x.mine)).toBe(true);
    await org.as("admin").apiTokens.revoke({ org: org.slug, id: ci.id });
    expect((await listApiTokens(t.db, org.actor("engineer"))).some((x) => x.id === ci.id)).toBe(false);
    const last = (await auditOf(t.db, org.orgId, "api_token.revoke")).at(-1)!;
    expect(last.summary).toBe(`Revoked API token ci (${ci.prefix}…) of ${org.users.engineer.email}`);
  });

  it("a token works only in the organization it was made in", async () => {
    const other = await seedSettingsOrg(t.db);
    const { token } = await createApiToken(t.db, org.actor("admin"), { name: "scoped" });
    const caller = (await callerFromApiToken(t.db, token))!;
    // Even if the person is a member there too.
    const { invitation } = await other.as("admin").members.add({ org: other.slug, email: org.users.admin.email, role: "viewer" });
    await acceptInvitation(t.db, { token: invitation.path.split("/").pop()!, userId: org.users.admin.userId });
    expect((await refusal(callerAs(t.db, caller).environments.list({ org: other.slug }))).code).toBe("NOT_FOUND");
    await revokeApiToken(t.db, org.actor("admin"), (await listApiTokens(t.db, org.actor("admin"))).find((x) => x.name === "scoped")!.id);
  });
});
