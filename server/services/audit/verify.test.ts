// Verifying the audit chain on both drivers: a clean chain passes and gives its head; each way an
// attacker with the database's superuser can tamper (edit a row, delete one, delete the last,
// rewrite a row and its hash) is caught at the first broken link, naming the event.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asc, eq, sql, type SQL } from "drizzle-orm";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { seedTestOrg, type TestOrg } from "../../../test/fixtures";
import { auditEvents } from "@/db/schema";
import { AUDIT_GENESIS_HASH } from "@/lib/audit";
import { recordAudit } from "../../audit";
import { verifyChain } from "./verify";

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t.close());

/** An organization whose chain holds its creation plus `n` more events. */
async function orgWithEvents(n: number): Promise<{ org: TestOrg; rows: (typeof auditEvents.$inferSelect)[] }> {
  const org = await seedTestOrg(t.db);
  for (let i = 1; i <= n; i++) await recordAudit(t.db, org.actor(), { action: "connection.create", targetName: `aws-${i}`, summary: `event ${i}` });
  const rows = await t.db.select().from(auditEvents).where(eq(auditEvents.orgId, org.orgId)).orderBy(asc(auditEvents.seq));
  return { org, rows };
}

/** The attacker's path: the superuser skipping the triggers for one transaction. */
const tamper = (...stmts: SQL[]) =>
  t.db.transaction(async (tx) => {
    await tx.execute(sql`set local session_replication_role = replica`);
    for (const s of stmts) await tx.execute(s);
  });

describe("audit verify", () => {
  it("passes a clean chain across batches and gives its head", async () => {
    const { org, rows } = await orgWithEvents(4);
    for (const batch of [2, 1000]) {
      const v = await verifyChain(t.db, org.orgId, { batch });
      expect(v).toEqual({
        ok: true,
        checked: rows.length,
        head: { seq: rows.length, hash: rows.at(-1)!.hash },
        from: { seq: 0, hash: AUDIT_GENESIS_HASH, checkpoint: null },
        broken: null,
      });
    }
  });

  it("catches a row edited after it was recorded, naming it", async () => {
    const { org, rows } = await orgWithEvents(3);
    const edited = rows[2];
    await tamper(sql`update audit_events set summary = 'nothing happened' where id = ${edited.id}`);
    const v = await verifyChain(t.db, org.orgId, { batch: 2 });
    expect(v.ok).toBe(false);
    expect(v.checked).toBe(2);
    expect(v.broken).toMatchObject({ eventId: edited.id, seq: 3, problem: "content", expected: edited.hash });
    const at = edited.createdAt.toISOString().slice(0, 16).replace("T", " ");
    expect(v.broken!.message).toBe(`Event #3 (connection.create by ${org.users.admin.email}, ${at} UTC) was changed after it was recorded: its content no longer matches its hash.`);
  });

  it("reports a deleted middle row as missing", async () => {
    const { org, rows } = await orgWithEvents(4);
    await tamper(sql`delete from audit_events where id in (${rows[1].id}, ${rows[2].id})`);
    const v = await verifyChain(t.db, org.orgId, { batch: 2 });
    expect(v.broken).toMatchObject({ eventId: rows[3].id, seq: 4, problem: "missing", expected: "2", found: "4" });
    expect(v.broken!.message).toMatch(/^Events #2–#3 are missing: deleted from the record, since the chain goes from #1 straight to event #4 \(connection\.create by /);
  });

  it("reports a deleted last row against the chain's head", async () => {
    const { org, rows } = await orgWithEvents(2);
    await tamper(sql`delete from audit_events where id = ${rows.at(-1)!.id}`);
    const v = await verifyChain(t.db, org.orgId);
    expect(v.broken).toMatchObject({ eventId: rows.at(-2)!.id, seq: rows.length, problem: "head", expected: rows.at(-1)!.hash, found: rows.at(-2)!.hash });
    expect(v.broken!.message).toMatch(new RegExp(`^Event #${rows.length} is missing from the end of the record: the chain's head says it runs to #${rows.length}, and the last event kept is #${rows.length - 1} `));
    expect(v.head).toEqual({ seq: rows.length, hash: rows.at(-1)!.hash });
  });

  it("reports a row rewritten with a fresh hash as a broken link on the next row", async () => {
    const { org, rows } = await orgWithEvents(3);
    const [rewritten, next] = [rows[1], rows[2]];
    await tamper(
      sql`update audit_events set summary = 'nothing happened' where id = ${rewritten.id}`,
      sql`update audit_events e set hash = audit_digest(e.prev_hash, e.seq, e) where id = ${rewritten.id}`,
    );
    const v = await verifyChain(t.db, org.orgId);
    expect(v.broken).toMatchObject({ eventId: next.id, seq: 3, problem: "link", expected: expect.not.stringMatching(rewritten.hash!), found: rewritten.hash });
    expect(v.broken!.message).toMatch(/^Event #3 \(.*\) does not link to the event before it: .* Event #2 was rewritten/);
  });

  it("reports a rewritten last row against the chain's head", async () => {
    const { org, rows } = await orgWithEvents(1);
    const last = rows.at(-1)!;
    await tamper(sql`update audit_events set summary = 'x' where id = ${last.id}`, sql`update audit_events e set hash = audit_digest(e.prev_hash, e.seq, e) where id = ${last.id}`);
    const v = await verifyChain(t.db, org.orgId);
    expect(v.broken).toMatchObject({ seq: last.seq, problem: "head", expected: last.hash });
  });
});
