// Lists benchmark: the Infra Jobs list at a million jobs on a throwaway Postgres. It seeds organizations
// through the product's own services, then components and jobs with set-based `insert … select from
// generate_series` (infra_jobs has no triggers; every constraint and foreign key holds), and times the
// services behind the Jobs page, `GET /jobs` and `planton infra job list`: the first page, a deep page by
// cursor, each filter the page offers and the page's other calls (starters, awaiting-approval count).
// It prints figures against the target (≤ 50 ms server time); it asserts nothing about time.
//
//   npx tsx bench/lists.ts                  (1 000 000 jobs)
//   npx tsx bench/lists.ts --quick          (100 000 jobs, fewer runs)
//   npx tsx bench/lists.ts --url postgres://…/db   (reuse a database a previous run seeded; seeds it if empty)
import { parseArgs } from "node:util";
import { eq, sql } from "drizzle-orm";
import { rowsOf, type Database } from "../db/client";
import { environments, infraComponents, organizations } from "../db/schema";
import { countAwaitingApproval, createdAtText, encodeJobCursor, listJobStarters, listJobs } from "../server/services/jobs/queries";
import { seedTestOrg } from "../test/fixtures";
import { machine, printPages, timePage, type PageFigure } from "./page-timing";
import { benchDatabase, cleanup, ms, note } from "./throwaway";

const { values } = parseArgs({
  options: { jobs: { type: "string" }, runs: { type: "string" }, quick: { type: "boolean" }, url: { type: "string" }, help: { type: "boolean" } },
});
if (values.help) {
  process.stdout.write("Usage: npx tsx bench/lists.ts [--jobs 1000000] [--runs 15] [--quick] [--url postgres://…/db]\n");
  process.exit(0);
}
const JOBS = Number(values.jobs ?? (values.quick ? 100_000 : 1_000_000));
const RUNS = Number(values.runs ?? (values.quick ? 7 : 15));
const PAGE = 50;
const TARGET_MS = 50;
// Four organizations: the benchmark's holds 85 % of the jobs, three others share the rest (the org filter must hold too).
const ORGS = [
  { slug: "bench", share: 0.85, components: 2000 },
  { slug: "bench-b", share: 0.05, components: 300 },
  { slug: "bench-c", share: 0.05, components: 300 },
  { slug: "bench-d", share: 0.05, components: 300 },
];
const STATEMENT = 100_000;


/**
 * One organization's components and jobs, set-based. Spread: components over dev / staging / prod (5:3:2), a
 * few of them deleted, the quietest one in an environment of its own (qa) and one environment with none yet
 * (sandbox); jobs skewed to busy components and busy people (1 in 20 by "system"), operations preview 45 %,
 * update 30 %, refresh 12 % (17 % in the older four fifths), destroy_preview 5 %, destroy 3 %, import 5 % of
 * the newest fifth only (the organization began importing lately: older pages have none); completed jobs
 * succeeded 84 %, failed 10 % (1 in 50 of those a preflight failure that kept no IaC input), cancelled 4 %,
 * skipped 2 %; one in 5 000 still awaiting an approval anywhere in time, and the newest 300 queued or running.
 * Created over two years, oldest first; ids sort with time as the service's ULIDs do.
 */
