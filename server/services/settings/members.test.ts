import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { count, eq } from "drizzle-orm";
import { accounts, invitations, memberships, users } from "@/db/schema";
import { createTestDatabase, testDriver, type TestDatabase } from "../../../test/database";
import { auditCount, auditOf, callerAs, refusal, seedSettingsOrg, type SettingsOrg } from "../../../test/settings";
import { sha256Hex } from "../../crypto";
import { createAuth } from "../../auth/auth";
import { acceptInvitation, choosePasswordWithInvitation } from "../accounts/invitations";
import { callerFromApiToken } from "../../trpc/context";
import { createApiToken } from "./api-tokens";
import { addMember, changeMemberRole, listMembers, removeMember } from "./members";

let t: TestDatabase;
let org: SettingsOrg;

beforeAll(async () => {
  t = await createTestDatabase();
  org = await seedSettingsOrg(t.db, `acme-${Math.random().toString(36).slice(2, 6)}`);
});
afterAll(() => t.close());

const memberOf = async (userId: string) => (await listMembers(t.db, org.orgId)).find((m) => m.userId === userId)!;
const counts = async () => ({
  users: (await t.db.select({ n: count() }).from(users))[0].n,
  members: (await t.db.select({ n: count() }).from(memberships))[0].n,
  invitations: (await t.db.select({ n: count() }).from(invitations))[0].n,
  audit: await auditCount(t.db, org.orgId),
});

