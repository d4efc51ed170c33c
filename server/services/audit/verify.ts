// Checking an organization's audit chain: every event, in seq order, is recomputed with the database's
// own `audit_digest` (migration 0008) and compared with the hash it stores, the link to the event
// before it and its position; the last one is compared with audit_chain_heads. The walk runs in SQL,
// a batch at a time, so a million events cost a million rows read and little memory.
import { desc, eq, sql } from "drizzle-orm";
import { rowsOf, type Database, type Queryable } from "@/db/client";
import { auditChainHeads, auditCheckpoints } from "@/db/schema";
import { AUDIT_GENESIS_HASH } from "@/lib/audit";
import type { AuditVerification } from "@/lib/api/audit-schemas";
import type { Actor } from "../../actor";

/** Rows per query: big enough that round trips do not dominate, small enough that memory stays flat. */
const BATCH = 5_000;

type Broken = NonNullable<AuditVerification["broken"]>;

interface LinkRow {
  id: string;
  seq: string | number;
  action: string;
  actor_label: string;
  at: string;
  hash: string | null;
  prev_hash: string | null;
  recomputed: string;
  expected_prev: string;
  expected_seq: string | number;
}

/** "#41 (job.approve by ann@acme.example, 2026-11-30 14:02 UTC)": an event as a reader names it. */
const eventWords = (r: Pick<LinkRow, "seq" | "action" | "actor_label" | "at">) => `#${r.seq} (${r.action} by ${r.actor_label}, ${r.at} UTC)`;
const short = (h: string | null) => (h ? `${h.slice(0, 12)}…` : "none");
const range = (a: number, b: number) => (a === b ? `Event #${a} is` : `Events #${a}–#${b} are`);

/** The first broken link of a batch's row, or null when the row is sound. Order matters: a gap explains a bad link. */
function problemOf(r: LinkRow): Broken | null {
  const seq = Number(r.seq);
  const expectedSeq = Number(r.expected_seq) + 1;
  if (seq !== expectedSeq) {
    return {
      eventId: r.id,
      seq,
      problem: "missing",
      message: `${range(expectedSeq, seq - 1)} missing: deleted from the record, since the chain goes from #${expectedSeq - 1} straight to event ${eventWords(r)}.`,
      expected: String(expectedSeq),
      found: String(seq),
    };
  }
  if (r.hash !== r.recomputed) {
    return {
      eventId: r.id,
      seq,
      problem: "content",
      message: `Event ${eventWords(r)} was changed after it was recorded: its content no longer matches its hash.`,
      expected: r.hash,
      found: r.recomputed,
    };
  }
  if (r.prev_hash !== r.expected_prev) {
    return {
      eventId: r.id,
      seq,
      problem: "link",
      message: `Event ${eventWords(r)} does not link to the event before it: it names ${short(r.prev_hash)} as the previous hash, and #${seq - 1} has ${short(r.expected_prev)}. Event #${seq - 1} was rewritten (its content and hash) after it was recorded, or this event's link was.`,
      expected: r.expected_prev,
      found: r.prev_hash,
    };
  }
  return null;
}

/** Where the walk starts: the latest archive checkpoint of the chain, or the genesis. */
export async function chainStart(db: Queryable, chain: string): Promise<AuditVerification["from"]> {
  const [k] = await db.select().from(auditCheckpoints).where(eq(auditCheckpoints.chain, chain)).orderBy(desc(auditCheckpoints.throughSeq)).limit(1);
  return k ? { seq: Number(k.throughSeq), hash: k.throughHash, checkpoint: k.id } : { seq: 0, hash: AUDIT_GENESIS_HASH, checkpoint: null };
}

/** One batch of the chain after `after`, each row with its recomputed hash and what the row before it says. */
async function linkBatch(db: Queryable, orgId: string, after: { seq: number; hash: string }, batch: number): Promise<LinkRow[]> {
  return rowsOf<LinkRow>(
    await db.execute(sql`
      select id, seq, action, actor_label, at, hash, prev_hash, recomputed,
             coalesce(lag(hash) over w, ${after.hash}) as expected_prev,
             coalesce(lag(seq) over w, ${after.seq}::bigint) as expected_seq
      from (
        select e.id, e.seq, e.action, e.actor_label, e.hash, e.prev_hash,
               to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI') as at,
               audit_digest(e.prev_hash, e.seq, e) as recomputed
        from audit_events e
        where e.org_id = ${orgId} and e.seq > ${after.seq}
        order by e.seq
        limit ${batch}
      ) b
      window w as (order by seq)
      order by seq`),
  );
}

/** Walks the chain of organization `orgId` from its start; the first broken link ends the walk. */
export async function verifyChain(db: Database, orgId: string, opts: { batch?: number } = {}): Promise<AuditVerification> {
  const batch = opts.batch ?? BATCH;
  // One snapshot: events committed while the walk runs are neither half-seen nor compared with a newer head.
  return db.transaction(async (tx) => {
    await tx.execute(sql`set transaction isolation level repeatable read, read only`);
    const from = await chainStart(tx, orgId);
    const [headRow] = await tx.select().from(auditChainHeads).where(eq(auditChainHeads.chain, orgId));
    let last = { seq: from.seq, hash: from.hash };
    let lastRow: LinkRow | undefined;
    let checked = 0;
    for (;;) {
      const rows = await linkBatch(tx, orgId, last, batch);
      for (const r of rows) {
        const broken = problemOf(r);
        if (broken) return { ok: false, checked, head: headOf(headRow, last), from, broken };
        checked++;
        last = { seq: Number(r.seq), hash: r.hash! };
        lastRow = r;
      }
      if (rows.length < batch) break;
    }
    const broken = headProblem(headRow, last, lastRow);
    return { ok: !broken, checked, head: headOf(headRow, last), from, broken };
  });
}

const headOf = (row: { seq: number; hash: string } | undefined, last: { seq: number; hash: string }) => (row ? { seq: Number(row.seq), hash: row.hash } : last);

/** The table's last event against the head the chain trigger wrote: fewer events means some were deleted from the end. */
function headProblem(row: { seq: number; hash: string } | undefined, last: { seq: number; hash: string }, lastRow: LinkRow | undefined): Broken | null {
  if (!row) return null;
  const headSeq = Number(row.seq);
  const kept = lastRow ? `the last event kept is ${eventWords(lastRow)}` : "no event is kept after where the check started";
  if (headSeq > last.seq) {
    return {
      eventId: lastRow?.id ?? null,
      seq: last.seq + 1,
      problem: "head",
      message: `${range(last.seq + 1, headSeq)} missing from the end of the record: the chain's head says it runs to #${headSeq}, and ${kept}.`,
      expected: row.hash,
      found: last.hash,
    };
  }
  if (headSeq < last.seq || row.hash !== last.hash) {
    return {
      eventId: lastRow?.id ?? null,
      seq: last.seq,
      problem: "head",
      message: `The record does not end where the chain's head says (#${headSeq}, ${short(row.hash)}): ${kept}, with hash ${short(last.hash)}. Events were added or rewritten at the end outside Planton.`,
      expected: row.hash,
      found: last.hash,
    };
  }
  return null;
}

/** `planton audit verify`, the console's Verify button and GET /audit/verify: the caller's organization's chain. */
export function verifyAudit(db: Database, actor: Actor): Promise<AuditVerification> {
  return verifyChain(db, actor.orgId);
}
