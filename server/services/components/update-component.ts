import { eq } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "@/db/client";
import { infraComponents } from "@/db/schema";
import { recordAudit, diffFields } from "../../audit";
import type { Actor } from "../../actor";
import { getCatalogKind } from "../catalog";
import { connectionForKind, stateBackendByName, validateSpec, withField } from "./create-component";
import { getComponent } from "./queries";

export const updateComponentInput = z.object({
  id: z.string(),
  description: z.string().max(500).optional(),
  spec: z.record(z.string(), z.unknown()).optional(),
  /** A connection name; null clears it. */
  connection: z.string().nullable().optional(),
  stateBackend: z.string().nullable().optional(),
});
export type UpdateComponentInput = z.input<typeof updateComponentInput>;

/** A spec as `spec.<key>` fields, with a key the new spec drops given as null (spec values reference secrets, never hold them). */
function specFields(before: unknown, spec: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys((before ?? {}) as object)) out[`spec.${k}`] = null;
  for (const [k, v] of Object.entries((spec ?? {}) as object)) out[`spec.${k}`] = v;
  return out;
}

export async function updateComponent(db: Database, actor: Actor, raw: UpdateComponentInput) {
  const input = updateComponentInput.parse(raw);
  const current = await getComponent(db, actor.orgId, input.id);
  const kind = await getCatalogKind(db, actor.orgId, current.kind);
  const patch: Partial<typeof infraComponents.$inferInsert> = {};
  // What the audit event compares: names rather than ids, and the spec key by key.
  const after: Record<string, unknown> = {};
  if (input.description !== undefined) patch.description = after.description = input.description;
  if (input.spec !== undefined) Object.assign(after, specFields(current.spec, (patch.spec = validateSpec(kind, input.spec))));
  if (input.connection !== undefined) {
    const conn = input.connection ? await connectionForKind(db, actor.orgId, kind, input.connection).catch(withField("connection")) : null;
    patch.connectionId = conn?.id ?? null;
    after.connection = conn?.name ?? null;
  }
  if (input.stateBackend !== undefined) {
    const backend = input.stateBackend ? await stateBackendByName(db, actor.orgId, input.stateBackend).catch(withField("stateBackend")) : null;
    patch.stateBackendId = backend?.id ?? null;
    after.stateBackend = backend?.name ?? null;
  }
  const before = { description: current.description, connection: current.connection, stateBackend: current.stateBackend, ...specFields({}, current.spec) };
  const changes = diffFields(before, after);
  if (!Object.keys(changes).length) return current;
  await db.transaction(async (tx) => {
    await tx.update(infraComponents).set({ ...patch, updatedAt: new Date() }).where(eq(infraComponents.id, current.id));
    await recordAudit(tx, actor, {
      action: "component.update",
      targetId: current.id,
      targetName: current.name,
      environment: current.environment,
      summary: `Changed ${Object.keys(changes).join(", ")} of ${current.kind} ${current.name} in ${current.environment}`,
      changes,
    });
  });
  return getComponent(db, actor.orgId, current.id);
}
