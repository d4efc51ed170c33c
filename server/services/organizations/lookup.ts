import { and, eq } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { environments, memberships, organizations } from "@/db/schema";
import { notFound } from "../../errors";
import type { Role } from "@/lib/roles";

export async function getOrganizationBySlug(db: Queryable, slug: string) {
  const [org] = await db.select().from(organizations).where(eq(organizations.slug, slug));
  return org ?? null;
}

export async function getOrganizationById(db: Queryable, id: string) {
  const [org] = await db.select().from(organizations).where(eq(organizations.id, id));
  return org ?? null;
}

export async function membershipOf(db: Queryable, orgId: string, userId: string): Promise<Role | null> {
  const [m] = await db.select({ role: memberships.role }).from(memberships).where(and(eq(memberships.orgId, orgId), eq(memberships.userId, userId)));
  return m?.role ?? null;
}

/** The organizations a user belongs to, for the switcher. */
export async function organizationsOfUser(db: Queryable, userId: string) {
  return db
    .select({ id: organizations.id, slug: organizations.slug, name: organizations.name, role: memberships.role })
    .from(memberships)
    .innerJoin(organizations, eq(organizations.id, memberships.orgId))
    .where(eq(memberships.userId, userId))
    .orderBy(organizations.name);
}

export async function environmentByName(db: Queryable, orgId: string, name: string) {
  const [env] = await db.select().from(environments).where(and(eq(environments.orgId, orgId), eq(environments.name, name)));
  if (!env) {
    const known = await db.select({ name: environments.name }).from(environments).where(eq(environments.orgId, orgId));
    throw notFound(
      `Environment ${name}`,
      known.length ? `Pick one of ${known.map((e) => e.name).join(", ")}, or create it in Settings → Environments.` : "Create it in Settings → Environments.",
    );
  }
  return env;
}
