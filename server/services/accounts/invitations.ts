// Invitation links: the only way into an organization, and the only way a password is set for an
// account an admin named. An admin never sees or chooses a password. The person who opens a link either
// chooses their own password (a new account, or a reset) or, for an account that already exists, signs
// in and accepts: knowing an account's password is never enough to join an organization that sent its
// link to someone else, so an account made up by another organization's admin gains nothing.
import { and, eq, isNull } from "drizzle-orm";
import { hashPassword } from "better-auth/crypto";
import { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { accounts, invitations, memberships, organizations, sessions, users } from "@/db/schema";
import { newId } from "@/lib/ids";
import type { Role } from "@/lib/roles";
import type { Actor } from "../../actor";
import { recordAudit } from "../../audit";
import { serverConfig } from "../../config";
import { newBearerToken, sha256Hex } from "../../crypto";
import { badRequest, PlantonError } from "../../errors";

/** What the add-member and reset answers carry: the link's path (the console prefixes its own origin) and its end. */
export interface IssuedInvitation {
  id: string;
  path: string;
  expiresAt: Date;
}

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 128;

/** "2026-12-08 14:05 UTC": how every invitation and lockout message writes a moment. */
export const utcMinute = (d: Date) => `${d.toISOString().slice(0, 10)} ${d.toISOString().slice(11, 16)} UTC`;

/**
 * Issues a link for `email` to join the actor's organization as `role` (kind `member`), or for `userId`
 * to choose a new password (kind `reset`). A new link voids the same person's earlier unused ones.
 */
export async function issueInvitation(
  tx: Queryable,
  actor: Actor,
  input: { kind: "member"; email: string; role: Role } | { kind: "reset"; email: string; userId: string },
): Promise<IssuedInvitation> {
  await tx
    .delete(invitations)
    .where(and(eq(invitations.orgId, actor.orgId), eq(invitations.kind, input.kind), eq(invitations.email, input.email), isNull(invitations.usedAt)));
  const { token, hash } = newBearerToken("inv");
  const id = newId("invitation");
  const expiresAt = new Date(Date.now() + serverConfig().PLANTON_INVITATION_DAYS * 86_400_000);
  await tx.insert(invitations).values({
    id,
    orgId: actor.orgId,
    kind: input.kind,
    email: input.email,
    role: input.kind === "member" ? input.role : null,
    userId: input.kind === "reset" ? input.userId : null,
    tokenHash: hash,
    createdBy: actor.userId,
    expiresAt,
  });
  return { id, path: `/invite/${token}`, expiresAt };
}

/** Whether the account can sign in with a password. */
export async function hasPassword(db: Queryable, userId: string): Promise<boolean> {
  const [row] = await db.select({ id: accounts.id }).from(accounts).where(and(eq(accounts.userId, userId), eq(accounts.providerId, "credential")));
  return !!row;
}

export type InvitationView =
  | { state: "invalid"; message: string }
  | { state: "used" | "expired" | "not_set_up"; message: string; orgName: string }
  /** Choose a name and password: a new account (`member`), or a new password for an existing one (`reset`). */
  | { state: "choose_password"; email: string; name: string; orgName: string; reset: boolean }
  /** The account exists: sign in as it (or, signed in as it, accept). */
  | { state: "sign_in" | "accept"; email: string; orgName: string; signedInAs: string | null };

const invalidMessage =
  "This invitation link is not valid, so nothing was done with it. Check that you copied the whole link, or ask an admin of your organization for a new one (Settings → Members).";
const usedMessage = (usedAt: Date, org: string) =>
  `This invitation was already used on ${utcMinute(usedAt)}, so it cannot be used again. Sign in with your password, or ask an admin of ${org} for a new link (Settings → Members).`;
const expiredMessage = (expiresAt: Date, org: string) =>
  `This invitation expired on ${utcMinute(expiresAt)}, so it cannot be used. Ask an admin of ${org} for a new link (Settings → Members).`;

async function findInvitation(db: Queryable, token: string, lock: boolean) {
  if (!/^inv_[A-Za-z0-9_-]{20,64}$/.test(token)) return undefined;
  const q = db
    .select({ inv: invitations, orgName: organizations.name, orgSlug: organizations.slug })
    .from(invitations)
    .innerJoin(organizations, eq(organizations.id, invitations.orgId))
    .where(eq(invitations.tokenHash, sha256Hex(token)));
  const [row] = lock ? await q.for("update", { of: invitations }) : await q;
  return row;
}

type Found = NonNullable<Awaited<ReturnType<typeof findInvitation>>>;

/** The link's refusal, if it is spent or past its time. */
function spentOrExpired(row: Found, now: Date): { state: "used" | "expired"; message: string; code: "CONFLICT" | "PRECONDITION_FAILED" } | null {
  if (row.inv.usedAt) return { state: "used", message: usedMessage(row.inv.usedAt, row.orgName), code: "CONFLICT" };
  if (row.inv.expiresAt <= now) return { state: "expired", message: expiredMessage(row.inv.expiresAt, row.orgName), code: "PRECONDITION_FAILED" };
  return null;
}

async function accountOf(db: Queryable, email: string) {
  const [u] = await db.select({ id: users.id, name: users.name }).from(users).where(eq(users.email, email));
  return u ? { ...u, hasPassword: await hasPassword(db, u.id) } : null;
}

/** What the invitation page shows for a token, to a visitor signed in as `viewer` (or nobody). */
export async function describeInvitation(db: Queryable, token: string, viewer: { userId: string; email: string } | null, now = new Date()): Promise<InvitationView> {
  const row = await findInvitation(db, token, false);
  if (!row) return { state: "invalid", message: invalidMessage };
  const refusal = spentOrExpired(row, now);
  if (refusal) return { state: refusal.state, message: refusal.message, orgName: row.orgName };
  const account = await accountOf(db, row.inv.email);
  const base = { email: row.inv.email, orgName: row.orgName };
  if (row.inv.kind === "reset") return { state: "choose_password", ...base, name: account?.name ?? "", reset: true };
  if (!account) return { state: "choose_password", ...base, name: row.inv.email.split("@")[0], reset: false };
  if (!account.hasPassword) {
    return {
      state: "not_set_up",
      orgName: row.orgName,
      message: `${row.inv.email} has an account that is waiting for a new password. Open the reset link an admin sent you and choose one, then open this link again and sign in.`,
    };
  }
  return { state: viewer?.userId === account.id ? "accept" : "sign_in", ...base, signedInAs: viewer?.email ?? null };
}

export const choosePasswordInput = z.object({
  token: z.string().max(200),
  name: z.string().trim().min(1, { error: "Enter your name, as your team should see it" }).max(100, { error: "Use at most 100 characters for your name" }),
  password: z
    .string()
    .min(PASSWORD_MIN, { error: `Choose a password of at least ${PASSWORD_MIN} characters` })
    .max(PASSWORD_MAX, { error: `Choose a password of at most ${PASSWORD_MAX} characters` }),
});

/** The actor an invitee acts as while using their link: themselves, in the organization that sent it. */
const inviteeActor = (userId: string, email: string, orgId: string, role: Role, clientAddress: string | null): Actor => ({ userId, label: email, orgId, role, clientAddress });

/**
 * Uses a link to choose a password: creates the account and its membership (`member`, for an email
 * with no account yet) or replaces the password (`reset`). The link is consumed in the same transaction,
 * under a row lock, so two tabs cannot both use it; every session of a reset account ends.
 */
export async function choosePasswordWithInvitation(db: Database, raw: z.input<typeof choosePasswordInput>, clientAddress: string | null = null, now = new Date()) {
  const input = choosePasswordInput.parse(raw);
  const hashed = await hashPassword(input.password);
  return db.transaction(async (tx) => {
    const row = await findInvitation(tx, input.token, true);
    if (!row) throw badRequest(invalidMessage);
    const refusal = spentOrExpired(row, now);
    if (refusal) throw new PlantonError(refusal.code, refusal.message);
    const { inv } = row;
    const account = await accountOf(tx, inv.email);
    let userId: string;
    let role: Role;
    if (inv.kind === "reset") {
      if (!account || account.id !== inv.userId) throw badRequest(invalidMessage);
      userId = account.id;
      const [m] = await tx.select({ role: memberships.role }).from(memberships).where(and(eq(memberships.orgId, inv.orgId), eq(memberships.userId, userId)));
      if (!m) throw new PlantonError("PRECONDITION_FAILED", `Nothing was changed: ${inv.email} is no longer a member of ${row.orgName}, so its reset link no longer works. Ask an admin of an organization you belong to for a new one.`);
      role = m.role;
      await tx.update(users).set({ name: input.name, updatedAt: now }).where(eq(users.id, userId));
      await tx.delete(accounts).where(and(eq(accounts.userId, userId), eq(accounts.providerId, "credential")));
      await tx.delete(sessions).where(eq(sessions.userId, userId));
    } else {
      if (account) throw new PlantonError("CONFLICT", `Nothing was changed: ${inv.email} already has an account. Sign in with its password, then open this link again to join ${row.orgName}.`);
      userId = newId("user");
      role = inv.role!;
      await tx.insert(users).values({ id: userId, email: inv.email, name: input.name, emailVerified: false });
      await tx.insert(memberships).values({ id: newId("membership"), orgId: inv.orgId, userId, role });
    }
    await tx.insert(accounts).values({ id: newId("account"), accountId: userId, providerId: "credential", userId, password: hashed });
    await tx.update(invitations).set({ usedAt: now, userId }).where(eq(invitations.id, inv.id));
    await recordAudit(tx, inviteeActor(userId, inv.email, inv.orgId, role, clientAddress), {
      action: inv.kind === "reset" ? "member.password_reset" : "member.add",
      targetId: userId,
      targetName: inv.email,
      summary: inv.kind === "reset" ? `${inv.email} chose a new password with a reset link` : `${inv.email} joined ${row.orgSlug} as ${role} with an invitation link`,
      changes: inv.kind === "reset" ? { invitationId: inv.id } : { email: inv.email, role, invitationId: inv.id },
    });
    return { email: inv.email, orgSlug: row.orgSlug };
  });
}

/** Uses a `member` link while signed in as the account it names: the account joins the organization. */
export async function acceptInvitation(db: Database, input: { token: string; userId: string }, clientAddress: string | null = null, now = new Date()) {
  return db.transaction(async (tx) => {
    const row = await findInvitation(tx, input.token, true);
    if (!row || row.inv.kind !== "member") throw badRequest(invalidMessage);
    const refusal = spentOrExpired(row, now);
    if (refusal) throw new PlantonError(refusal.code, refusal.message);
    const [me] = await tx.select({ email: users.email }).from(users).where(eq(users.id, input.userId));
    if (me?.email !== row.inv.email) {
      throw new PlantonError("FORBIDDEN", `Nothing was changed: this invitation is for ${row.inv.email}, and you are signed in as ${me?.email ?? "someone else"}. Sign out, then open the link again and sign in as ${row.inv.email}.`);
    }
    const [existing] = await tx.select({ id: memberships.id }).from(memberships).where(and(eq(memberships.orgId, row.inv.orgId), eq(memberships.userId, input.userId)));
    if (!existing) await tx.insert(memberships).values({ id: newId("membership"), orgId: row.inv.orgId, userId: input.userId, role: row.inv.role! });
    await tx.update(invitations).set({ usedAt: now, userId: input.userId }).where(eq(invitations.id, row.inv.id));
    await recordAudit(tx, inviteeActor(input.userId, row.inv.email, row.inv.orgId, row.inv.role!, clientAddress), {
      action: "member.add",
      targetId: input.userId,
      targetName: row.inv.email,
      summary: `${row.inv.email} joined ${row.orgSlug} as ${row.inv.role} with an invitation link`,
      changes: { email: row.inv.email, role: row.inv.role, invitationId: row.inv.id },
    });
    return { email: row.inv.email, orgSlug: row.orgSlug };
  });
}
