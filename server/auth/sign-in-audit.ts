// Sign-ins and sign-outs in the audit record. A person's sign-in is recorded in every organization they
// belong to (their admins see it in their own history), one with no organization yet, or an attempt on
// an email nobody has, in the platform's chain (org_id null). A failure never records the password,
// and an unknown email only as it was typed (trimmed, bounded).
import { eq } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { memberships, sessions, users } from "@/db/schema";
import type { Role } from "@/lib/roles";
import type { Actor } from "../actor";
import { recordAudit, type AuditEntry } from "../audit";

/** The longest email an event records as typed (RFC 5321's limit). */
const EMAIL_MAX = 254;

export interface SignedInSession {
  userId: string;
  email: string;
  sessionId: string;
}

/** The organizations a person belongs to, with their role in each: the chains their events go to. */
const organizationsOf = (db: Queryable, userId: string) => db.select({ orgId: memberships.orgId, role: memberships.role }).from(memberships).where(eq(memberships.userId, userId));

async function accountOf(db: Queryable, email: string) {
  const [user] = await db.select({ id: users.id, email: users.email }).from(users).where(eq(users.email, email.toLowerCase()));
  if (!user) return null;
  const orgs = await organizationsOf(db, user.id);
  return { ...user, orgs };
}

/** One event per organization of the account (or one in the platform's chain when it has none). */
async function recordEverywhere(db: Queryable, who: { userId: string | null; label: string; clientAddress: string | null }, orgs: { orgId: string; role: Role }[], entry: AuditEntry) {
  const chains = orgs.length ? orgs : [{ orgId: "", role: "viewer" as Role }];
  await db.transaction(async (tx) => {
    for (const o of chains) {
      const actor: Actor = { userId: who.userId, label: who.label, orgId: o.orgId, role: o.role, clientAddress: who.clientAddress };
      await recordAudit(tx, actor, entry);
    }
  });
}

/** A password sign-in that worked: `token` is the new session's (looked up, never recorded). */
export async function auditSignIn(db: Queryable, userId: string, token: string | undefined, clientAddress: string | null): Promise<void> {
  const [user] = await db.select({ id: users.id, email: users.email }).from(users).where(eq(users.id, userId));
  if (!user) return;
  const [session] = token ? await db.select({ id: sessions.id }).from(sessions).where(eq(sessions.token, token)) : [];
  const orgs = await organizationsOf(db, user.id);
  await recordEverywhere(db, { userId: user.id, label: user.email, clientAddress }, orgs, {
    action: "session.sign_in",
    targetId: session?.id ?? null,
    targetName: user.email,
    summary: `${user.email} signed in${clientAddress ? ` from ${clientAddress}` : ""}`,
  });
}

/** A refused password sign-in: a wrong password (or no such account), or one stopped by the sign-in limits. */
export async function auditSignInFailure(db: Queryable, typedEmail: string, clientAddress: string | null, why: string): Promise<void> {
  const typed = typedEmail.trim().slice(0, EMAIL_MAX);
  const account = await accountOf(db, typed);
  // Nobody proved who they are: the event names the account tried, not a signed-in user.
  await recordEverywhere(db, { userId: null, label: account?.email ?? typed, clientAddress }, account?.orgs ?? [], {
    action: "session.sign_in_failed",
    targetId: account?.id ?? null,
    targetName: account?.email ?? typed,
    result: "failure",
    summary: `A sign-in as ${account?.email ?? typed}${clientAddress ? ` from ${clientAddress}` : ""} was refused: ${why}`,
  });
}

export async function auditSignOut(db: Queryable, session: SignedInSession, clientAddress: string | null): Promise<void> {
  const orgs = await organizationsOf(db, session.userId);
  await recordEverywhere(db, { userId: session.userId, label: session.email, clientAddress }, orgs, {
    action: "session.sign_out",
    targetId: session.sessionId,
    targetName: session.email,
    summary: `${session.email} signed out`,
  });
}