describe(`members (${testDriver})`, () => {
  it("lists members with name, email, role and when they joined", async () => {
    const list = await org.as("viewer").members.list({ org: org.slug });
    expect(list.map((m) => m.role).sort()).toEqual(["admin", "engineer", "viewer"]);
    expect(list[0]).toMatchObject({ email: expect.stringContaining("@"), name: expect.any(String), joinedAt: expect.any(Date) });
  });

  it("an admin adds a new person: the answer is a link shown once; they join when they choose their password with it", async () => {
    const added = await org.as("admin").members.add({ org: org.slug, email: "Jane@Example.com", role: "engineer" });
    expect(Object.keys(added).sort()).toEqual(["email", "invitation", "role"]);
    expect(added).toMatchObject({ email: "jane@example.com", role: "engineer", invitation: { path: expect.stringMatching(/^\/invite\/inv_[\w-]{32}$/), expiresAt: expect.any(Date) } });
    // Nobody exists or joins until the link is used, and only the token's hash is stored.
    expect(await t.db.select().from(users).where(eq(users.email, "jane@example.com"))).toEqual([]);
    const token = added.invitation.path.split("/").pop()!;
    const [inv] = await t.db.select().from(invitations).where(eq(invitations.email, "jane@example.com"));
    expect(inv).toMatchObject({ kind: "member", role: "engineer", tokenHash: sha256Hex(token), usedAt: null });
    const [invite] = await auditOf(t.db, org.orgId, "member.invite");
    expect(invite.summary).toMatch(new RegExp(`^Invited jane@example.com to ${org.slug} as engineer with a link valid until \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC$`));
    expect(JSON.stringify(invite)).not.toContain(token);

    await choosePasswordWithInvitation(t.db, { token, name: "Jane Doe", password: "jane-chose-this" });
    const jane = (await listMembers(t.db, org.orgId)).find((m) => m.email === "jane@example.com")!;
    expect(jane).toMatchObject({ name: "Jane Doe", role: "engineer" });
    expect((await createAuth(t.db).api.signInEmail({ body: { email: "jane@example.com", password: "jane-chose-this" } })).user.id).toBe(jane.userId);
    const [joined] = await auditOf(t.db, org.orgId, "member.add");
    expect(joined.summary).toBe(`jane@example.com joined ${org.slug} as engineer with an invitation link`);
  });

  it("adds an existing user of another organization with the same answer and no credential; they join by accepting while signed in", async () => {
    const other = await seedSettingsOrg(t.db);
    const before = await t.db.select().from(accounts).where(eq(accounts.userId, other.users.viewer.userId));
    const added = await addMember(t.db, org.actor(), { email: other.users.viewer.email, role: "viewer" });
    expect(Object.keys(added).sort()).toEqual(["email", "invitation", "role"]);
    expect(added.invitation.path).toMatch(/^\/invite\/inv_[\w-]{32}$/);
    const [a, b] = (await auditOf(t.db, org.orgId, "member.invite")).map((e) => e.summary.replace(/^Invited \S+ to \S+ as \w+/, "Invited X").replace(/valid until [\d-]+ [\d:]+ UTC/, "valid until T"));
    // The two invitations were made moments apart: their expiry minutes may differ, their wording may not.
    expect(a).toBe(b);
    expect(await t.db.select().from(accounts).where(eq(accounts.userId, other.users.viewer.userId))).toEqual(before);
    expect((await listMembers(t.db, org.orgId)).some((m) => m.userId === other.users.viewer.userId)).toBe(false);
    await acceptInvitation(t.db, { token: added.invitation.path.split("/").pop()!, userId: other.users.viewer.userId });
    expect((await memberOf(other.users.viewer.userId)).role).toBe("viewer");
  });

  it("refuses a member who is already in the organization or a malformed email beside the email field, and writes nothing", async () => {
    const before = await counts();
    const dup = await refusal(org.as("admin").members.add({ org: org.slug, email: "jane@example.com", role: "viewer" }));
    expect(dup).toMatchObject({ code: "CONFLICT", field: "email" });
    expect(dup.message).toBe(`jane@example.com is already a member of ${org.slug} (engineer). Nothing was changed. Change their role in the list instead.`);
    const bad = await refusal(addMember(t.db, org.actor(), { email: "not-an-email", role: "viewer" }));
    expect(bad).toMatchObject({ code: "BAD_REQUEST", field: "email" });
    const role = await refusal(addMember(t.db, org.actor(), { email: "bob@example.com", role: "owner" as "admin" }));
    expect(role.field).toBe("role");
    expect(await counts()).toEqual(before);
  });

  it("engineers and viewers cannot add, change or remove members", async () => {
    const jane = (await listMembers(t.db, org.orgId)).find((m) => m.email === "jane@example.com")!;
    for (const role of ["engineer", "viewer"] as const) {
      expect((await refusal(org.as(role).members.add({ org: org.slug, email: "eve@example.com", role: "admin" }))).code).toBe("FORBIDDEN");
      expect((await refusal(org.as(role).members.changeRole({ org: org.slug, id: jane.id, role: "admin" }))).code).toBe("FORBIDDEN");
      expect((await refusal(org.as(role).members.remove({ org: org.slug, id: jane.id }))).code).toBe("FORBIDDEN");
    }
    expect((await memberOf(jane.userId)).role).toBe("engineer");
  });

  it("changes a role with an audit event", async () => {
    const jane = (await listMembers(t.db, org.orgId)).find((m) => m.email === "jane@example.com")!;
    await org.as("admin").members.changeRole({ org: org.slug, id: jane.id, role: "viewer" });
    expect((await memberOf(jane.userId)).role).toBe("viewer");
    const [event] = await auditOf(t.db, org.orgId, "member.role_change");
    expect(event.summary).toBe("Changed the role of jane@example.com from engineer to viewer");
    expect(event.changes).toEqual({ role: { from: "engineer", to: "viewer" } });
  });

  it("refuses to demote or remove the last admin, and allows it once another member is admin", async () => {
    const admin = await memberOf(org.users.admin.userId);
    const before = await counts();
    const demote = await refusal(org.as("admin").members.changeRole({ org: org.slug, id: admin.id, role: "engineer" }));
    expect(demote).toMatchObject({ code: "PRECONDITION_FAILED", field: "role" });
    expect(demote.message).toBe(`Nothing was changed: making ${admin.email} an engineer would leave ${org.slug} without an admin. Make another member admin first.`);
    const remove = await refusal(removeMember(t.db, org.actor(), admin.id));
    expect(remove.message).toBe(`Nothing was changed: removing ${admin.email} would leave ${org.slug} without an admin. Make another member admin first.`);
    expect(await counts()).toEqual(before);
    expect((await memberOf(org.users.admin.userId)).role).toBe("admin");

    const engineer = await memberOf(org.users.engineer.userId);
    await changeMemberRole(t.db, org.actor(), { id: engineer.id, role: "admin" });
    await changeMemberRole(t.db, org.actor(), { id: admin.id, role: "engineer" });
    expect((await memberOf(org.users.admin.userId)).role).toBe("engineer");
    // Give it back, so the rest of the file has its admin.
    await changeMemberRole(t.db, org.actor("engineer"), { id: admin.id, role: "admin" });
  });

  it("removing a member revokes their API tokens for this organization", async () => {
    const jane = (await listMembers(t.db, org.orgId)).find((m) => m.email === "jane@example.com")!;
    const janeActor = { userId: jane.userId, label: jane.email, orgId: org.orgId, role: jane.role };
    const { token } = await createApiToken(t.db, janeActor, { name: "laptop" });
    expect(await callerFromApiToken(t.db, token)).not.toBeNull();
    await org.as("admin").members.remove({ org: org.slug, id: jane.id });
    expect(await callerFromApiToken(t.db, token)).toBeNull();
    expect((await listMembers(t.db, org.orgId)).some((m) => m.userId === jane.userId)).toBe(false);
    const [event] = await auditOf(t.db, org.orgId, "member.remove");
    expect(event.summary).toBe(`Removed jane@example.com (viewer) from ${org.slug} and revoked their 1 API token`);
    // Her account stays (she may belong elsewhere), but this organization is closed to her.
    const r = await refusal(callerAs(t.db, { userId: jane.userId, email: jane.email, name: jane.name }).members.list({ org: org.slug }));
    expect(r.code).toBe("NOT_FOUND");
    expect((await t.db.select().from(users).where(eq(users.id, jane.userId))).length).toBe(1);
  });
});
