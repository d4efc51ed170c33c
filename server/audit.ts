import { auditEvents } from "@/db/schema";
import type { Queryable } from "@/db/client";
import { newId } from "@/lib/ids";
import type { Actor } from "./actor";

export interface AuditEntry {
  action: string;
  targetType: string;
  targetId?: string | null;
  summary: string;
  changes?: unknown;
}

/** Records one audit event. Call it with the transaction that makes the change, so both commit or neither. */
export async function recordAudit(tx: Queryable, actor: Actor, entry: AuditEntry): Promise<void> {
  await tx.insert(auditEvents).values({
    id: newId("auditEvent"),
    orgId: actor.orgId,
    actorId: actor.userId,
    actorLabel: actor.label,
    action: entry.action,
    targetType: entry.targetType,
    targetId: entry.targetId ?? null,
    summary: entry.summary,
    changes: entry.changes ?? null,
    clientAddress: actor.clientAddress ?? null,
  });
}

/** The fields that differ between two versions of a record, for the audit summary. */
export function diffFields<T extends Record<string, unknown>>(before: T, after: Partial<T>): Record<string, { from: unknown; to: unknown }> {
  const out: Record<string, { from: unknown; to: unknown }> = {};
  for (const [k, v] of Object.entries(after)) {
    if (v !== undefined && JSON.stringify(before[k]) !== JSON.stringify(v)) out[k] = { from: before[k], to: v };
  }
  return out;
}
