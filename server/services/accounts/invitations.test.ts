import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { invitations, sessions, users } from "@/db/schema";
import { createTestDatabase, testDriver, type TestDatabase } from "../../../test/database";
import { auditOf, refusal, seedSettingsOrg, type SettingsOrg } from "../../../test/settings";
import { createAuth } from "../../auth/auth";
import { addMember, listMembers, resetMemberSignIn } from "../settings/members";
import { acceptInvitation, describeInvitation, hasPassword } from "./invitations";

let t: TestDatabase;
let a: SettingsOrg;
let b: SettingsOrg;

beforeAll(async () => {
  t = await createTestDatabase();
  a = await seedSettingsOrg(t.db);
  b = await seedSettingsOrg(t.db);
});
afterAll(() => t.close());

const tokenOf = (path: string) => path.split("/").pop()!;
const signIn = (email: string, password: string) => createAuth(t.db).api.signInEmail({ body: { email, password } });
const userId = async (email: string) => (await t.db.select().from(users).where(eq(users.email, email)))[0].id;

describe(`invitations (${testDriver})`, () => {
  it("a set-password link sets the name and password once; a second use is refused and changes nothing", async () => {
    const added = await addMember(t.db, a.actor(), { email: "ines@example.com", name: "Ines", role: "engineer" });
    const token = tokenOf(added.invitation.path);
    expect(await describeInvitation(t.db, token)).toMatchObject({ state: "set_password", email: "ines@example.com", orgName: `Org ${a.slug}` });
    await acceptInvitation(t.db, { token, name: "Inès Durand", password: "ines-chose-this" }, "203.0.113.7");
    expect((await signIn("ines@example.com", "ines-chose-this")).user.name).toBe("Inès Durand");
    const [event] = await auditOf(t.db, a.orgId, "member.invitation_accept");
    expect(event).toMatchObject({ summary: "ines@example.com chose their password with the invitation link", clientAddress: "203.0.113.7" });

    const again = await refusal(acceptInvitation(t.db, { token, name: "Mallory", password: "mallory-was-here" }));
    expect(again.code).toBe("CONFLICT");
    expect(again.message).toMatch(/^This invitation was already used on \d{4}-\d\d-\d\d \d\d:\d\d UTC, so it cannot set a password again\. Sign in with the password you chose, or ask an admin of Org \S+ for a new link \(Settings → Members → Reset sign-in\)\.$/);
    expect((await describeInvitation(t.db, token)).state).toBe("used");
    await expect(signIn("ines@example.com", "mallory-was-here")).rejects.toThrow();
    expect((await signIn("ines@example.com", "ines-chose-this")).user.name).toBe("Inès Durand");
  });

  it("an expired link is refused with the moment it expired and who can issue a new one", async () => {
    const added = await addMember(t.db, a.actor(), { email: "late@example.com", role: "viewer" });
    const token = tokenOf(added.invitation.path);
    await t.db.update(invitations).set({ expiresAt: new Date("2026-01-02T03:04:00Z") }).where(eq(invitations.userId, await userId("late@example.com")));
    const r = await refusal(acceptInvitation(t.db, { token, name: "Late", password: "too-late-now" }));
    expect(r.code).toBe("PRECONDITION_FAILED");
    expect(r.message).toBe(`This invitation expired on 2026-01-02 03:04 UTC, so it cannot be used. Ask an admin of Org ${a.slug} for a new link (Settings → Members → Reset sign-in).`);
    expect(await hasPassword(t.db, await userId("late@example.com"))).toBe(false);
  });

  it("a made-up or truncated token is refused without saying which tokens exist", async () => {
    for (const token of ["inv_not-a-real-token-at-all-000000", "garbage", ""]) {
      expect((await describeInvitation(t.db, token)).state).toBe("invalid");
      expect((await refusal(acceptInvitation(t.db, { token, name: "X", password: "whatever-123" }))).message).toMatch(/^This invitation link is not valid/);
    }
  });

  it("the takeover across organizations fails: B adds an email, A adds the same email later, and nothing B holds signs in as A's member", async () => {
    // B's admin adds a new person and holds the link; the person sets their password with it.
    const fromB = await addMember(t.db, b.actor(), { email: "shared@example.com", role: "viewer" });
    await acceptInvitation(t.db, { token: tokenOf(fromB.invitation.path), name: "Shared", password: "owner-secret-1" });
    // A adds the same email: A's answer carries a link, but it can set nothing.
    const fromA = await addMember(t.db, a.actor(), { email: "shared@example.com", role: "admin" });
    expect(await describeInvitation(t.db, tokenOf(fromA.invitation.path))).toMatchObject({ state: "join" });
    expect((await refusal(acceptInvitation(t.db, { token: tokenOf(fromA.invitation.path), name: "B admin", password: "b-admin-guess" }))).message).toMatch(/^This invitation link is not valid/);
    // B's old link is spent, and B cannot reset the sign-in of someone who also belongs to A.
    expect((await refusal(acceptInvitation(t.db, { token: tokenOf(fromB.invitation.path), name: "B admin", password: "b-admin-guess" }))).code).toBe("CONFLICT");
    const inB = (await listMembers(t.db, b.orgId)).find((m) => m.email === "shared@example.com")!;
    const reset = await refusal(resetMemberSignIn(t.db, b.actor(), inB.id));
    expect(reset).toMatchObject({ code: "PRECONDITION_FAILED" });
    expect(reset.message).toBe(
      "Nothing was changed: shared@example.com also belongs to an organization you are not an admin of, so a new password from here would open it too. Ask them to change their password themselves (Change password, under their name in the sidebar).",
    );
    await expect(signIn("shared@example.com", "b-admin-guess")).rejects.toThrow();
    expect((await signIn("shared@example.com", "owner-secret-1")).user.email).toBe("shared@example.com");
  });

  it("an account still waiting on its first link cannot be claimed through another organization's link", async () => {
    await addMember(t.db, a.actor(), { email: "pending@example.com", role: "viewer" });
    const fromB = await addMember(t.db, b.actor(), { email: "pending@example.com", role: "viewer" });
    expect(await describeInvitation(t.db, tokenOf(fromB.invitation.path))).toMatchObject({ state: "not_set_up" });
    expect((await refusal(acceptInvitation(t.db, { token: tokenOf(fromB.invitation.path), name: "B", password: "b-admin-guess" }))).code).toBe("BAD_REQUEST");
    expect(await hasPassword(t.db, await userId("pending@example.com"))).toBe(false);
  });

  it("an admin resets a member's sign-in: the password stops working, sessions end, and only the new link sets a new one", async () => {
    const added = await addMember(t.db, a.actor(), { email: "rita@example.com", role: "engineer" });
    await acceptInvitation(t.db, { token: tokenOf(added.invitation.path), name: "Rita", password: "rita-first-pass" });
    await signIn("rita@example.com", "rita-first-pass");
    const rita = await userId("rita@example.com");
    expect((await t.db.select().from(sessions).where(eq(sessions.userId, rita))).length).toBe(1);

    const member = (await listMembers(t.db, a.orgId)).find((m) => m.email === "rita@example.com")!;
    const r = await a.as("admin").members.resetSignIn({ org: a.slug, id: member.id });
    expect(Object.keys(r).sort()).toEqual(["email", "id", "invitation"]);
    expect(await t.db.select().from(sessions).where(eq(sessions.userId, rita))).toEqual([]);
    await expect(signIn("rita@example.com", "rita-first-pass")).rejects.toThrow();
    const [event] = await auditOf(t.db, a.orgId, "member.sign_in_reset");
    expect(event.summary).toMatch(new RegExp(`^Reset the sign-in of rita@example.com in ${a.slug}: their password was removed, 1 session ended, and an invitation link is valid until .+ UTC$`));

    await acceptInvitation(t.db, { token: tokenOf(r.invitation.path), name: "Rita", password: "rita-second-pass" });
    expect((await signIn("rita@example.com", "rita-second-pass")).user.email).toBe("rita@example.com");
  });

  it("engineers cannot reset sign-ins, and an admin resets their own password on the change-password page instead", async () => {
    const admin = (await listMembers(t.db, a.orgId)).find((m) => m.userId === a.users.admin.userId)!;
    const viewer = (await listMembers(t.db, a.orgId)).find((m) => m.userId === a.users.viewer.userId)!;
    expect((await refusal(a.as("engineer").members.resetSignIn({ org: a.slug, id: viewer.id }))).code).toBe("FORBIDDEN");
    const self = await refusal(a.as("admin").members.resetSignIn({ org: a.slug, id: admin.id }));
    expect(self.message).toBe("Nothing was changed: this is your own sign-in. Change your password on the Change password page (under your name in the sidebar) instead.");
  });
});
