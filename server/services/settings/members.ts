import { and, eq, isNull } from "drizzle-orm";
import { z } from "zod";
import type { Database, Queryable, Tx } from "@/db/client";
import { accounts, apiTokens, memberships, organizations, sessions, users } from "@/db/schema";
import { newId } from "@/lib/ids";
import { ROLES } from "@/lib/roles";
import { recordAudit } from "../../audit";
import { issueInvitation, utcMinute } from "../accounts/invitations";
import { conflict, notFound, PlantonError } from "../../errors";
import type { Actor } from "../../actor";

export const addMemberInput = z.object({
  email: z.email({ error: "Enter an email address, like jane@example.com" }).trim().toLowerCase(),
  role: z.enum(ROLES, { error: "Pick a role: viewer, engineer or admin" }),
});

export const changeRoleInput = z.object({ id: z.string(), role: z.enum(ROLES, { error: "Pick a role: viewer, engineer or admin" }) });

export async function listMembers(db: Queryable, orgId: string) {
  return db
    .select({ id: memberships.id, userId: users.id, name: users.name, email: users.email, role: memberships.role, joinedAt: memberships.createdAt })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(eq(memberships.orgId, orgId))
    .orderBy(users.email);
}

/**
 * Invites a person: the answer is a link to send them, the same whether or not the email already has an
 * account. Nobody joins until the link is used: a new person chooses their password with it; someone
 * with an account signs in and accepts. No credential is issued for an account that exists.
 */
export async function addMember(db: Database, actor: Actor, raw: z.input<typeof addMemberInput>) {
  const input = addMemberInput.parse(raw);
  return db.transaction(async (tx) => {
    const org = await orgOf(tx, actor.orgId);
    const [m] = await tx
      .select({ role: memberships.role })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(and(eq(memberships.orgId, actor.orgId), eq(users.email, input.email)));
    if (m) throw conflict(`${input.email} is already a member of ${org.slug} (${m.role}). Nothing was changed. Change their role in the list instead.`, "email");
    const invitation = await issueInvitation(tx, actor, { kind: "member", email: input.email, role: input.role });
    await recordAudit(tx, actor, {
      action: "member.invite",
      targetId: invitation.id,
      targetName: input.email,
      summary: `Invited ${input.email} to ${org.slug} as ${input.role} with a link valid until ${utcMinute(invitation.expiresAt)}`,
      changes: { email: input.email, role: input.role },
    });
    return { email: input.email, role: input.role, invitation: { path: invitation.path, expiresAt: invitation.expiresAt } };
  });
}

/**
 * Resets a member's sign-in: their password is removed, every session ends, and a new invitation link
 * (shown once) lets them choose a new password. The admin never reads or sets the password. Refused
 * for an account that also belongs to an organization the admin does not administer, or it would
 * hand them the keys to that organization too.
 */
export async function resetMemberSignIn(db: Database, actor: Actor, id: string) {
  return db.transaction(async (tx) => {
    const org = await orgOf(tx, actor.orgId);
    const [m] = await tx
      .select({ id: memberships.id, userId: memberships.userId, email: users.email })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(and(eq(memberships.id, id), eq(memberships.orgId, actor.orgId)));
    if (!m) throw notFound(`Member ${id}`, "They may have been removed already; reload the list.");
    if (m.userId === actor.userId) {
      throw new PlantonError("PRECONDITION_FAILED", "Nothing was changed: this is your own sign-in. Change your password on the Change password page (under your name in the sidebar) instead.");
    }
    const theirs = await tx.select({ orgId: memberships.orgId }).from(memberships).where(eq(memberships.userId, m.userId));
    const mine = await tx
      .select({ orgId: memberships.orgId })
      .from(memberships)
      .where(and(eq(memberships.userId, actor.userId ?? ""), eq(memberships.role, "admin")));
    if (theirs.some((t) => !mine.some((o) => o.orgId === t.orgId))) {
      throw new PlantonError(
        "PRECONDITION_FAILED",
        `Nothing was changed: ${m.email} also belongs to an organization you are not an admin of, so a new password from here would open it too. Ask them to change their password themselves (Change password, under their name in the sidebar).`,
      );
    }
    await tx.delete(accounts).where(and(eq(accounts.userId, m.userId), eq(accounts.providerId, "credential")));
    const ended = await tx.delete(sessions).where(eq(sessions.userId, m.userId)).returning({ id: sessions.id });
    const invitation = await issueInvitation(tx, actor, { kind: "reset", email: m.email, userId: m.userId });
    await recordAudit(tx, actor, {
      action: "member.sign_in_reset",
      targetId: m.id,
      targetName: m.email,
      summary: `Reset the sign-in of ${m.email} in ${org.slug}: their password was removed, ${ended.length} session${ended.length === 1 ? "" : "s"} ended, and an invitation link is valid until ${utcMinute(invitation.expiresAt)}`,
      changes: { email: m.email, endedSessions: ended.length, invitationId: invitation.id },
    });
    return { id: m.id, email: m.email, invitation: { path: invitation.path, expiresAt: invitation.expiresAt } };
  });
}

