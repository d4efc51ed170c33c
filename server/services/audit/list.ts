// Reading the audit record: the organization's events, newest first, with the filters the Audit page,
// the CLI, the REST API and the exports share. Keyset-paginated on (org_id, seq), so the thousandth
// page costs what the first does.
import { and, desc, eq, gte, inArray, lt, max, or, sql, type Column, type SQL } from "drizzle-orm";
import type { z } from "zod";
import type { Queryable } from "@/db/client";
import { auditEvents, infraJobs } from "@/db/schema";
import { auditActionTitle, auditTargetHref, encodeAuditCursor, type AuditResult } from "@/lib/audit";
import { auditFilterInput, listAuditInput, type AuditEventView, type AuditFilter } from "@/lib/api/audit-schemas";
import type { Actor } from "../../actor";
import { badRequest } from "../../errors";

/** The SQL conditions of a filter, for the list, the exports and anything else that reads a slice. */
export function auditConditions(orgId: string, f: AuditFilter): SQL[] {
  const search = auditSearch(f.q);
  return [...auditFilterConditions(orgId, f, true), ...(search ? [search(auditEvents.search)] : [])];
}

/**
 * A component's events and its jobs', two ways: checked on each event read in order (its jobs' ids hashed once),
 * cheap where they are many; or looked up by target in the (target_id) index, every one of them and then
 * sorted, cheap where they are few.
 */
function componentEvents(component: string, how: "in order" | "lookup"): SQL {
  const jobs = sql`select ${infraJobs.id} from ${infraJobs} where ${infraJobs.componentId} = ${component}`;
  if (how === "lookup") return sql`${auditEvents.targetId} = any(array(${jobs}) || ${component}::text)`;
  // Parenthesized by hand: inArray() of a raw sql subquery renders without them, which is a syntax error.
  return or(eq(auditEvents.targetId, component), sql`${auditEvents.targetId} in (${jobs})`)!;
}

/** The conditions of a filter but its search words; its component's checked in order, unless left to the caller. */
function auditFilterConditions(orgId: string, f: AuditFilter, withComponent: boolean): SQL[] {
  const conds: SQL[] = [eq(auditEvents.orgId, orgId), sql`${auditEvents.seq} is not null`];
  if (f.actor) conds.push(eq(auditEvents.actorLabel, f.actor));
  if (f.action) {
    // In the C collation, as the (org_id, action, seq) index is kept (migration 0021): a family ("job") is the range of
    // names that start "job." — every action recorded, also one the console no longer names — read from the index.
    const action = sql`${auditEvents.action} collate "C"`;
    conds.push(f.action.includes(".") ? sql`${action} = ${f.action}` : sql`${action} >= ${`${f.action}.`} and ${action} < ${`${f.action}/`}`);
  }
  if (f.targetKind) conds.push(eq(auditEvents.targetType, f.targetKind));
  if (f.target) conds.push(or(eq(auditEvents.targetName, f.target), eq(auditEvents.targetId, f.target))!);
  if (f.component && withComponent) conds.push(componentEvents(f.component, "in order"));
  if (f.environment) conds.push(eq(auditEvents.environment, f.environment));
  if (f.result) conds.push(eq(auditEvents.result, f.result));
  // The same instant (to the millisecond, as a Date holds it) for the filter and its positions.
  const from = f.from ? new Date(f.from) : null;
  const to = f.to ? new Date(f.to) : null;
  if (from) conds.push(gte(auditEvents.createdAt, from), sql`${auditEvents.seq} >= ${firstSeqFrom(orgId, from.toISOString())}`);
  if (to) conds.push(lt(auditEvents.createdAt, to), sql`${auditEvents.seq} <= ${lastSeqBefore(orgId, to.toISOString())}`);
  return conds;
}

// A time filter's positions (migration 0022). Seq follows commits and created_at the start of the writer's
// transaction, so the planner cannot see where a time begins along seq; chain_high_at (the chain's newest
// created_at up to each event) never decreases along seq, and the chain head's lag bounds how far behind it any
// event's created_at was. Sub-selects of the same statement: the bounds and the page are read in one snapshot.

/** Every event created at or after `from` has its chain_high_at at or after it too: seq at or past the first such. */
const firstSeqFrom = (orgId: string, from: string) => sql`coalesce((
  select b.seq from audit_events b where b.org_id = ${orgId} and b.chain_high_at >= ${from}::timestamptz
  order by b.chain_high_at, b.seq limit 1), ${Number.MAX_SAFE_INTEGER})`;

/** Every event created before `to` was linked when the chain's newest was before `to` + lag: seq at most one past the last such. */
const lastSeqBefore = (orgId: string, to: string) => sql`coalesce((
  select b.seq from audit_events b where b.org_id = ${orgId}
    and b.chain_high_at < ${to}::timestamptz + coalesce((select h.lag from audit_chain_heads h where h.chain = ${orgId}), interval '0')
  order by b.chain_high_at desc, b.seq desc limit 1), 0) + 1`;

