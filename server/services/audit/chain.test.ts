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
import { auditExportChunks } from "./export";
import { listAudit } from "./list";
import { newId } from "@/lib/ids";

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
    expect(head).toEqual({ chain: org.orgId, seq: rows.length, hash: rows.at(-1)!.hash, highAt: rows.at(-1)!.chainHighAt, lag: head.lag });
    // The chain's newest created_at, carried along (migration 0022): never decreasing, and at least each event's own.
    for (const [i, r] of rows.entries()) {
      expect(r.chainHighAt!.getTime()).toBeGreaterThanOrEqual(Math.max(r.createdAt.getTime(), i ? rows[i - 1].chainHighAt!.getTime() : 0));
    }
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

  it("filters by a family of actions: each action recorded under it, also one the console no longer names, and none that only starts alike", async () => {
    const o = await seedTestOrg(t.db, { slug: "families" });
    const mine = ["connection.create", "connection.retired_action", "connectionx.create", "flowXcontrol.create", "flow_control.create"];
    // targetType given: AUDIT_ACTIONS has no entry for the made-up names, as it has none for an action it stopped recording.
    for (const action of mine) await recordAudit(t.db, o.actor(), { action: action as never, targetType: "connection", targetName: action, summary: action });
    const listed = async (action: string) => (await listAudit(t.db, o.actor(), "families", { action })).events.map((e) => e.summary).filter((s) => mine.includes(s));
    expect(await listed("connection")).toEqual(["connection.retired_action", "connection.create"]);
    expect(await listed("flow_control")).toEqual(["flow_control.create"]);
    expect(await listed("connection.create")).toEqual(["connection.create"]);
    expect(await listAudit(t.db, o.actor(), "families", { environment: "nowhere" })).toEqual({ events: [], nextCursor: null });
    expect(await listAudit(t.db, o.actor(), "families", { component: "cmp_none" })).toEqual({ events: [], nextCursor: null });
  });

  it("filters by time exactly when a writer that began earlier committed later (its position past events created after it)", async () => {
    const o = await seedTestOrg(t.db, { slug: "times" });
    const base = Date.now() + 86_400_000;
    const at = (s: number) => new Date(base + s * 1000);
    // Committed in this order: A created at +10 s, B at +5 s (its writer began before A's, committed after), C at +20 s.
    for (const [name, s] of [["A", 10], ["B", 5], ["C", 20]] as const) {
      await t.db.insert(auditEvents).values({ id: newId("auditEvent"), orgId: o.orgId, actorLabel: "system", action: "component.update", targetType: "infra_component", targetName: name, summary: name, createdAt: at(s) });
    }
    const [head] = await t.db.select().from(auditChainHeads).where(eq(auditChainHeads.chain, o.orgId));
    expect(head.lag).toBe("00:00:05");
    const listed = async (from: number | null, to: number | null) =>
      (await listAudit(t.db, o.actor(), "times", { ...(from !== null ? { from: at(from).toISOString() } : {}), ...(to !== null ? { to: at(to).toISOString() } : {}) })).events
        .map((e) => e.summary)
        .filter((s) => ["A", "B", "C"].includes(s));
    expect(await listed(null, 7)).toEqual(["B"]);
    expect(await listed(null, 10)).toEqual(["B"]);
    expect(await listed(null, 10.001)).toEqual(["B", "A"]);
    expect(await listed(7, null)).toEqual(["C", "A"]);
    expect(await listed(5, null)).toEqual(["C", "B", "A"]);
    expect(await listed(6, 15)).toEqual(["A"]);
    expect(await listed(21, null)).toEqual([]);
    expect(await listed(null, 4)).toEqual([]);
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

  it("pages a component's slice exactly whichever way it is answered: in order among the newest, or looked up by target", async () => {
    const o = await seedTestOrg(t.db, { slug: "slices" });
    const c = await draftComponent(t.db, o.actor(), { environment: "dev", kind: "StaticSite", name: "busy-site", spec: { site_name: "busy" }, connection: "local-sandbox" });
    const jobs: { id: string }[] = [];
    // The slice's events: thick at first, then a long stretch of other events, then a few.
    for (let i = 0; i < 6; i++) jobs.push(await createJob(t.db, o.actor(), { componentId: c.id, operation: "preview" }));
    for (let i = 0; i < 12; i++) await recordAudit(t.db, o.actor(), { action: "connection.update", targetName: `other-${i}`, summary: `other ${i}` });
    for (let i = 0; i < 2; i++) jobs.push(await createJob(t.db, o.actor(), { componentId: c.id, operation: "refresh" }));
    const expected = (await chainOf(o.orgId)).filter((e) => e.targetId === c.id || jobs.some((j) => j.id === e.targetId)).map((e) => e.seq).reverse();
    expect(expected.length).toBe(9); // component.create and eight job.create
    for (const [limit, windowSize] of [[2, 3], [4, 5], [50, 4], [3, 1000]]) {
      const seen: number[] = [];
      let cursor: string | undefined;
      do {
        const page = await listAudit(t.db, o.actor(), "slices", { component: c.id, limit, cursor }, windowSize);
        seen.push(...page.events.map((e) => e.seq));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      expect(seen, `limit ${limit}, window ${windowSize}`).toEqual(expected);
    }
  });

  it("searches the words events were recorded with, and pages a search exactly whichever way it is answered", async () => {
    const o = await seedTestOrg(t.db, { slug: "search" });
    const n = 40;
    for (let i = 0; i < n; i++) {
      const label = i % 3 === 0 ? "ops@acme.example" : "dev@globex.example";
      await recordAudit(t.db, { ...o.actor(), label }, {
        action: i % 4 === 0 ? "job.approve" : "component.update",
        targetName: i % 5 === 0 ? "web-01" : `db-${i}`,
        // A word past the index's 16 characters: "01hxabcdefghijklmn07" and so on.
        summary: `Step ${i} marker${i % 2 ? "odd" : "even"} run_01hxabcdefghijklmn${String(i).padStart(2, "0")}`,
      });
    }
    const steps = (keep: (i: number) => boolean) => [...Array(n).keys()].filter(keep).reverse();
    const stepsOf = (events: { summary: string }[]) => events.map((e) => Number(/^Step (\d+)/.exec(e.summary)?.[1] ?? -1));
    /** Every page of a search, from the newest, and the steps they hold in order. */
    const walk = async (q: string, limit: number, window?: number) => {
      const out: number[] = [];
      let cursor: string | undefined;
      do {
        const page = await listAudit(t.db, o.actor("viewer"), o.slug, { q, limit, cursor }, window);
        out.push(...stepsOf(page.events));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      return out;
    };
    const cases: [string, (i: number) => boolean][] = [
      ["web-01", (i) => i % 5 === 0], // a target's name with a hyphen: its own words, not "-01"
      ["acme", (i) => i % 3 === 0], // a part of the actor's email
      ["appro", (i) => i % 4 === 0], // the start of an action's word
      ["APPROVE acme", (i) => i % 12 === 0], // every word, in any case
      ["db-1", (i) => [1, 11, 12, 13, 14, 16, 17, 18, 19].includes(i)], // "db" and a word starting with "1"
      ["01hxabcdefghijklmn07", (i) => i === 7], // a long word, whole
      ["01hxabcdefghijklm", () => true], // a long word's start past 16 characters
      ["01hxabcdefghijklmx", () => false],
      ["markereven", (i) => i % 2 === 0],
    ];
    for (const [q, keep] of cases) {
      // One page, pages of 3 with the whole history in the window that is read in order, and pages of 3
      // with a window of 8 events: the common searches' pages come from the window, then from the index.
      expect({ q, steps: stepsOf((await listAudit(t.db, o.actor("viewer"), o.slug, { q, limit: 200 })).events) }).toEqual({ q, steps: steps(keep) });
      expect({ q, steps: await walk(q, 3) }).toEqual({ q, steps: steps(keep) });
      expect({ q, steps: await walk(q, 3, 8) }).toEqual({ q, steps: steps(keep) });
    }
    // The exports take the same search.
    let json = "";
    for await (const chunk of auditExportChunks(t.db, o.actor("viewer"), o.slug, { q: "approve acme" }, "json")) json += chunk;
    expect(stepsOf(JSON.parse(json)).reverse()).toEqual(steps((i) => i % 12 === 0));
    // Punctuation alone searches for nothing: the whole history.
    expect((await listAudit(t.db, o.actor("viewer"), o.slug, { q: "--", limit: 200 })).events.length).toBeGreaterThan(n);
  });

  it("reads on in order when the newest events hold some of a search's hits, and asks the index for the rest", async () => {
    const o = await seedTestOrg(t.db, { slug: "readon" });
    // One hit long ago, then 30 events without, then 8 where every other one is a hit.
    const hit = (i: number) => i === 0 || (i >= 31 && i % 2 === 1);
    for (let i = 0; i < 39; i++) {
      await recordAudit(t.db, o.actor(), { action: "component.update", targetName: `db-${i}`, summary: `Step ${i}${hit(i) ? " clustered" : ""}` });
    }
    const expected = [...Array(39).keys()].filter(hit).reverse();
    // A window of 8 holds 4 of the 5 hits: the page reads 6 events on in order (none there), then the index finds the first.
    const page = await listAudit(t.db, o.actor("viewer"), o.slug, { q: "clustered", limit: 5 }, 8);
    expect(page.events.map((e) => Number(/^Step (\d+)/.exec(e.summary)?.[1]))).toEqual(expected);
    expect(page.nextCursor).toBeNull();
    const two = await listAudit(t.db, o.actor("viewer"), o.slug, { q: "clustered", limit: 4 }, 8);
    const rest = await listAudit(t.db, o.actor("viewer"), o.slug, { q: "clustered", limit: 4, cursor: two.nextCursor! }, 8);
    expect([...two.events, ...rest.events].map((e) => Number(/^Step (\d+)/.exec(e.summary)?.[1]))).toEqual(expected);
  });
});
