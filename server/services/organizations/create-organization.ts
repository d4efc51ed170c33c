import type { Database } from "@/db/client";
import { environments, memberships, organizations, stateBackendDefaults, stateBackends } from "@/db/schema";
import { PROVISIONERS } from "@/lib/catalog";
import { newId } from "@/lib/ids";
import { recordAudit } from "../../audit";
import { conflict, isUniqueViolation } from "../../errors";
import type { Actor } from "../../actor";

export const PLANTON_MANAGED_BACKEND = "planton-managed";

export interface CreateOrganizationInput {
  slug: string;
  name: string;
  environments: string[];
  adminUserId: string;
  adminLabel: string;
}

/** An organization with its environments, its first admin and the Planton-managed state backend it always has. */
export async function createOrganization(db: Database, input: CreateOrganizationInput) {
  const orgId = newId("organization");
  try {
    return await db.transaction(async (tx) => {
      await tx.insert(organizations).values({ id: orgId, slug: input.slug, name: input.name });
      if (input.environments.length) {
        await tx.insert(environments).values(input.environments.map((name) => ({ id: newId("environment"), orgId, name })));
      }
      await tx.insert(memberships).values({ id: newId("membership"), orgId, userId: input.adminUserId, role: "admin" });
      const backendId = newId("stateBackend");
      await tx.insert(stateBackends).values({ id: backendId, orgId, name: PLANTON_MANAGED_BACKEND, kind: "planton_managed", config: {} });
      await tx.insert(stateBackendDefaults).values(
        PROVISIONERS.map((provisioner) => ({ orgId, provisioner, backendId })),
      );
      const actor: Actor = { userId: input.adminUserId, label: input.adminLabel, orgId, role: "admin" };
      await recordAudit(tx, actor, {
        action: "organization.create",
        targetId: orgId,
        targetName: input.slug,
        summary: `Created organization ${input.slug} with environments ${input.environments.join(", ") || "(none)"}`,
      });
      return { id: orgId, slug: input.slug, name: input.name };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`An organization with the slug ${input.slug} already exists. Choose another slug.`, "slug");
    throw err;
  }
}
