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

export async function updateComponent(db: Database, actor: Actor, raw: UpdateComponentInput) {
  const input = updateComponentInput.parse(raw);
  const current = await getComponent(db, actor.orgId, input.id);
  const kind = await getCatalogKind(db, actor.orgId, current.kind);
  const patch: Partial<typeof infraComponents.$inferInsert> = {};
  if (input.description !== undefined) patch.description = input.description;
  if (input.spec !== undefined) patch.spec = validateSpec(kind, input.spec);
  if (input.connection !== undefined) {
    patch.connectionId = input.connection ? (await connectionForKind(db, actor.orgId, kind, input.connection).catch(withField("connection"))).id : null;
  }
  if (input.stateBackend !== undefined) {
    patch.stateBackendId = input.stateBackend ? (await stateBackendByName(db, actor.orgId, input.stateBackend).catch(withField("stateBackend"))).id : null;
  }
  const changes = diffFields(current as Record<string, unknown>, patch as Record<string, unknown>);
  if (!Object.keys(changes).length) return current;
  await db.transaction(async (tx) => {
    await tx.update(infraComponents).set({ ...patch, updatedAt: new Date() }).where(eq(infraComponents.id, current.id));
    await recordAudit(tx, actor, {
      action: "component.update",
      targetType: "infra_component",
      targetId: current.id,
      summary: `Changed ${Object.keys(changes).join(", ")} of ${current.kind} ${current.name} in ${current.environment}`,
      changes,
    });
  });
  return getComponent(db, actor.orgId, current.id);
}
