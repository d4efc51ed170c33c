import { and, eq, inArray, isNotNull, isNull, notInArray, or, sql, type SQL } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { componentVersions, connections, environments, iacModules, infraComponents, infraJobs, stateBackends, stateObjects } from "@/db/schema";
import { GONE_STATUSES } from "@/lib/component-lifecycle";
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
  /** The custom module as name@version (null when it follows the latest). */
  customModule: sql<string | null>`${iacModules.name} || '@' || ${iacModules.version}`,
  status: infraComponents.status,
  statusReason: infraComponents.statusReason,
  specVersion: infraComponents.specVersion,
  deleteJobId: infraComponents.deleteJobId,
  deletedAt: infraComponents.deletedAt,
  deletedBy: infraComponents.deletedBy,
  // Who made version 1: an API token's name as well as a person's email.
  createdByLabel: componentVersions.createdByLabel,
  createdAt: infraComponents.createdAt,
  updatedAt: infraComponents.updatedAt,
};

export function selectComponents(db: Queryable, where: SQL | undefined) {
  return db
    .select(componentColumns)
    .from(infraComponents)
    .innerJoin(environments, eq(environments.id, infraComponents.environmentId))
    .leftJoin(connections, eq(connections.id, infraComponents.connectionId))
    .leftJoin(stateBackends, eq(stateBackends.id, infraComponents.stateBackendId))
    .leftJoin(iacModules, eq(iacModules.id, infraComponents.customModuleId))
    .leftJoin(componentVersions, and(eq(componentVersions.componentId, infraComponents.id), eq(componentVersions.version, 1)))
    .where(where);
}

/** A component of the organization, gone ones included (their pages stay readable); callers that change it check its status (lib/component-lifecycle.ts). */
export async function getComponent(db: Queryable, orgId: string, id: string) {
  const [row] = await selectComponents(db, and(eq(infraComponents.orgId, orgId), eq(infraComponents.id, id)));
  if (!row) throw notFound(`Infra Component ${id}`, "Check the id, or find it in the Infra Components list (planton infra component list).");
  return row;
}

export type InfraComponentView = Awaited<ReturnType<typeof getComponent>>;

export const notGone = notInArray(infraComponents.status, [...GONE_STATUSES]);

/** The component's jobs that have not ended, oldest first. */
export async function unfinishedJobs(db: Queryable, componentId: string) {
  return db
    .select({ id: infraJobs.id, status: infraJobs.status, operation: infraJobs.operation, startedAt: infraJobs.startedAt })
    .from(infraJobs)
    .where(and(eq(infraJobs.componentId, componentId), inArray(infraJobs.status, ["queued", "running", "awaiting_approval"])))
    .orderBy(infraJobs.createdAt, infraJobs.id);
}

/**
 * The job a new job of the component would wait behind (claim.ts: one job per component, in created
 * order), the newest of them; null when it would be claimable at once.
 */
export async function jobAhead(db: Queryable, componentId: string): Promise<string | null> {
  const [row] = await db
    .select({ id: infraJobs.id })
    .from(infraJobs)
    .where(
      and(
        eq(infraJobs.componentId, componentId),
        or(inArray(infraJobs.status, ["queued", "running"]), and(eq(infraJobs.status, "awaiting_approval"), isNotNull(infraJobs.startedAt))),
      ),
    )
    .orderBy(sql`${infraJobs.createdAt} desc, ${infraJobs.id} desc`)
    .limit(1);
  return row?.id ?? null;
}

/**
 * Whether the component may have resources: one of its jobs started (init onwards can write state), or
 * Planton-managed storage holds a state for it. A component for which neither is true has nothing to destroy.
 */
export async function mayHaveResources(db: Queryable, componentId: string): Promise<boolean> {
  const [started] = await db.select({ id: infraJobs.id }).from(infraJobs).where(and(eq(infraJobs.componentId, componentId), isNotNull(infraJobs.startedAt))).limit(1);
  if (started) return true;
  const [state] = await db.select({ id: stateObjects.id }).from(stateObjects).where(and(eq(stateObjects.componentId, componentId), isNotNull(stateObjects.state), isNull(stateObjects.movedToBackendId))).limit(1);
  return !!state;
}
