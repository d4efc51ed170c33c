// What the API answers for a component: its configuration and status, its newest job, and what the
// caller may do with it now (lib/component-lifecycle.ts), for managed and gone components alike.
import { and, desc, eq, inArray, type SQL } from "drizzle-orm";
import type { z } from "zod";
import type { Queryable } from "@/db/client";
import { environments, infraComponents, infraJobs } from "@/db/schema";
import { componentActions, GONE_STATUSES } from "@/lib/component-lifecycle";
import { listComponentsInput, type componentChangeSchema, type componentListSchema, type componentSchema } from "@/lib/api/component-schemas";
import type { Role } from "@/lib/roles";
import { componentModules, moduleRef, type ModuleChoice } from "../modules/resolve";
import { factsOf } from "./refusals";
import { getComponent, notGone, selectComponents, type InfraComponentView } from "./queries";

export type ComponentView = z.infer<typeof componentSchema>;
export type ComponentChange = z.infer<typeof componentChangeSchema>;
type Viewer = { orgId: string; role: Role };
type JobRef = ComponentView["lastJob"];

/** The newest job of each component. */
async function lastJobs(db: Queryable, ids: string[]): Promise<Map<string, NonNullable<JobRef>>> {
  if (!ids.length) return new Map();
  const rows = await db
    .selectDistinctOn([infraJobs.componentId], {
      componentId: infraJobs.componentId,
      id: infraJobs.id,
      operation: infraJobs.operation,
      status: infraJobs.status,
      result: infraJobs.result,
      specVersion: infraJobs.specVersion,
      createdAt: infraJobs.createdAt,
    })
    .from(infraJobs)
    .where(inArray(infraJobs.componentId, ids))
    .orderBy(infraJobs.componentId, desc(infraJobs.createdAt), desc(infraJobs.id));
  return new Map(rows.map(({ componentId, ...j }) => [componentId, j]));
}

function toView(c: InfraComponentView, lastJob: JobRef | undefined, role: Role, mod: ModuleChoice | undefined): ComponentView {
  return {
    id: c.id,
    name: c.name,
    kind: c.kind,
    description: c.description,
    spec: (c.spec ?? {}) as Record<string, unknown>,
    environment: c.environment,
    environmentId: c.environmentId,
    connection: c.connection,
    stateBackend: c.stateBackend,
    customModuleId: c.customModuleId,
    module: {
      rule: mod?.rule ?? "none",
      pinned: mod?.pinned ?? null,
      resolved: mod?.module ? moduleRef(mod.module) : null,
      sha256: mod?.module?.bundleSha256 ?? null,
    },
    status: c.status,
    statusReason: c.statusReason,
    specVersion: c.specVersion,
    deleteJobId: c.deleteJobId,
    deletedAt: c.deletedAt,
    deletedBy: c.deletedBy,
    createdByLabel: c.createdByLabel,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
    lastJob: lastJob ?? null,
    actions: componentActions(factsOf(c, role)),
  };
}

/** The organization's components, newest first: the managed ones (show=current), the deleted and forgotten (gone), or all. */
export async function listComponentViews(db: Queryable, actor: Viewer, raw: z.input<typeof listComponentsInput>): Promise<z.infer<typeof componentListSchema>> {
  const input = listComponentsInput.parse(raw);
  const conds: (SQL | undefined)[] = [eq(infraComponents.orgId, actor.orgId)];
  if (input.environment) conds.push(eq(environments.name, input.environment));
  if (input.kind) conds.push(eq(infraComponents.kind, input.kind));
  if (input.show === "current") conds.push(notGone);
  if (input.show === "gone") conds.push(inArray(infraComponents.status, [...GONE_STATUSES]));
  const rows = await selectComponents(db, and(...conds)).orderBy(desc(infraComponents.createdAt), desc(infraComponents.id));
  const jobs = await lastJobs(db, rows.map((r) => r.id));
  const modules = await componentModules(db, actor.orgId, rows);
  return { components: rows.map((r) => toView(r, jobs.get(r.id), actor.role, modules.get(r.id))) };
}

/** One component, gone ones included: a deleted component's page stays readable. */
export async function getComponentView(db: Queryable, actor: Viewer, id: string): Promise<ComponentView> {
  const c = await getComponent(db, actor.orgId, id);
  const jobs = await lastJobs(db, [c.id]);
  const modules = await componentModules(db, actor.orgId, [c]);
  return toView(c, jobs.get(c.id), actor.role, modules.get(c.id));
}
