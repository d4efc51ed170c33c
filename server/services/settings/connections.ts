import { eq, inArray } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { connectionAuthorizations, connections, environments } from "@/db/schema";

/** Connections of an organization with their authorizations; credentials are never returned. */
export async function listConnections(db: Queryable, orgId: string) {
  const rows = await db
    .select({
      id: connections.id,
      name: connections.name,
      provider: connections.provider,
      description: connections.description,
      config: connections.config,
      mode: connections.mode,
      runnerId: connections.runnerId,
      hasCredentials: connections.credentialsEncrypted,
      createdAt: connections.createdAt,
      updatedAt: connections.updatedAt,
    })
    .from(connections)
    .where(eq(connections.orgId, orgId))
    .orderBy(connections.name);
  const auths = rows.length
    ? await db
        .select({ connectionId: connectionAuthorizations.connectionId, id: connectionAuthorizations.id, scope: connectionAuthorizations.scope, environment: environments.name })
        .from(connectionAuthorizations)
        .leftJoin(environments, eq(environments.id, connectionAuthorizations.environmentId))
        .where(inArray(connectionAuthorizations.connectionId, rows.map((r) => r.id)))
    : [];
  return rows.map(({ hasCredentials, ...r }) => ({
    ...r,
    hasCredentials: !!hasCredentials,
    authorizations: auths.filter((a) => a.connectionId === r.id).map(({ id, scope, environment }) => ({ id, scope, environment })),
  }));
}
