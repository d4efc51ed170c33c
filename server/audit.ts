import { auditEvents } from "@/db/schema";
import type { Queryable } from "@/db/client";
import { AUDIT_ACTIONS, type AuditAction, type AuditResult, type AuditTargetKind } from "@/lib/audit";
import { newId } from "@/lib/ids";
import type { Actor } from "./actor";

export interface AuditEntry {
  action: AuditAction;
  /** Defaults to the kind the action names in lib/audit.ts; given only where one action serves two kinds. */
  targetType?: AuditTargetKind;
  targetId?: string | null;
  /** The target's name as it is now (a component's, a connection's, a runner's…): what filters and search match. */
  targetName?: string | null;
  /** The environment the target lives in, where it has one. */
  environment?: string | null;
  /** "failure" for a refused attempt (a sign-in, a preflight); default "success". */
  result?: AuditResult;
  summary: string;
  changes?: unknown;
}

/**
 * Records one audit event. Call it with the transaction that makes the change, so both commit or
 * neither; at commit the database links it into the organization's hash chain (migration 0008).
 */
export async function recordAudit(tx: Queryable, actor: Actor, entry: AuditEntry): Promise<void> {
  await tx.insert(auditEvents).values({
    id: newId("auditEvent"),
    orgId: actor.orgId || null,
    actorId: actor.userId,
    actorLabel: actor.label,
    action: entry.action,
    targetType: entry.targetType ?? AUDIT_ACTIONS[entry.action].target,
    targetId: entry.targetId ?? null,
    targetName: entry.targetName ?? null,
    environment: entry.environment ?? null,
    result: entry.result ?? "success",
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
