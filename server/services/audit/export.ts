// The audit record's export: the events a filter selects, oldest first, as CSV or as one JSON array,
// read in keyset batches and produced a chunk at a time, so 100 000 events cost one batch of memory.
import { and, asc, eq, gt, lte } from "drizzle-orm";
import { ZodError } from "zod";
import type { Queryable } from "@/db/client";
import { auditChainHeads, auditEvents } from "@/db/schema";
import { auditFilterInput, type AuditFilter } from "@/lib/api/audit-schemas";
import { AUDIT_EXPORT_FORMATS, auditCsvHeader, auditCsvLine, type AuditExportFormat } from "@/lib/audit-export";
import type { Actor } from "../../actor";
import { badRequest } from "../../errors";
import { assertSafeInput } from "../../input-guard";
import { auditConditions, auditEventView } from "./list";

const BATCH = 1_000;
const PARAMS = ["org", "format", ...Object.keys(auditFilterInput.shape)];

/** The export's format and filter from a URL's query (`?format=csv&action=job.approve&from=…`); a bad one is refused in words. */
export function parseExportQuery(params: URLSearchParams): { org?: string; format: AuditExportFormat; filter: AuditFilter } {
  // What the tRPC procedures refuse before any schema (NUL bytes, lone surrogates) is refused here too, before SQL sees it.
  assertSafeInput(Object.fromEntries(params));
  const unknown = [...params.keys()].find((k) => !PARAMS.includes(k));
  if (unknown) throw badRequest(`Nothing was exported: ${unknown} is not a filter of the audit record. Use ${PARAMS.slice(2).join(", ")} (and format, org).`, unknown);
  const format = params.get("format") ?? "csv";
  if (!(AUDIT_EXPORT_FORMATS as readonly string[]).includes(format)) throw badRequest(`Nothing was exported: format ${format} is not one the export writes. Use format=csv or format=json.`, "format");
  const raw = Object.fromEntries([...params].filter(([k]) => k !== "org" && k !== "format"));
  try {
    return { org: params.get("org") ?? undefined, format: format as AuditExportFormat, filter: auditFilterInput.parse(raw) };
  } catch (err) {
    if (!(err instanceof ZodError)) throw err;
    const issue = err.issues[0];
    throw badRequest(`Nothing was exported: ${issue.path.join(".")}: ${issue.message}`, String(issue.path[0] ?? ""));
  }
}

/**
 * The chunks of the export, in order. It stops at the chain's head as it was when the export began,
 * so events recorded meanwhile do not stretch it; `org` is the slug the events' links use.
 */
export async function* auditExportChunks(db: Queryable, actor: Actor, org: string, filter: AuditFilter, format: AuditExportFormat, batch = BATCH): AsyncGenerator<string> {
  const [head] = await db.select({ seq: auditChainHeads.seq }).from(auditChainHeads).where(eq(auditChainHeads.chain, actor.orgId));
  const conds = [...auditConditions(actor.orgId, filter), lte(auditEvents.seq, Number(head?.seq ?? 0))];
  yield format === "csv" ? auditCsvHeader() : "[";
  let after = 0;
  let first = true;
  for (;;) {
    const rows = await db
      .select()
      .from(auditEvents)
      .where(and(...conds, gt(auditEvents.seq, after)))
      .orderBy(asc(auditEvents.seq))
      .limit(batch);
    if (!rows.length) break;
    let chunk = "";
    for (const r of rows) {
      const view = auditEventView(org, r);
      chunk += format === "csv" ? auditCsvLine(view) : `${first ? "\n" : ",\n"}${JSON.stringify(view)}`;
      first = false;
    }
    after = Number(rows.at(-1)!.seq);
    yield chunk;
    if (rows.length < batch) break;
  }
  if (format === "json") yield first ? "]\n" : "\n]\n";
}