async function orgOf(db: Queryable, orgId: string) {
  const [org] = await db.select().from(organizations).where(eq(organizations.id, orgId));
  if (!org) throw notFound(`Organization ${orgId}`, "Reload the page.");
  return org;
}

/** The membership, with every admin membership of the org locked so two demotions cannot both pass the last-admin check. */
async function memberForChange(tx: Tx, actor: Actor, id: string) {
  const admins = await tx
    .select({ id: memberships.id })
    .from(memberships)
    .where(and(eq(memberships.orgId, actor.orgId), eq(memberships.role, "admin")))
    .for("update");
  const [m] = await tx
    .select({ id: memberships.id, role: memberships.role, userId: memberships.userId, email: users.email })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(and(eq(memberships.id, id), eq(memberships.orgId, actor.orgId)));
  if (!m) throw notFound(`Member ${id}`, "They may have been removed already; reload the list.");
  return { member: m, admins: admins.length };
}

function lastAdmin(what: string, org: string, field?: string) {
  return new PlantonError("PRECONDITION_FAILED", `Nothing was changed: ${what} would leave ${org} without an admin. Make another member admin first.`, field);
}

export async function changeMemberRole(db: Database, actor: Actor, raw: z.input<typeof changeRoleInput>) {
  const input = changeRoleInput.parse(raw);
  return db.transaction(async (tx) => {
    const org = await orgOf(tx, actor.orgId);
    const { member, admins } = await memberForChange(tx, actor, input.id);
    if (member.role === input.role) return;
    if (member.role === "admin" && admins <= 1) throw lastAdmin(`making ${member.email} ${input.role === "engineer" ? "an" : "a"} ${input.role}`, org.slug, "role");
    await tx.update(memberships).set({ role: input.role, updatedAt: new Date() }).where(eq(memberships.id, member.id));
    await recordAudit(tx, actor, {
      action: "member.role_change",
      targetId: member.id,
      targetName: member.email,
      summary: `Changed the role of ${member.email} from ${member.role} to ${input.role}`,
      changes: { role: { from: member.role, to: input.role } },
    });
  });
}

/** Removes a member; their API tokens for this organization are revoked with it. */
export async function removeMember(db: Database, actor: Actor, id: string) {
  return db.transaction(async (tx) => {
    const org = await orgOf(tx, actor.orgId);
    const { member, admins } = await memberForChange(tx, actor, id);
    if (member.role === "admin" && admins <= 1) throw lastAdmin(`removing ${member.email}`, org.slug);
    await tx.delete(memberships).where(eq(memberships.id, member.id));
    const revoked = await tx
      .update(apiTokens)
      .set({ revokedAt: new Date() })
      .where(and(eq(apiTokens.orgId, actor.orgId), eq(apiTokens.userId, member.userId), isNull(apiTokens.revokedAt)))
      .returning({ id: apiTokens.id });
    await recordAudit(tx, actor, {
      action: "member.remove",
      targetId: member.id,
      targetName: member.email,
      summary: `Removed ${member.email} (${member.role}) from ${org.slug}${revoked.length ? ` and revoked their ${revoked.length} API token${revoked.length === 1 ? "" : "s"}` : ""}`,
      changes: { email: member.email, role: member.role, revokedTokens: revoked.length },
    });
  });
}
