import { randomBytes } from "node:crypto";
import { and, eq, isNull } from "drizzle-orm";
import { z } from "zod";
import type { Database, Queryable, Tx } from "@/db/client";
import { apiTokens, memberships, organizations, users } from "@/db/schema";
import { newId } from "@/lib/ids";
import { ROLES } from "@/lib/roles";
import { recordAudit } from "../../audit";
import { createAuth, createUserWithPassword } from "../../auth/auth";
import { conflict, notFound, PlantonError } from "../../errors";
import type { Actor } from "../../actor";

export const addMemberInput = z.object({
  email: z.email({ error: "Enter an email address, like jane@example.com" }).trim().toLowerCase(),
  name: z.string().trim().max(100).default(""),
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

/** Adds a member: an existing user by email, or a new user with a temporary password that is returned once. */
export async function addMember(db: Database, actor: Actor, raw: z.input<typeof addMemberInput>) {
  const input = addMemberInput.parse(raw);
  return db.transaction(async (tx) => {
    const org = await orgOf(tx, actor.orgId);
    let [user] = await tx.select().from(users).where(eq(users.email, input.email));
    let temporaryPassword: string | null = null;
    if (user) {
      const [m] = await tx.select().from(memberships).where(and(eq(memberships.orgId, actor.orgId), eq(memberships.userId, user.id)));
      if (m) throw conflict(`${input.email} is already a member of ${org.slug} (${m.role}). Nothing was changed. Change their role in the list instead.`, "email");
    } else {
      temporaryPassword = randomBytes(12).toString("base64url");
      // The user is created in the same transaction, so a refused membership leaves no orphan account.
      const created = await createUserWithPassword(createAuth(tx as unknown as Database), {
        email: input.email,
        name: input.name || input.email.split("@")[0],
        password: temporaryPassword,
      });
      [user] = await tx.select().from(users).where(eq(users.id, created.id));
    }
    const id = newId("membership");
    await tx.insert(memberships).values({ id, orgId: actor.orgId, userId: user.id, role: input.role });
    await recordAudit(tx, actor, {
      action: "member.add",
      targetType: "membership",
      targetId: id,
      summary: `Added ${input.email} to ${org.slug} as ${input.role}${temporaryPassword ? " (new account with a temporary password)" : ""}`,
      changes: { email: input.email, role: input.role, newAccount: !!temporaryPassword },
    });
    return { id, userId: user.id, email: user.email, name: user.name, role: input.role, temporaryPassword };
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
      targetType: "membership",
      targetId: member.id,
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
      targetType: "membership",
      targetId: member.id,
      summary: `Removed ${member.email} (${member.role}) from ${org.slug}${revoked.length ? ` and revoked their ${revoked.length} API token${revoked.length === 1 ? "" : "s"}` : ""}`,
      changes: { email: member.email, role: member.role, revokedTokens: revoked.length },
    });
  });
}
