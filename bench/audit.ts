// Audit benchmark: the audit record at a million events on a throwaway Postgres. It seeds the events
// through the real chain trigger (set-based inserts; the trigger links each row at commit), then
// prints the Audit page's server time (first page, a deep page by cursor, filtered pages), verify
// throughput and export throughput with the process's peak RSS. It prints figures; it asserts nothing
// about time, but exits non-zero if the seeded chain does not verify or the export misses events.
//
//   npx tsx bench/audit.ts                 (1 000 000 events; the seeding is most of the run)
//   npx tsx bench/audit.ts --events 200000 --runs 20 --export 100000
//   npx tsx bench/audit.ts --quick         (50 000 events, fewer runs: a minute or two)
//   npx tsx bench/audit.ts --url postgres://…/db   (reuse a database a previous run seeded; seeds it if empty)
import { parseArgs } from "node:util";
import { eq, sql } from "drizzle-orm";
import { rowsOf } from "../db/client";
import { encodeAuditCursor, listAudit } from "../server/services/audit/list";
import { auditExportChunks } from "../server/services/audit/export";
import { verifyChain } from "../server/services/audit/verify";
import { newId } from "../lib/ids";
import { organizations } from "../db/schema";
import type { Actor } from "../server/actor";
import { machine, printPages, timePage, type PageFigure } from "./page-timing";
import { benchDatabase, cleanup, ms, note } from "./throwaway";

const { values } = parseArgs({
  options: { events: { type: "string" }, runs: { type: "string" }, export: { type: "string" }, batch: { type: "string" }, quick: { type: "boolean" }, url: { type: "string" }, help: { type: "boolean" } },
});
if (values.help) {
  process.stdout.write("Usage: npx tsx bench/audit.ts [--events 1000000] [--runs 15] [--export 100000] [--batch 250] [--quick] [--url postgres://…/db]\n");
  process.exit(0);
}
const EVENTS = Number(values.events ?? (values.quick ? 50_000 : 1_000_000));
const RUNS = Number(values.runs ?? (values.quick ? 7 : 15));
const EXPORT = Math.min(EVENTS, Number(values.export ?? (values.quick ? 20_000 : 100_000)));
// Small transactions: the chain trigger updates one head row per event, and a transaction that updates it n times costs O(n²).
const BATCH = Number(values.batch ?? 250);
const PAGE = 50;
const TARGET_MS = 50;



