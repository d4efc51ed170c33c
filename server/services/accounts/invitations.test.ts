import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { invitations, sessions, users } from "@/db/schema";
import { createTestDatabase, testDriver, type TestDatabase } from "../../../test/database";
import { auditOf, refusal, seedSettingsOrg, type SettingsOrg } from "../../../test/settings";
import { createAuth } from "../../auth/auth";
import { addMember, listMembers, resetMemberSignIn } from "../settings/members";
import { acceptInvitation, choosePasswordWithInvitation, describeInvitation, hasPassword } from "./invitations";

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
const userId = async (email: string) => (await t.db.select().from(users).where(eq(users.email, email)))[0]?.id;
const isMember = async (org: SettingsOrg, email: string) => (await listMembers(t.db, org.orgId)).some((m) => m.email === email);

describe(`invitations (${testDriver})`, () => {
  it("a new person's link sets their name and password once; a second use is refused and changes nothing", async () => {
    const added = await addMember(t.db, a.actor(), { email: "ines@example.com", role: "engineer" });
    const token = tokenOf(added.invitation.path);
    expect(await describeInvitation(t.db, token, null)).toMatchObject({ state: "choose_password", email: "ines@example.com", orgName: `Org ${a.slug}`, reset: false });
    await choosePasswordWithInvitation(t.db, { token, name: "Inès Durand", password: "ines-chose-this" }, "203.0.113.7");
    expect((await signIn("ines@example.com", "ines-chose-this")).user.name).toBe("Inès Durand");
    const [event] = await auditOf(t.db, a.orgId, "member.add");
    expect(event).toMatchObject({ summary: `ines@example.com joined ${a.slug} as engineer with an invitation link`, clientAddress: "203.0.113.7", actorLabel: "ines@example.com" });

    const again = await refusal(choosePasswordWithInvitation(t.db, { token, name: "Mallory", password: "mallory-was-here" }));
    expect(again.code).toBe("CONFLICT");
    expect(again.message).toMatch(/^This invitation was already used on \d{4}-\d\d-\d\d \d\d:\d\d UTC, so it cannot be used again\. Sign in with your password, or ask an admin of Org \S+ for a new link \(Settings → Members\)\.$/);
    expect((await describeInvitation(t.db, token, null)).state).toBe("used");
    await expect(signIn("ines@example.com", "mallory-was-here")).rejects.toThrow();
    expect((await signIn("ines@example.com", "ines-chose-this")).user.name).toBe("Inès Durand");
  });

  it("an expired link is refused with the moment it expired and who can issue a new one", async () => {
    const added = await addMember(t.db, a.actor(), { email: "late@example.com", role: "viewer" });
    const token = tokenOf(added.invitation.path);
    await t.db.update(invitations).set({ expiresAt: new Date("2026-01-02T03:04:00Z") }).where(eq(invitations.email, "late@example.com"));
    const r = await refusal(choosePasswordWithInvitation(t.db, { token, name: "Late", password: "too-late-now" }));
    expect(r.code).toBe("PRECONDITION_FAILED");
    expect(r.message).toBe(`This invitation expired on 2026-01-02 03:04 UTC, so it cannot be used. Ask an admin of Org ${a.slug} for a new link (Settings → Members).`);
    expect(await userId("late@example.com")).toBeUndefined();
  });

  it("a made-up or truncated token is refused without saying which tokens exist", async () => {
    for (const token of ["inv_not-a-real-token-at-all-000000", "garbage", ""]) {
      expect((await describeInvitation(t.db, token, null)).state).toBe("invalid");
      expect((await refusal(choosePasswordWithInvitation(t.db, { token, name: "X", password: "whatever-123" }))).message).toMatch(/^This invitation link is not valid/);
    }
  });

  it("adding an email again replaces its earlier link", async () => {
    const first = await addMember(t.db, a.actor(), { email: "twice@example.com", role: "viewer" });
    const second = await addMember(t.db, a.actor(), { email: "twice@example.com", role: "engineer" });
    expect((await describeInvitation(t.db, tokenOf(first.invitation.path), null)).state).toBe("invalid");
    await choosePasswordWithInvitation(t.db, { token: tokenOf(second.invitation.path), name: "Twice", password: "second-link-ok" });
    expect((await listMembers(t.db, a.orgId)).find((m) => m.email === "twice@example.com")?.role).toBe("engineer");
  });

  it("the takeover across organizations fails: B's admin makes up an account with B's link, A invites that email, and B's admin cannot get into A", async () => {
    // B's admin invites an email that is not theirs and uses the link themselves: they now know its password.
    const fromB = await addMember(t.db, b.actor(), { email: "victim@example.com", role: "viewer" });
    await choosePasswordWithInvitation(t.db, { token: tokenOf(fromB.invitation.path), name: "Victim", password: "b-admin-knows-this" });
    // A invites the same email and sends the link to the real person. A's answer has the same shape as ever.
    const fromA = await addMember(t.db, a.actor(), { email: "victim@example.com", role: "admin" });
    expect(Object.keys(fromA).sort()).toEqual(["email", "invitation", "role"]);
    // Signed in with the password B's admin chose, the account is not in A: knowing the password opens nothing of A's.
    const squatter = await userId("victim@example.com");
    expect(await isMember(a, "victim@example.com")).toBe(false);
    // A's link cannot set the password of an existing account, and accepting it needs both the link and the account.
    expect(await describeInvitation(t.db, tokenOf(fromA.invitation.path), null)).toMatchObject({ state: "sign_in" });
    const overwrite = await refusal(choosePasswordWithInvitation(t.db, { token: tokenOf(fromA.invitation.path), name: "B admin", password: "b-admin-new-pass" }));
    expect(overwrite.message).toBe(`Nothing was changed: victim@example.com already has an account. Sign in with its password, then open this link again to join Org ${a.slug}.`);
    // Someone signed in as another account cannot accept A's link for this email either.
    const wrong = await refusal(acceptInvitation(t.db, { token: tokenOf(fromA.invitation.path), userId: b.users.admin.userId }));
    expect(wrong.message).toBe(`Nothing was changed: this invitation is for victim@example.com, and you are signed in as ${b.users.admin.email}. Sign out, then open the link again and sign in as victim@example.com.`);
    // B's own link is spent.
    expect((await refusal(choosePasswordWithInvitation(t.db, { token: tokenOf(fromB.invitation.path), name: "B", password: "b-admin-again" }))).code).toBe("CONFLICT");
    expect(await isMember(a, "victim@example.com")).toBe(false);
    expect(squatter).toBeDefined();
  });

  it("an admin cannot reset the sign-in of someone who also belongs to an organization they do not administer", async () => {
    const fromB = await addMember(t.db, b.actor(), { email: "shared@example.com", role: "viewer" });
    await choosePasswordWithInvitation(t.db, { token: tokenOf(fromB.invitation.path), name: "Shared", password: "owner-secret-1" });
    const fromA = await addMember(t.db, a.actor(), { email: "shared@example.com", role: "engineer" });
    await acceptInvitation(t.db, { token: tokenOf(fromA.invitation.path), userId: await userId("shared@example.com") });
    expect(await isMember(a, "shared@example.com")).toBe(true);
    const inB = (await listMembers(t.db, b.orgId)).find((m) => m.email === "shared@example.com")!;
    const reset = await refusal(resetMemberSignIn(t.db, b.actor(), inB.id));
    expect(reset.code).toBe("PRECONDITION_FAILED");
    expect(reset.message).toBe(
      "Nothing was changed: shared@example.com also belongs to an organization you are not an admin of, so a new password from here would open it too. Ask them to change their password themselves (Change password, under their name in the sidebar).",
    );
    expect((await signIn("shared@example.com", "owner-secret-1")).user.email).toBe("shared@example.com");
  });

  it("an admin resets a member's sign-in: the password stops working, sessions end, and only the new link sets a new one", async () => {
    const added = await addMember(t.db, a.actor(), { email: "rita@example.com", role: "engineer" });
    await choosePasswordWithInvitation(t.db, { token: tokenOf(added.invitation.path), name: "Rita", password: "rita-first-pass" });
    await signIn("rita@example.com", "rita-first-pass");
    const rita = await userId("rita@example.com");
    expect((await t.db.select().from(sessions).where(eq(sessions.userId, rita))).length).toBe(1);

    const member = (await listMembers(t.db, a.orgId)).find((m) => m.email === "rita@example.com")!;
    const r = await a.as("admin").members.resetSignIn({ org: a.slug, id: member.id });
    expect(Object.keys(r).sort()).toEqual(["email", "id", "invitation"]);
    expect(await t.db.select().from(sessions).where(eq(sessions.userId, rita))).toEqual([]);
    expect(await hasPassword(t.db, rita)).toBe(false);
    await expect(signIn("rita@example.com", "rita-first-pass")).rejects.toThrow();
    const [event] = await auditOf(t.db, a.orgId, "member.sign_in_reset");
    expect(event.summary).toMatch(new RegExp(`^Reset the sign-in of rita@example.com in ${a.slug}: their password was removed, 1 session ended, and an invitation link is valid until .+ UTC$`));

    // While the reset is pending, another organization's link cannot be used to set a password either.
    const fromB = await addMember(t.db, b.actor(), { email: "rita@example.com", role: "viewer" });
    expect(await describeInvitation(t.db, tokenOf(fromB.invitation.path), null)).toMatchObject({ state: "not_set_up" });
    expect((await refusal(choosePasswordWithInvitation(t.db, { token: tokenOf(fromB.invitation.path), name: "B", password: "b-admin-guess" }))).code).toBe("CONFLICT");

    expect(await describeInvitation(t.db, tokenOf(r.invitation.path), null)).toMatchObject({ state: "choose_password", reset: true, name: "Rita" });
    await choosePasswordWithInvitation(t.db, { token: tokenOf(r.invitation.path), name: "Rita", password: "rita-second-pass" });
    expect((await signIn("rita@example.com", "rita-second-pass")).user.email).toBe("rita@example.com");
  });

  it("engineers cannot reset sign-ins, and an admin changes their own password on the change-password page instead", async () => {
    const admin = (await listMembers(t.db, a.orgId)).find((m) => m.userId === a.users.admin.userId)!;
    const viewer = (await listMembers(t.db, a.orgId)).find((m) => m.userId === a.users.viewer.userId)!;
    expect((await refusal(a.as("engineer").members.resetSignIn({ org: a.slug, id: viewer.id }))).code).toBe("FORBIDDEN");
    const self = await refusal(a.as("admin").members.resetSignIn({ org: a.slug, id: admin.id }));
    expect(self.message).toBe("Nothing was changed: this is your own sign-in. Change your password on the Change password page (under your name in the sidebar) instead.");
  });
});