async function seedOrg(db: Database, org: { orgId: string; connectionId: string; slug: string }, components: number, jobs: number) {
  const envs = await db.select({ id: environments.id, name: environments.name }).from(environments).where(eq(environments.orgId, org.orgId));
  const env = (name: string) => envs.find((e) => e.name === name)!.id;
  const tag = org.slug.replace(/[^a-z0-9]/g, "");
  const qa = `env_${tag}_qa`;
  await db.execute(sql`insert into environments (id, org_id, name) values (${qa}, ${org.orgId}, 'qa'), (${`env_${tag}_sandbox`}, ${org.orgId}, 'sandbox')`);
  await db.execute(sql`
    insert into infra_components (id, org_id, environment_id, kind, name, description, spec, connection_id, status, spec_version, deleted_at, created_at)
    select 'cmp_' || ${tag} || lpad(c::text, 6, '0'), ${org.orgId},
           case when c = ${components - 1} then ${qa} when c * 31 % 10 < 5 then ${env("dev")} when c * 31 % 10 < 8 then ${env("staging")} else ${env("prod")} end,
           'StaticSite', 'site-' || c, '', jsonb_build_object('site_name', 'site-' || c), ${org.connectionId},
           case when c % 97 = 5 then 'deleted' else 'active' end, 1 + c % 7,
           case when c % 97 = 5 then now() - interval '30 days' end, now() - interval '800 days'
    from generate_series(0, ${components - 1}::int) c`);
  const step = (2 * 365 * 86_400) / jobs;
  for (let from = 0; from < jobs; from += STATEMENT) {
    const to = Math.min(jobs, from + STATEMENT) - 1;
    await db.execute(sql`
      insert into infra_jobs (id, org_id, component_id, operation, status, result, reason, version_message, created_by, created_by_label,
                              preflight, iac_input, spec_version, event_seq, route_rule, created_at, started_at, completed_at, updated_at)
      select 'job_' || ${tag} || lpad(i::text, 10, '0'), ${org.orgId},
             'cmp_' || ${tag} || lpad(floor(${components} * power(((i::bigint * 7919) % 10007) / 10007.0, 2))::int::text, 6, '0'),
             op, st, res,
             case when res = 'failed' and pf then 'Nothing ran: environment prod may not use the aws connection aws-prod. Authorize it, then run the job again.'
                  when res = 'failed' then 'The apply step failed: 1 resource errored (see the step''s log).'
                  when res = 'cancelled' then 'Cancelled by ' || who end,
             case when i % 3 = 0 then 'release ' || (i % 400) else '' end,
             case when who = 'system' then null else 'usr_bench' || u end, who,
             jsonb_build_object('passed', not pf, 'checks', jsonb_build_array(
               jsonb_build_object('essential', 'module', 'ok', true, 'resolvedTo', 'StaticSite 1.4.2 (platform registry)'),
               jsonb_build_object('essential', 'credentials', 'ok', not pf, 'resolvedTo', 'local-sandbox (organization)'),
               jsonb_build_object('essential', 'backend', 'ok', true, 'resolvedTo', 'planton-managed'),
               jsonb_build_object('essential', 'flow_control', 'ok', true, 'resolvedTo', 'platform policy'))),
             case when pf then null else jsonb_build_object('operation', op, 'component', jsonb_build_object('name', 'site', 'kind', 'StaticSite'), 'variables', jsonb_build_object('site_name', 'site', 'replicas', i % 5)) end,
             1 + i % 7, case when st = 'queued' or pf then 0 else 40 + i % 400 end, 'hosted', at,
             case when st <> 'queued' and not pf then at + interval '3 seconds' end,
             case when st = 'completed' then at + interval '1 minute' * (1 + i % 9) end, at
      from (
        select i, ${new Date(Date.now() - 2 * 365 * 86_400_000).toISOString()}::timestamptz + i * interval '1 second' * ${step} as at,
               (array['preview','preview','preview','preview','preview','preview','preview','preview','preview',
                      'update','update','update','update','update','update',
                      'refresh','refresh','destroy_preview','destroy',
                      case when i >= ${Math.floor(jobs * 0.8)} then 'import' else 'refresh' end])[1 + i * 31 % 20] as op,
               case when i >= ${jobs - 300} then (case when i % 3 = 0 then 'running' else 'queued' end)
                    when i * 13 % 5000 = 7 then 'awaiting_approval' else 'completed' end as st,
               floor(60 * power(((i::bigint * 104729) % 10009) / 10009.0, 1.5))::int as u,
               i * 17 % 100 as q
        from generate_series(${from}::int, ${to}::int) i
      ) g
      cross join lateral (select
        case when st <> 'completed' then 'tbd' when q < 84 then 'succeeded' when q < 94 then 'failed' when q < 98 then 'cancelled' else 'skipped' end as res,
        case when i % 20 = 0 then 'system' else 'user' || u || '@acme.example' end as who) r
      cross join lateral (select st = 'completed' and res = 'failed' and i % 50 = 1 as pf) p`);
    process.stdout.write(`\r· ${org.slug}: ${(to + 1).toLocaleString("en")} jobs`);
  }
  process.stdout.write("\n");
}

