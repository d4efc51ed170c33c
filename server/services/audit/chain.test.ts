// The audit chain as the database keeps it, on both drivers: each committed event gets the next
// position of its organization's chain and links to the one before; rows cannot be changed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asc, eq, sql } from "drizzle-orm";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { seedTestOrg, type TestOrg } from "../../../test/fixtures";
import { auditChainHeads, auditEvents } from "@/db/schema";
import { AUDIT_GENESIS_HASH } from "@/lib/audit";
import { recordAudit } from "../../audit";
import { rowsOf } from "@/db/client";
import { draftComponent } from "../../../test/components";
import { createJob } from "../jobs/create-job";
import { listAudit } from "./list";

let t: TestDatabase;
let org: TestOrg;

beforeAll(async () => {
  t = await createTestDatabase();
  org = await seedTestOrg(t.db);
});
afterAll(() => t.close());

const chainOf = (orgId: string) => t.db.select().from(auditEvents).where(eq(auditEvents.orgId, orgId)).orderBy(asc(auditEvents.seq));

/** The message the database gave, whichever driver wrapped it. */
const refusal = (call: () => Promise<unknown>) =>
  call().then(
    () => "accepted",
    (e: unknown) => String((e as { cause?: { message?: string } }).cause?.message ?? (e as Error).message),
  );

describe("the audit chain", () => {
  it("links every committed event to the one before it, in commit order, per organization", async () => {
    const before = (await chainOf(org.orgId)).length;
    await recordAudit(t.db, org.actor(), { action: "connection.create", targetName: "aws-a", summary: "one" });
    await t.db.transaction(async (tx) => {
      await recordAudit(tx, org.actor(), { action: "connection.create", targetName: "aws-b", summary: "two" });
      await recordAudit(tx, org.actor(), { action: "connection.delete", targetName: "aws-b", summary: "three" });
    });
    const rows = await chainOf(org.orgId);
    expect(rows.length).toBe(before + 3);
    expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i + 1));
    expect(rows[0].prevHash).toBe(AUDIT_GENESIS_HASH);
    for (let i = 1; i < rows.length; i++) expect(rows[i].prevHash).toBe(rows[i - 1].hash);
    const [head] = await t.db.select().from(auditChainHeads).where(eq(auditChainHeads.chain, org.orgId));
    expect(head).toEqual({ chain: org.orgId, seq: rows.length, hash: rows.at(-1)!.hash });
    const [{ ok }] = rowsOf<{ ok: boolean }>(await t.db.execute(sql`select bool_and(hash = audit_digest(prev_hash, seq, e)) as ok from audit_events e where org_id = ${org.orgId}`));
    expect(ok).toBe(true);
  });

  it("refuses UPDATE, DELETE and TRUNCATE from the application", async () => {
    const [row] = await chainOf(org.orgId);
    expect(await refusal(() => t.db.update(auditEvents).set({ summary: "edited" }).where(eq(auditEvents.id, row.id)))).toMatch(/append-only: UPDATE refused/);
    expect(await refusal(() => t.db.delete(auditEvents).where(eq(auditEvents.id, row.id)))).toMatch(/append-only: DELETE refused/);
    expect(await refusal(() => t.db.execute(sql`truncate audit_events`))).toMatch(/append-only: TRUNCATE refused/);
    expect(await refusal(() => t.db.update(auditChainHeads).set({ seq: 1 }).where(eq(auditChainHeads.chain, org.orgId)))).toMatch(/append-only: UPDATE refused/);
    const [still] = await t.db.select().from(auditEvents).where(eq(auditEvents.id, row.id));
    expect(still).toEqual(row);
  });

  it("lists newest first and pages on by cursor", async () => {
    const first = await listAudit(t.db, org.actor(), "acme", { limit: 2 });
    expect(first.events.map((e) => e.seq)).toEqual([...first.events].map((e) => e.seq).sort((a, b) => b - a));
    const next = await listAudit(t.db, org.actor(), "acme", { limit: 2, cursor: first.nextCursor! });
    expect(next.events[0].seq).toBe(first.events[1].seq - 1);
    const named = await listAudit(t.db, org.actor(), "acme", { target: "aws-b", action: "connection" });
    expect(named.events.map((e) => e.summary)).toEqual(["three", "two"]);
    expect((await listAudit(t.db, org.actor(), "acme", { q: "thr" })).events.map((e) => e.summary)).toEqual(["three"]);
    // An action is searched by its words: "delete" finds connection.delete.
    expect((await listAudit(t.db, org.actor(), "acme", { q: "delete" })).events.map((e) => e.summary)).toEqual(["three"]);
  });

  it("gives a component's slice: its own events and its jobs', no one else's", async () => {
    const c = await draftComponent(t.db, org.actor(), { environment: "dev", kind: "StaticSite", name: "slice-site", spec: { site_name: "slice" }, connection: "local-sandbox" });
    const other = await draftComponent(t.db, org.actor(), { environment: "dev", kind: "StaticSite", name: "other-site", spec: { site_name: "other" }, connection: "local-sandbox" });
    const job = await createJob(t.db, org.actor(), { componentId: c.id, operation: "preview" });
    await createJob(t.db, org.actor(), { componentId: other.id, operation: "preview" });
    const slice = await listAudit(t.db, org.actor(), "acme", { component: c.id });
    expect(slice.events.map((e) => [e.action, e.targetId])).toEqual([
      ["job.create", job.id],
      ["component.create", c.id],
    ]);
  });
});
