// Changing an Infra Component: the next spec version (who, when, the field-level diff) and an update
// job for it. Optimistic concurrency on the spec version: a change based on a version someone else
// has since replaced is refused, naming both, so no change is lost silently.
import { and, eq, isNotNull, isNull, notInArray, sql } from "drizzle-orm";
import type { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { componentVersions, infraComponents, stateObjects } from "@/db/schema";
import { updateComponentBody } from "@/lib/api/component-schemas";
import { recordAudit, diffFields } from "../../audit";
import type { Actor } from "../../actor";
import { conflict } from "../../errors";
import { getCatalogKind } from "../catalog";
import { moduleRef, pinnedModule } from "../modules/resolve";
import { createJob } from "../jobs/create-job";
import { backendRule, backendsAndDefaults, servedComponents, type BackendRow } from "../state-backends/served";
import { connectionForKind, stateBackendByName, validateSpec, withField } from "./create-component";
import { getComponent, jobAhead, mayHaveResources, type InfraComponentView } from "./queries";
import { assertComponentAction, statusesRefusing } from "./refusals";
import { recordVersion, specFields, versionedFields } from "./versions";
import { getComponentView, type ComponentChange } from "./views";

/**
 * Records the next spec version and, unless deploy is false, queues an update job for it (behind the
 * component's job already running or waiting, if any). A change that changes nothing records nothing.
 */
export async function changeComponent(db: Database, actor: Actor, raw: z.input<typeof updateComponentBody>): Promise<ComponentChange> {
  const input = updateComponentBody.parse(raw);
  // Without baseVersion the change is based on the version read here; a change that lands in between is read again.
  for (let attempt = 0; ; attempt++) {
    const current = await getComponent(db, actor.orgId, input.id);
    assertComponentAction("update", current, actor.role);
    const kind = await getCatalogKind(db, actor.orgId, current.kind);
    const patch: Partial<typeof infraComponents.$inferInsert> = {};
    // What the version and the audit event compare: names rather than ids, and the spec key by key.
    const after: Record<string, unknown> = {};
    if (input.description !== undefined) patch.description = after.description = input.description;
    if (input.spec !== undefined) Object.assign(after, specFields(current.spec, (patch.spec = validateSpec(kind, input.spec))));
    if (input.connection !== undefined) {
      const conn = input.connection ? await connectionForKind(db, actor.orgId, kind, input.connection).catch(withField("connection")) : null;
      patch.connectionId = conn?.id ?? null;
      after.connection = conn?.name ?? null;
    }
    let backend: BackendRow | null = null;
    if (input.stateBackend !== undefined) {
      backend = input.stateBackend ? await stateBackendByName(db, actor.orgId, input.stateBackend).catch(withField("stateBackend")) : null;
      patch.stateBackendId = backend?.id ?? null;
      after.stateBackend = backend?.name ?? null;
    }
    if (input.module !== undefined) {
      const pinned = input.module ? await pinnedModule(db, actor.orgId, kind.kind, input.module) : null;
      patch.customModuleId = pinned?.id ?? null;
      after.customModule = pinned ? moduleRef(pinned) : null;
    }
    const changes = diffFields(versionedFields(current), after);
    if (!Object.keys(changes).length) return { component: await getComponentView(db, actor, current.id), job: null, queuedBehind: null };
    if ("stateBackend" in changes) await refuseLeavingStateBehind(db, actor.orgId, current, backend);
    const base = input.baseVersion ?? current.specVersion;

    const done = await db.transaction(async (tx) => {
      const [row] = await tx
        .update(infraComponents)
        .set({ ...patch, specVersion: sql`${infraComponents.specVersion} + 1`, updatedAt: new Date() })
        .where(and(eq(infraComponents.id, current.id), eq(infraComponents.specVersion, base), notInArray(infraComponents.status, statusesRefusing("update"))))
        .returning({ specVersion: infraComponents.specVersion });
      if (!row) return null;
      await recordVersion(tx, actor, current.id, changes);
      await recordAudit(tx, actor, {
        action: "component.update",
        targetId: current.id,
        targetName: current.name,
        environment: current.environment,
        summary: `Changed ${Object.keys(changes).join(", ")} of ${current.kind} ${current.name} in ${current.environment} (version ${row.specVersion})`,
        changes,
      });
      if (!input.deploy) return { job: null, queuedBehind: null };
      const queuedBehind = await jobAhead(tx, current.id);
      const job = await createJob(tx, actor, { componentId: current.id, operation: "update", versionMessage: input.versionMessage });
      return { job, queuedBehind };
    });
    if (done) return { component: await getComponentView(db, actor, current.id), ...done };
    // Someone else's change (or a delete) landed since the version this change is based on: nothing was saved.
    const now = await getComponent(db, actor.orgId, current.id);
    assertComponentAction("update", now, actor.role);
    if (input.baseVersion !== undefined || attempt >= 2) throw await staleVersion(db, now, base);
  }
}

/** The 409 for a change based on a version that is no longer the component's: both versions, who made the newer one and when, and the fix. */
async function staleVersion(db: Queryable, c: InfraComponentView, base: number) {
  const [newer] = await db
    .select({ by: componentVersions.createdByLabel, at: componentVersions.createdAt })
    .from(componentVersions)
    .where(and(eq(componentVersions.componentId, c.id), eq(componentVersions.version, c.specVersion)));
  const made = newer ? `, made by ${newer.by} at ${newer.at.toISOString()}` : "";
  return conflict(
    `Nothing was changed: your change is based on version ${base} of ${c.name}, but it is at version ${c.specVersion} now${made}. Reload it, review what changed (planton infra component get ${c.id}, or its Versions tab), and apply your change again on version ${c.specVersion}.`,
    "baseVersion",
  );
}

/**
 * A component whose state already lives in a backend keeps it there: pointing it elsewhere would leave
 * that state behind, and the next job would start from nothing and create its resources again. A move copies it.
 */
async function refuseLeavingStateBehind(db: Queryable, orgId: string, c: InfraComponentView, next: BackendRow | null) {
  if (!(await mayHaveResources(db, c.id))) return;
  const [served] = await servedComponents(db, orgId, { componentId: c.id });
  const [onPlanton] = await db
    .select({ id: stateObjects.id })
    .from(stateObjects)
    .where(and(eq(stateObjects.componentId, c.id), isNotNull(stateObjects.state), isNull(stateObjects.movedToBackendId)));
  const org = await backendsAndDefaults(db, orgId);
  const to = backendRule(org, { stateBackendId: next?.id ?? null, stateOnPlanton: !!onPlanton, provisioner: served?.provisioner ?? null }).backend;
  if (!served || (to?.id ?? "") === served.backendId) return;
  const from = org.backends.find((b) => b.id === served.backendId)?.name ?? served.backendId;
  const tool = served.provisioner === "pulumi" ? "pulumi" : "tofu";
  throw conflict(
    `Nothing was changed: ${c.name}'s state is kept in state backend ${from}, and pointing it at ${to?.name ?? "another backend"} would leave that state behind (the next job would start from an empty state and create its resources again). ` +
      `Move the state instead: planton ${tool} state migrate-backend ${c.id} --to ${to?.name ?? "<backend>"} (or Settings → State Backends), which copies it and points the component at the new backend.`,
    "stateBackend",
  );
}