async function main() {
  const handle = await benchDatabase("planton_bench_lists", values.url);
  const db = handle.db;

  const [bench] = await db.select({ id: organizations.id }).from(organizations).where(eq(organizations.slug, "bench"));
  let seedMs = 0;
  if (!bench) {
    note(`seeding ${JOBS.toLocaleString("en")} jobs over ${ORGS.length} organizations in statements of ${STATEMENT.toLocaleString("en")}…`);
    const t0 = process.hrtime.bigint();
    for (const o of ORGS) {
      const org = await seedTestOrg(db, { slug: o.slug });
      await seedOrg(db, org, o.components, Math.round(JOBS * o.share));
    }
    seedMs = ms(t0);
  } else note("reusing the seeded database");
  // What autovacuum does to a table that grew by a million rows: statistics, and the visibility map that
  // lets a page's ids come from the index alone. Cheap when a reused database has had it already.
  note("vacuum analyze…");
  await db.execute(sql`vacuum (analyze) infra_jobs, infra_components, environments`);
  const orgId = (await db.select({ id: organizations.id }).from(organizations).where(eq(organizations.slug, "bench")))[0].id;
  const [{ n: total }] = rowsOf<{ n: string }>(await db.execute(sql`select count(*) as n from infra_jobs`));
  const [{ n: inOrg }] = rowsOf<{ n: string }>(await db.execute(sql`select count(*) as n from infra_jobs where org_id = ${orgId}`));

  // A busy and a quiet component, a busy and a quiet person, the position of page 1 000.
  const comps = rowsOf<{ id: string; n: string }>(await db.execute(sql`select component_id as id, count(*) as n from infra_jobs where org_id = ${orgId} group by 1 order by 2 desc`));
  const busy = comps[0];
  const quiet = comps[comps.length - 1];
  const people = rowsOf<{ who: string; n: string }>(await db.execute(sql`select created_by_label as who, count(*) as n from infra_jobs where org_id = ${orgId} group by 1 order by 2 desc`));
  const deepAt = rowsOf<{ at: string; id: string }>(
    await db.execute(sql`select ${createdAtText} as at, id from infra_jobs where org_id = ${orgId} order by created_at desc, id desc offset ${PAGE * 1000 - 1} limit 1`),
  )[0];
  const deep = encodeJobCursor(deepAt.at, deepAt.id);
  const [quietComp] = await db.select({ name: infraComponents.name }).from(infraComponents).where(eq(infraComponents.id, quiet.id));
  // Past the oldest import the list finds none, however far it reads; and the qa environment's one component.
  const oldestImport = rowsOf<{ at: string; id: string }>(
    await db.execute(sql`select ${createdAtText} as at, id from infra_jobs where org_id = ${orgId} and operation = 'import' order by created_at, id limit 1`),
  )[0];
  const [{ n: inQa }] = rowsOf<{ n: string }>(
    await db.execute(sql`select count(*) as n from infra_jobs j join infra_components c on c.id = j.component_id join environments e on e.id = c.environment_id where j.org_id = ${orgId} and e.name = 'qa'`),
  );

  note(`timing (${RUNS} runs each after one warm-up)…`);
  const list = (input: Parameters<typeof listJobs>[2]) => () => listJobs(db, orgId, { limit: PAGE, ...input }, "viewer");
  const calls: [string, () => Promise<unknown>][] = [
    ["first page", list({})],
    ["page 1000 (cursor)", list({ cursor: deep })],
    ["status: queued", list({ status: "queued" })],
    ["status: awaiting approval", list({ status: "awaiting_approval" })],
    ["status: completed", list({ status: "completed" })],
    ["result: failed", list({ result: "failed" })],
    ["result: skipped", list({ result: "skipped" })],
    ["operation: import", list({ operation: "import" })],
    ["operation: import, past the oldest (none older)", list({ operation: "import", cursor: encodeJobCursor(oldestImport.at, oldestImport.id) })],
    ["operation: update", list({ operation: "update" })],
    ["environment: prod", list({ environment: "prod" })],
    [`environment: qa (1 component, ${inQa} jobs)`, list({ environment: "qa" })],
    ["environment: sandbox (no components yet)", list({ environment: "sandbox" })],
    [`component: busiest (${Number(busy.n).toLocaleString("en")} jobs)`, list({ componentId: busy.id })],
    [`component: quietest (${quiet.n} jobs, ${quietComp?.name})`, list({ componentId: quiet.id })],
    [`started by: busiest (${Number(people[0].n).toLocaleString("en")})`, list({ createdBy: people[0].who })],
    [`started by: quietest (${Number(people.at(-1)!.n).toLocaleString("en")})`, list({ createdBy: people.at(-1)!.who })],
    ["prod + failed + import", list({ environment: "prod", result: "failed", operation: "import" })],
    ["prod + quietest starter, page 2", async () => {
      const first = await listJobs(db, orgId, { limit: PAGE, environment: "prod", createdBy: people.at(-1)!.who }, "viewer");
      if (first.nextCursor) await listJobs(db, orgId, { limit: PAGE, environment: "prod", createdBy: people.at(-1)!.who, cursor: first.nextCursor }, "viewer");
    }],
    ["page's starters filter (listJobStarters)", () => listJobStarters(db, orgId)],
    ["page's approval badge (countAwaitingApproval)", () => countAwaitingApproval(db, orgId)],
  ];
  const figures: [string, PageFigure][] = [];
  for (const [name, fn] of calls) {
    figures.push([name, await timePage(db, RUNS, fn)]);
    process.stdout.write(`\r· ${figures.length}/${calls.length}`);
  }
  process.stdout.write("\n");

  console.log(
    `\nInfra Jobs list at ${Number(total).toLocaleString("en")} jobs (${Number(inOrg).toLocaleString("en")} in the organization listed), Postgres ${rowsOf<{ server_version: string }>(await db.execute(sql`show server_version`))[0].server_version}, ${machine()}`,
  );
  if (seedMs) console.log(`\nSeeding (set-based): ${(seedMs / 1000).toFixed(1)} s, ${Math.round((Number(total) / seedMs) * 1000).toLocaleString("en")} jobs/s`);
  printPages(`Jobs page, ${PAGE} jobs a page, server time (median / p95 of ${RUNS} calls; target ≤ ${TARGET_MS} ms):`, figures, TARGET_MS);
}

main().then(cleanup, async (err) => {
  console.error(err);
  await cleanup();
  process.exitCode = 1;
});
