// A component's spec versions: the configuration each change left, with its field-level diff from the
// one before (names, not ids; spec keys as `spec.<key>`), and the jobs that ran it.
import { and, asc, desc, eq } from "drizzle-orm";
import type { z } from "zod";
import type { Queryable } from "@/db/client";
import { componentVersions, iacModules, infraJobs } from "@/db/schema";
import type { componentVersionListSchema } from "@/lib/api/component-schemas";
import type { Actor } from "../../actor";
import { diffFields } from "../../audit";
import { getComponent, type InfraComponentView } from "./queries";

/** A spec as `spec.<key>` fields, with a key the new spec drops given as null (spec values reference secrets, never hold them). */
export function specFields(before: unknown, spec: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys((before ?? {}) as object)) out[`spec.${k}`] = null;
  for (const [k, v] of Object.entries((spec ?? {}) as object)) out[`spec.${k}`] = v;
  return out;
}

/** The fields a version compares (lib/component-lifecycle.ts VERSIONED_FIELDS), as a diff reads them. */
export function versionedFields(c: Pick<InfraComponentView, "description" | "spec" | "connection" | "stateBackend" | "customModule">): Record<string, unknown> {
  return { description: c.description, ...specFields({}, c.spec), connection: c.connection, stateBackend: c.stateBackend, customModule: c.customModule };
}

/** Version 1's changes: every field that has a value, from null. */
export function firstVersionChanges(c: Parameters<typeof versionedFields>[0]) {
  const after = versionedFields(c);
  const before: Record<string, unknown> = Object.fromEntries(Object.keys(after).map((k) => [k, null]));
  return diffFields(before, after);
}

/** Appends the version the component is at now (read in the transaction that changed it); "first": version 1's changes. */
export async function recordVersion(tx: Queryable, actor: Actor, componentId: string, diff: Record<string, { from: unknown; to: unknown }> | "first") {
  const c = await getComponent(tx, actor.orgId, componentId);
  const changes = diff === "first" ? firstVersionChanges(c) : diff;
  await tx.insert(componentVersions).values({
    componentId,
    version: c.specVersion,
    orgId: actor.orgId,
    description: c.description,
    spec: c.spec,
    connectionId: c.connectionId,
    connectionName: c.connection,
    stateBackendId: c.stateBackendId,
    stateBackendName: c.stateBackend,
    customModuleId: c.customModuleId,
    changes,
    createdBy: actor.userId,
    createdByLabel: actor.label,
  });
  return c;
}

/** The versions newest first, each with the jobs that ran it (oldest first); also for a gone component. */
export async function listComponentVersions(db: Queryable, orgId: string, id: string): Promise<z.infer<typeof componentVersionListSchema>> {
  const c = await getComponent(db, orgId, id);
  const [rows, jobs] = await Promise.all([
    db
      .select({ v: componentVersions, moduleName: iacModules.name, moduleVersion: iacModules.version })
      .from(componentVersions)
      .leftJoin(iacModules, eq(iacModules.id, componentVersions.customModuleId))
      .where(and(eq(componentVersions.componentId, c.id), eq(componentVersions.orgId, orgId)))
      .orderBy(desc(componentVersions.version)),
    db.select({ id: infraJobs.id, specVersion: infraJobs.specVersion }).from(infraJobs).where(eq(infraJobs.componentId, c.id)).orderBy(asc(infraJobs.createdAt), asc(infraJobs.id)),
  ]);
  return {
    versions: rows.map(({ v, moduleName, moduleVersion }) => ({
      version: v.version,
      description: v.description,
      spec: (v.spec ?? {}) as Record<string, unknown>,
      connection: v.connectionName,
      stateBackend: v.stateBackendName,
      customModuleId: v.customModuleId,
      module: v.customModuleId ? (moduleName ? `${moduleName}@${moduleVersion}` : v.customModuleId) : null,
      changes: v.changes,
      createdByLabel: v.createdByLabel,
      createdAt: v.createdAt,
      jobIds: jobs.filter((j) => j.specVersion === v.version).map((j) => j.id),
    })),
  };
}
