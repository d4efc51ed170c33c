import { and, desc, eq, type SQL } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { connections, environments, infraComponents, stateBackends } from "@/db/schema";
import { notFound } from "../../errors";

const componentColumns = {
  id: infraComponents.id,
  name: infraComponents.name,
  kind: infraComponents.kind,
  description: infraComponents.description,
  spec: infraComponents.spec,
  environmentId: infraComponents.environmentId,
  environment: environments.name,
  connectionId: infraComponents.connectionId,
  connection: connections.name,
  stateBackendId: infraComponents.stateBackendId,
  stateBackend: stateBackends.name,
  customModuleId: infraComponents.customModuleId,
  createdAt: infraComponents.createdAt,
  updatedAt: infraComponents.updatedAt,
};

function selectComponents(db: Queryable, where: SQL | undefined) {
  return db
    .select(componentColumns)
    .from(infraComponents)
    .innerJoin(environments, eq(environments.id, infraComponents.environmentId))
    .leftJoin(connections, eq(connections.id, infraComponents.connectionId))
    .leftJoin(stateBackends, eq(stateBackends.id, infraComponents.stateBackendId))
    .where(where);
}

export async function listComponents(db: Queryable, orgId: string, filter: { environment?: string; kind?: string } = {}) {
  const conds = [eq(infraComponents.orgId, orgId)];
  if (filter.environment) conds.push(eq(environments.name, filter.environment));
  if (filter.kind) conds.push(eq(infraComponents.kind, filter.kind));
  return selectComponents(db, and(...conds)).orderBy(desc(infraComponents.createdAt));
}

export async function getComponent(db: Queryable, orgId: string, id: string) {
  const [row] = await selectComponents(db, and(eq(infraComponents.orgId, orgId), eq(infraComponents.id, id)));
  if (!row) throw notFound(`Infra Component ${id}`, "Check the id, or find it in the Infra Components list.");
  return row;
}

export type InfraComponentView = Awaited<ReturnType<typeof getComponent>>;