async function main() {
  const handle = await benchDatabase("planton_bench_audit", values.url);
  const db = handle.db;
  const seeded = (await db.select({ id: organizations.id }).from(organizations).where(eq(organizations.slug, "bench")))[0];
  // The organization as a year ago, with no events yet: its record is the year seeded below, in the order it was
  // written (an organization made now would open its chain with today's events, a year ahead of everything after
  // them — as if one writer had begun a year before it committed, which widens every "before <date>" filter's
  // bounds by that year: server/services/audit/list.ts).
  const orgId = seeded?.id ?? newId("organization");
  if (!seeded) await db.insert(organizations).values({ id: orgId, slug: "bench", name: "Bench", createdAt: new Date(Date.now() - 366 * 86_400_000) });
  // The viewer's view (listAudit reads the organization and the role from the actor).
  const actor: Actor = { userId: null, label: "viewer@bench", orgId, role: "viewer" };
  const org = { orgId };

  // ── Seeding: set-based inserts, each committed on its own; the deferred chain trigger links every row at commit.
  const start = Date.now() - 365 * 86_400_000;
  const seedT0 = process.hrtime.bigint();
  if (seeded) note("reusing the seeded database");
  else note(`seeding ${EVENTS.toLocaleString("en")} events in statements of ${BATCH.toLocaleString("en")}…`);
  for (let from = 1; !seeded && from <= EVENTS; from += BATCH) {
    const to = Math.min(EVENTS, from + BATCH - 1);
    await db.execute(sql`
      insert into audit_events (id, org_id, actor_id, actor_label, action, target_type, target_id, target_name, environment, result, summary, changes, client_address, created_at)
      select 'aud_bench' || lpad(i::text, 9, '0'), ${org.orgId}, null,
             'user' || (i % 40) || '@acme.example',
             (array['job.create','job.approve','job.cancel','component.update','session.sign_in','secret.write','connection.update','job.rerun'])[1 + i % 8],
             (array['infra_job','infra_job','infra_job','infra_component','session','secret','connection','infra_job'])[1 + i % 8],
             'tgt_' || (i % 5000), 'component-' || (i % 5000),
             (array['dev','staging','prod'])[1 + i % 3],
             case when i % 50 = 0 then 'failure' else 'success' end,
             'event ' || i || ' on component-' || (i % 5000),
             case when i % 8 = 3 then jsonb_build_object('replicas', jsonb_build_object('from', i % 5, 'to', i % 5 + 1)) end,
             '10.0.' || (i % 250) || '.' || (i % 200),
             ${new Date(start).toISOString()}::timestamptz + (i * interval '1 second' * ${(365 * 86_400) / EVENTS})
      from generate_series(${from}::int, ${to}::int) i
      order by i`);
    process.stdout.write(`\r· seeded ${to.toLocaleString("en")}`);
  }
  const seedMs = seeded ? 0 : ms(seedT0);
  process.stdout.write("\n");
  // What autovacuum does after a table grows by a million rows: statistics and the visibility map.
  note("vacuum analyze…");
  await db.execute(sql`vacuum (analyze) audit_events`);
  const [{ head }] = rowsOf<{ head: string }>(await db.execute(sql`select seq as head from audit_chain_heads where chain = ${org.orgId}`));
  const headSeq = Number(head);

  // Two components whose jobs are seeded events' targets, for their Activity tabs: a busy one (100 of the 5 000
  // targets: 1 event in 50) and a quiet one (one target: 1 event in 5 000, about one a day).
  const [{ n: components }] = rowsOf<{ n: string }>(await db.execute(sql`select count(*) as n from infra_components where org_id = ${org.orgId}`));
  if (components === "0") {
    const envId = newId("environment");
    await db.execute(sql`insert into environments (id, org_id, name) values (${envId}, ${org.orgId}, 'prod')`);
    for (const [name, from, to] of [["busy", 0, 99], ["quiet", 4999, 4999]] as const) {
      await db.execute(sql`insert into infra_components (id, org_id, environment_id, kind, name) values (${`cmp_bench_${name}`}, ${org.orgId}, ${envId}, 'StaticSite', ${name})`);
      await db.execute(sql`
        insert into infra_jobs (id, org_id, component_id, operation, status, result, version_message, created_by_label, preflight, spec_version, event_seq, route_rule)
        select 'tgt_' || i, ${org.orgId}, ${`cmp_bench_${name}`}, 'update', 'completed', 'succeeded', '', 'bench', '{}'::jsonb, 1, 0, 'hosted'
        from generate_series(${from}::int, ${to}::int) i`);
    }
  }

  // ── Pages: the service the Audit page, the CLI and GET /audit call, timed in this process.
  note(`timing pages (${RUNS} runs each after one warm-up)…`);
  const deep = encodeAuditCursor(Math.max(1, headSeq - PAGE * 1000));
  const [{ newest }] = rowsOf<{ newest: string }>(await db.execute(sql`select max(created_at) as newest from audit_events where org_id = ${org.orgId}`));
  const lastWeek = new Date(new Date(newest).getTime() - 7 * 86_400_000).toISOString();
  const longAgo = new Date(new Date(newest).getTime() - 300 * 86_400_000).toISOString();
  const searchPage2 = (await listAudit(db, actor, "bench", { limit: PAGE, q: "component-4217" })).nextCursor ?? undefined;
  const pages: [string, () => Promise<unknown>][] = [
    ["first page", () => listAudit(db, actor, "bench", { limit: PAGE })],
    ["page 1000 (cursor)", () => listAudit(db, actor, "bench", { limit: PAGE, cursor: deep })],
    ["filtered: approvals in prod last week", () => listAudit(db, actor, "bench", { limit: PAGE, action: "job.approve", environment: "prod", from: lastWeek })],
    ["filtered: one actor, page 100 (cursor)", () => listAudit(db, actor, "bench", { limit: PAGE, actor: "user7@acme.example", cursor: encodeAuditCursor(Math.max(1, headSeq - 40 * PAGE * 100)) })],
    ["filtered: action family job, failures", () => listAudit(db, actor, "bench", { limit: PAGE, action: "job", result: "failure" })],
    ["filtered: one target", () => listAudit(db, actor, "bench", { limit: PAGE, target: "component-42" })],
    ["filtered: a busy component (1 event in 50)", () => listAudit(db, actor, "bench", { limit: PAGE, component: "cmp_bench_busy" })],
    ["filtered: a quiet component (1 in 5 000)", () => listAudit(db, actor, "bench", { limit: PAGE, component: "cmp_bench_quiet" })],
    // Filters that match nothing here: each must find that out without reading the record.
    ["filtered: an environment with no events (qa)", () => listAudit(db, actor, "bench", { limit: PAGE, environment: "qa" })],
    ["filtered: a target kind with no events", () => listAudit(db, actor, "bench", { limit: PAGE, targetKind: "environment" })],
    ["filtered: an action family with no events", () => listAudit(db, actor, "bench", { limit: PAGE, action: "flow_control" })],
    ["filtered: a component with no events", () => listAudit(db, actor, "bench", { limit: PAGE, component: "cmp_none" })],
    ["filtered: before a day 300 days ago", () => listAudit(db, actor, "bench", { limit: PAGE, to: longAgo })],
    // Searches: a target's name (rare words), a common word, a word nothing has, a page on by cursor, with a filter.
    ["search: \"component-4217\"", () => listAudit(db, actor, "bench", { limit: PAGE, q: "component-4217" })],
    ["search: \"approve\" (1 event in 8)", () => listAudit(db, actor, "bench", { limit: PAGE, q: "approve" })],
    ["search: \"421\" (1 event in 300)", () => listAudit(db, actor, "bench", { limit: PAGE, q: "421" })],
    ["search: \"user3 43\" (1 event in 90 at 1 M)", () => listAudit(db, actor, "bench", { limit: PAGE, q: "user3 43" })],
    ["search: \"user1 cancel\" (two common words, no event)", () => listAudit(db, actor, "bench", { limit: PAGE, q: "user1 cancel" })],
    ["search: \"zzzz\" (no event)", () => listAudit(db, actor, "bench", { limit: PAGE, q: "zzzz" })],
    ["search: \"component-4217\", page 2 (cursor)", () => listAudit(db, actor, "bench", { limit: PAGE, q: "component-4217", cursor: searchPage2 })],
    ["search: \"component-4217\", failures", () => listAudit(db, actor, "bench", { limit: PAGE, q: "component-4217", result: "failure" })],
  ];
  const pageFigures: [string, PageFigure][] = [];
  for (const [name, fn] of pages) pageFigures.push([name, await timePage(db, RUNS, fn)]);

  // ── Verify: the whole chain, in SQL batches.
  note("verifying the chain…");
  const vT0 = process.hrtime.bigint();
  const v = await verifyChain(db, org.orgId);
  const verifyMs = ms(vT0);
  if (!v.ok) throw new Error(`the seeded chain does not verify: ${v.broken?.message}`);

  // ── Export: the newest EXPORT events as CSV and JSON, chunks consumed as the route streams them.
  const exportFrom = rowsOf<{ at: string }>(await db.execute(sql`select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at from audit_events where org_id = ${org.orgId} and seq = ${headSeq - EXPORT + 1}`))[0].at;
  const exportFigures: { format: string; events: number; ms: number; bytes: number; rssBefore: number; rssPeak: number }[] = [];
  for (const format of ["csv", "json"] as const) {
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 20);
    const t0 = process.hrtime.bigint();
    let bytes = 0;
    for await (const chunk of auditExportChunks(db, actor, "bench", { from: exportFrom }, format)) {
      bytes += Buffer.byteLength(chunk);
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    }
    const took = ms(t0);
    clearInterval(sampler);
    // The newest EXPORT seeded events, and the organization's own creation (recorded now, before the seed).
    const [{ n }] = rowsOf<{ n: string }>(await db.execute(sql`select count(*) as n from audit_events where org_id = ${org.orgId} and created_at >= ${exportFrom}::timestamptz`));
    exportFigures.push({ format, events: Number(n), ms: took, bytes, rssBefore, rssPeak });
  }

  // ── Figures.
  const mb = (b: number) => `${(b / 1024 / 1024).toFixed(0)} MiB`;
  console.log(`\nAudit record at ${headSeq.toLocaleString("en")} events (one organization's chain), Postgres ${rowsOf<{ server_version: string }>(await db.execute(sql`show server_version`))[0].server_version}, ${machine()}`);
  if (seedMs) console.log(`\nSeeding through the chain trigger: ${(seedMs / 1000).toFixed(1)} s, ${Math.round((EVENTS / seedMs) * 1000).toLocaleString("en")} events/s`);
  printPages(`Audit page, ${PAGE} events, server time (median / p95 of ${RUNS} calls; target ≤ ${TARGET_MS} ms):`, pageFigures, TARGET_MS);
  console.log(`\nVerify: ${v.checked.toLocaleString("en")} events in ${(verifyMs / 1000).toFixed(1)} s, ${Math.round((v.checked / verifyMs) * 1000).toLocaleString("en")} events/s`);
  console.log(`\nExport of the newest ${exportFigures[0].events.toLocaleString("en")} events (service chunks, as the route streams them):`);
  for (const e of exportFigures) {
    console.log(`  ${e.format.padEnd(5)} ${(e.ms / 1000).toFixed(1)} s, ${Math.round((e.events / e.ms) * 1000).toLocaleString("en")} events/s, ${mb(e.bytes)} written; RSS ${mb(e.rssBefore)} before, peak ${mb(e.rssPeak)} (+${mb(e.rssPeak - e.rssBefore)})`);
  }
}

main()
  .then(cleanup, async (err) => {
    console.error(err);
    await cleanup();
    process.exitCode = 1;
  });
