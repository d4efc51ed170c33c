// Reading the audit record: the organization's events, newest first, with the filters the Audit page,
// the CLI, the REST API and the exports share. Keyset-paginated on (org_id, seq), so the thousandth
// page costs what the first does.
import { and, desc, eq, gte, like, lt, or, sql, type SQL } from "drizzle-orm";
import type { z } from "zod";
import type { Queryable } from "@/db/client";
import { auditEvents, infraJobs } from "@/db/schema";
import { auditActionTitle, auditTargetHref, encodeAuditCursor, type AuditResult } from "@/lib/audit";
import { auditFilterInput, listAuditInput, type AuditEventView, type AuditFilter } from "@/lib/api/audit-schemas";
import type { Actor } from "../../actor";
import { badRequest } from "../../errors";

/** The SQL conditions of a filter, for the list, the exports and anything else that reads a slice. */
export function auditConditions(orgId: string, f: AuditFilter): SQL[] {
  const conds: SQL[] = [eq(auditEvents.orgId, orgId), sql`${auditEvents.seq} is not null`];
  if (f.actor) conds.push(eq(auditEvents.actorLabel, f.actor));
  if (f.action) conds.push(f.action.includes(".") ? eq(auditEvents.action, f.action) : like(auditEvents.action, `${f.action}.%`));
  if (f.targetKind) conds.push(eq(auditEvents.targetType, f.targetKind));
  if (f.target) conds.push(or(eq(auditEvents.targetName, f.target), eq(auditEvents.targetId, f.target))!);
  if (f.component) {
    // Parenthesized by hand: inArray() of a raw sql subquery renders without them, which is a syntax error.
    const jobs = sql`${auditEvents.targetId} in (select ${infraJobs.id} from ${infraJobs} where ${infraJobs.componentId} = ${f.component})`;
    conds.push(or(eq(auditEvents.targetId, f.component), jobs)!);
  }
  if (f.environment) conds.push(eq(auditEvents.environment, f.environment));
  if (f.result) conds.push(eq(auditEvents.result, f.result));
  if (f.from) conds.push(gte(auditEvents.createdAt, new Date(f.from)));
  if (f.to) conds.push(lt(auditEvents.createdAt, new Date(f.to)));
  const words = f.q?.toLowerCase().match(/[\p{L}\p{N}_]+/gu);
  if (words?.length) conds.push(sql`${auditEvents.search} @@ to_tsquery('simple', ${words.map((w) => `${w}:*`).join(" & ")})`);
  return conds;
}

type AuditRow = typeof auditEvents.$inferSelect;

/** One event as the API answers it. */
export function auditEventView(org: string, r: AuditRow): AuditEventView {
  return {
    id: r.id,
    seq: r.seq ?? 0,
    at: r.createdAt,
    actorId: r.actorId,
    actorLabel: r.actorLabel,
    action: r.action,
    actionTitle: auditActionTitle(r.action),
    targetKind: r.targetType,
    targetId: r.targetId,
    targetName: r.targetName,
    targetHref: auditTargetHref(org, r.targetType, r.targetId),
    environment: r.environment,
    result: r.result as AuditResult,
    summary: r.summary,
    changes: r.changes ?? null,
    clientAddress: r.clientAddress,
    prevHash: r.prevHash ?? "",
    hash: r.hash ?? "",
  };
}

export { encodeAuditCursor };
export function decodeAuditCursor(cursor: string): number {
  const m = /^seq:(\d{1,15})$/.exec(Buffer.from(cursor, "base64url").toString());
  if (!m) throw badRequest("Nothing was listed: the cursor is not one this list gave out. Pass the nextCursor of the previous page as is, or leave it out to start from the newest.", "cursor");
  return Number(m[1]);
}

/** A page of the organization's events, newest first. `org` is the slug the console's links use. */
export async function listAudit(db: Queryable, actor: Actor, org: string, raw: z.input<typeof listAuditInput> = {}) {
  const f = listAuditInput.parse(raw);
  const conds = auditConditions(actor.orgId, auditFilterInput.parse(f));
  if (f.cursor) conds.push(lt(auditEvents.seq, decodeAuditCursor(f.cursor)));
  const rows = await db
    .select()
    .from(auditEvents)
    .where(and(...conds))
    .orderBy(desc(auditEvents.seq))
    .limit(f.limit + 1);
  const page = rows.slice(0, f.limit);
  const last = page.at(-1);
  return { events: page.map((r) => auditEventView(org, r)), nextCursor: rows.length > f.limit && last?.seq ? encodeAuditCursor(last.seq) : null };
}