/**
 * A search: each of its words starts a word of the event. The words, how text splits into them and the
 * prefixes `search` holds so that the index looks a word up as one entry are migration 0012's, one rule
 * for the events and the search. The drivers send unnamed statements, so the planner folds the query
 * into a constant and estimates it from the column's statistics.
 */
function auditSearch(q: string | undefined) {
  if (!q || !/[\p{L}\p{N}]/u.test(q)) return null;
  return (search: Column) => sql`${search} @@ audit_search_query(${q})`;
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

/**
 * How many of the newest events (from the cursor) a search or a component's slice looks at first: a common
 * one fills a page within them, and a rarer one has few enough matches in all that reading them from the
 * index and sorting them costs no more.
 */
const WINDOW = 5_000;

/**
 * A page of the organization's events, newest first. `org` is the slug the console's links use; tests
 * pass a small `windowSize` to page across it.
 */
export async function listAudit(db: Queryable, actor: Actor, org: string, raw: z.input<typeof listAuditInput> = {}, windowSize = WINDOW) {
  const f = listAuditInput.parse(raw);
  const filter = auditFilterInput.parse(f);
  const search = auditSearch(filter.q);
  // The part of the filter that may keep few events of many, which the planner cannot weigh: a search, or else a
  // component's slice (hundreds of events a day for a busy one, a handful in a year for another). Beside a search
  // the component is checked in order.
  const narrow = search
    ? { inOrder: search(auditEvents.search), lookup: search(auditEvents.search) }
    : filter.component
      ? { inOrder: componentEvents(filter.component, "in order"), lookup: componentEvents(filter.component, "lookup") }
      : null;
  const conds = auditFilterConditions(actor.orgId, filter, !!search);
  const before = f.cursor ? decodeAuditCursor(f.cursor) : null;
  if (before !== null) conds.push(lt(auditEvents.seq, before));
  let rows: AuditRow[];
  if (!narrow) {
    rows = await db.select().from(auditEvents).where(and(...conds)).orderBy(desc(auditEvents.seq)).limit(f.limit + 1);
  } else {
    // The newest events in order (a window of positions, whatever the other filters keep), the narrow part
    // checked on each: a full page there is the answer. The sub-select's limit keeps the planner from
    // reading the index for a common word, and it carries only positions, so that a planner that sorts
    // the window (PGlite's, with no statistics) sorts little; the window's top is a number, not a
    // sub-select, so that the planner sees how narrow it is.
    const top = before ?? Number((await db.select({ seq: max(auditEvents.seq) }).from(auditEvents).where(eq(auditEvents.orgId, actor.orgId)))[0]?.seq ?? 0) + 1;
    const need = f.limit + 1;
    /** The narrow part's hits among the newest `size` events (whatever the other filters keep) below `hi`, in order. */
    const window = async (hi: number, size: number, want: number) => {
      const recent = db
        .select({ seq: auditEvents.seq, hit: sql<boolean>`${narrow.inOrder}`.as("hit") })
        .from(auditEvents)
        .where(and(...conds, lt(auditEvents.seq, hi), gte(auditEvents.seq, hi - size)))
        .orderBy(desc(auditEvents.seq))
        .limit(size)
        .as("recent");
      return (await db.select({ seq: recent.seq }).from(recent).where(sql`${recent.hit}`).orderBy(desc(recent.seq)).limit(want)).map((h) => h.seq!);
    };
    const found = await window(top, windowSize, need);
    if (found.length < need) {
      // Too few there. The window's hit rate tells how common the search (or the component) is, better than the
      // planner can: reading on in order costs about the events still to read for a page, the index about every
      // match it holds (it cannot give them newest first). One with some hits reads on, in one more window,
      // when that is the cheaper; a rare one asks the index.
      const rate = found.length / windowSize;
      const onInOrder = rate > 0 ? Math.ceil(((need - found.length) / rate) * 1.5) : Infinity;
      if (onInOrder < rate * top) found.push(...(await window(top - windowSize, onInOrder, need - found.length)));
    }
    if (found.length < need) {
      // The index's matches below what was read, sorted. "nulls last" is an order the (org_id, seq) index
      // does not give, so the planner cannot choose to walk it (every event, when the words are rare).
      const below = found.length ? found[found.length - 1] : top - windowSize;
      const lowest = Math.min(below, top - windowSize);
      const more = await db
        .select({ seq: auditEvents.seq })
        .from(auditEvents)
        .where(and(...conds, narrow.lookup, lt(auditEvents.seq, lowest)))
        .orderBy(sql`${auditEvents.seq} desc nulls last`)
        .limit(need - found.length);
      found.push(...more.map((m) => m.seq!));
    }
    rows = found.length ? await db.select().from(auditEvents).where(and(eq(auditEvents.orgId, actor.orgId), inArray(auditEvents.seq, found))).orderBy(desc(auditEvents.seq)) : [];
  }
  const page = rows.slice(0, f.limit);
  const last = page.at(-1);
  return { events: page.map((r) => auditEventView(org, r)), nextCursor: rows.length > f.limit && last?.seq ? encodeAuditCursor(last.seq) : null };
}
