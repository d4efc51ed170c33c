// Invitation links: the only way a password is set for someone else's account. An admin never sees or
// chooses a password; the person who opens a `set_password` link chooses their own, once.
import { and, eq, isNull } from "drizzle-orm";
import { hashPassword } from "better-auth/crypto";
import { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { accounts, invitations, memberships, organizations, sessions, users } from "@/db/schema";
import { newId } from "@/lib/ids";
import { recordAudit } from "../../audit";
import { serverConfig } from "../../config";
import { newBearerToken, sha256Hex } from "../../crypto";
import { badRequest, PlantonError } from "../../errors";

export type InvitationKind = "set_password" | "join";

/** What the add-member and reset answers carry: the link's path (the console prefixes its own origin) and its end. */
export interface IssuedInvitation {
  path: string;
  expiresAt: Date;
}

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 128;

/** "2026-12-08 14:05 UTC": how every invitation and lockout message writes a moment. */
export const utcMinute = (d: Date) => `${d.toISOString().slice(0, 10)} ${d.toISOString().slice(11, 16)} UTC`;

/**
 * Issues a new link for `userId`. A new `set_password` link voids the user's earlier unused ones, so
 * only the latest link an admin handed out can set a password.
 */
export async function issueInvitation(tx: Queryable, input: { userId: string; orgId: string; kind: InvitationKind; createdBy: string | null }): Promise<IssuedInvitation & { id: string }> {
  if (input.kind === "set_password") {
    await tx.delete(invitations).where(and(eq(invitations.userId, input.userId), eq(invitations.kind, "set_password"), isNull(invitations.usedAt)));
  }
  const { token, hash } = newBearerToken("inv");
  const id = newId("invitation");
  const expiresAt = new Date(Date.now() + serverConfig().PLANTON_INVITATION_DAYS * 86_400_000);
  await tx.insert(invitations).values({ id, userId: input.userId, orgId: input.orgId, kind: input.kind, tokenHash: hash, createdBy: input.createdBy, expiresAt });
  return { id, path: `/invite/${token}`, expiresAt };
}

/** Whether the account can sign in with a password yet. */
export async function hasPassword(db: Queryable, userId: string): Promise<boolean> {
  const [row] = await db.select({ id: accounts.id }).from(accounts).where(and(eq(accounts.userId, userId), eq(accounts.providerId, "credential")));
  return !!row;
}

export type InvitationView =
  | { state: "invalid"; message: string }
  | { state: "used" | "expired" | "not_set_up"; message: string; email: string; orgName: string }
  | { state: "set_password" | "join"; email: string; name: string; orgName: string; orgSlug: string; expiresAt: Date };

const invalidMessage =
  "This invitation link is not valid, so nothing can be done with it. Check that you copied the whole link, or ask an admin of your organization for a new one (Settings → Members → Reset sign-in).";
const usedMessage = (usedAt: Date, org: string) =>
  `This invitation was already used on ${utcMinute(usedAt)}, so it cannot set a password again. Sign in with the password you chose, or ask an admin of ${org} for a new link (Settings → Members → Reset sign-in).`;
const expiredMessage = (expiresAt: Date, org: string) =>
  `This invitation expired on ${utcMinute(expiresAt)}, so it cannot be used. Ask an admin of ${org} for a new link (Settings → Members → Reset sign-in).`;

async function findInvitation(db: Queryable, token: string, lock: boolean) {
  if (!/^inv_[A-Za-z0-9_-]{20,64}$/.test(token)) return undefined;
  const q = db
    .select({ inv: invitations, email: users.email, name: users.name, orgName: organizations.name, orgSlug: organizations.slug })
    .from(invitations)
    .innerJoin(users, eq(users.id, invitations.userId))
    .innerJoin(organizations, eq(organizations.id, invitations.orgId))
    .where(eq(invitations.tokenHash, sha256Hex(token)));
  const [row] = lock ? await q.for("update", { of: invitations }) : await q;
  return row;
}

/** What the invitation page shows for a token. */
export async function describeInvitation(db: Queryable, token: string, now = new Date()): Promise<InvitationView> {
  const row = await findInvitation(db, token, false);
  if (!row) return { state: "invalid", message: invalidMessage };
  const common = { email: row.email, orgName: row.orgName };
  if (row.inv.kind === "set_password" && row.inv.usedAt) return { state: "used", message: usedMessage(row.inv.usedAt, row.orgName), ...common };
  if (row.inv.expiresAt <= now) return { state: "expired", message: expiredMessage(row.inv.expiresAt, row.orgName), ...common };
  if (row.inv.kind === "join" && !(await hasPassword(db, row.inv.userId))) {
    return {
      state: "not_set_up",
      message: `${row.email} was added to ${row.orgName}, but the account has no password yet. Open the first invitation link you were sent to choose one, then sign in; or ask the admin who sent it for a new link.`,
      ...common,
    };
  }
  return { state: row.inv.kind, ...common, name: row.name, orgSlug: row.orgSlug, expiresAt: row.inv.expiresAt };
}

export const acceptInvitationInput = z.object({
  token: z.string().max(200),
  name: z.string().trim().min(1, { error: "Enter your name, as your team should see it" }).max(100, { error: "Use at most 100 characters for your name" }),
  password: z
    .string()
    .min(PASSWORD_MIN, { error: `Choose a password of at least ${PASSWORD_MIN} characters` })
    .max(PASSWORD_MAX, { error: `Choose a password of at most ${PASSWORD_MAX} characters` }),
});

/**
 * Sets the invited person's name and password once. The link is consumed in the same transaction that
 * sets the password, under a row lock, so two tabs cannot both use it; any session of the account ends.
 */
export async function acceptInvitation(db: Database, raw: z.input<typeof acceptInvitationInput>, clientAddress: string | null = null, now = new Date()) {
  const input = acceptInvitationInput.parse(raw);
  const hashed = await hashPassword(input.password);
  return db.transaction(async (tx) => {
    const row = await findInvitation(tx, input.token, true);
    if (!row || row.inv.kind !== "set_password") throw badRequest(invalidMessage);
    if (row.inv.usedAt) throw new PlantonError("CONFLICT", usedMessage(row.inv.usedAt, row.orgName));
    if (row.inv.expiresAt <= now) throw new PlantonError("PRECONDITION_FAILED", expiredMessage(row.inv.expiresAt, row.orgName));
    const userId = row.inv.userId;
    await tx.update(invitations).set({ usedAt: now }).where(eq(invitations.id, row.inv.id));
    await tx.update(users).set({ name: input.name, updatedAt: now }).where(eq(users.id, userId));
    await tx.delete(accounts).where(and(eq(accounts.userId, userId), eq(accounts.providerId, "credential")));
    await tx.insert(accounts).values({ id: newId("account"), accountId: userId, providerId: "credential", userId, password: hashed });
    await tx.delete(sessions).where(eq(sessions.userId, userId));
    const [m] = await tx.select({ role: memberships.role }).from(memberships).where(and(eq(memberships.orgId, row.inv.orgId), eq(memberships.userId, userId)));
    await recordAudit(tx, { userId, label: row.email, orgId: row.inv.orgId, role: m?.role ?? "viewer", clientAddress }, {
      action: "member.invitation_accept",
      targetType: "user",
      targetId: userId,
      summary: `${row.email} chose their password with the invitation link`,
      changes: { invitationId: row.inv.id },
    });
    return { email: row.email, orgSlug: row.orgSlug };
  });
}
