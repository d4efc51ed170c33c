import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { environments, infraJobs } from "../../../db/schema";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { draftComponent } from "../../../test/components";
import { cancelJob } from "./cancel-job";
import { createJob } from "./create-job";
import { countAwaitingApproval, listJobStarters, listJobs } from "./queries";
import { preflightComponent } from "./preflight-component";
import { orgWithComponent } from "../../../test/job-helpers";

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t.close());

describe("the organization's jobs list", () => {
  it("filters by environment and by who started the job, and pages newest first", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const staging = await draftComponent(t.db, org.actor(), { environment: "staging", kind: "StaticSite", name: "stage-site", spec: { site_name: "stage-site" }, connection: "local-sandbox" });
    const a = await createJob(t.db, org.actor("engineer"), { componentId: component.id });
    const b = await createJob(t.db, org.actor("admin"), { componentId: staging.id });
    const c = await createJob(t.db, org.actor("engineer"), { componentId: staging.id, operation: "refresh" });

    expect((await listJobs(t.db, org.orgId, { environment: "staging" })).jobs.map((j) => j.id)).toEqual([c.id, b.id]);
    expect((await listJobs(t.db, org.orgId, { createdBy: org.users.engineer.email })).jobs.map((j) => j.id)).toEqual([c.id, a.id]);
    expect((await listJobs(t.db, org.orgId, { environment: "staging", createdBy: org.users.engineer.email, operation: "refresh" })).jobs.map((j) => j.id)).toEqual([c.id]);
    // An environment with no components yet, and one that does not exist: nothing, and no next page.
    expect(await listJobs(t.db, org.orgId, { environment: "prod" })).toEqual({ jobs: [], nextCursor: null });
    expect(await listJobs(t.db, org.orgId, { environment: "qa" })).toEqual({ jobs: [], nextCursor: null });
    await expect(listJobs(t.db, org.orgId, { environment: "prod", cursor: "not-a-cursor" })).rejects.toThrow(/the cursor is not one this list gave out/);
    const first = await listJobs(t.db, org.orgId, { limit: 2 });
    const second = await listJobs(t.db, org.orgId, { limit: 2, cursor: first.nextCursor! });
    expect([...first.jobs, ...second.jobs].map((j) => j.id)).toEqual([c.id, b.id, a.id]);
    expect(second.nextCursor).toBeNull();
    expect(await listJobStarters(t.db, org.orgId)).toEqual([org.users.admin.email, org.users.engineer.email].sort());
  });

  it("filters by an environment of more components than it names to the planner as it does by a small one", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const job = await createJob(t.db, org.actor("engineer"), { componentId: component.id });
    const small = await listJobs(t.db, org.orgId, { environment: "dev" });
    const [dev] = await t.db.select().from(environments).where(and(eq(environments.orgId, org.orgId), eq(environments.name, "dev")));
    await t.db.execute(sql`
      insert into infra_components (id, org_id, environment_id, kind, name)
      select 'cmp_many_' || i, ${org.orgId}, ${dev.id}, 'StaticSite', 'many-' || i from generate_series(1, 1000) i`);
    const large = await listJobs(t.db, org.orgId, { environment: "dev" });
    expect(small.jobs.map((j) => j.id)).toEqual([job.id]);
    expect(large).toEqual(small);
  });

  it("pages exactly through jobs created within one millisecond, and refuses a cursor it did not give out", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const made = [];
    for (let i = 0; i < 4; i++) made.push(await createJob(t.db, org.actor("engineer"), { componentId: component.id, operation: "refresh" }));
    // Postgres keeps microseconds: four jobs 100 µs apart, in one millisecond a JS Date cannot tell apart.
    for (const [i, j] of made.entries()) await t.db.update(infraJobs).set({ createdAt: sql`'2026-01-01T00:00:00.0001Z'::timestamptz + ${i} * interval '100 microseconds'` }).where(eq(infraJobs.id, j.id));
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await listJobs(t.db, org.orgId, { componentId: component.id, operation: "refresh", limit: 1, cursor });
      seen.push(...page.jobs.map((j) => j.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(made.map((j) => j.id).reverse());
    await expect(listJobs(t.db, org.orgId, { cursor: Buffer.from("yesterday|job_x").toString("base64url") })).rejects.toThrow(/the cursor is not one this list gave out/);
  });

  it("lists who started jobs once each, however many jobs each started", async () => {
    const { org, component } = await orgWithComponent(t.db);
    for (const role of ["engineer", "engineer", "admin", "engineer"] as const) await createJob(t.db, org.actor(role), { componentId: component.id, operation: "refresh" });
    expect(await listJobStarters(t.db, org.orgId)).toEqual([org.users.admin.email, org.users.engineer.email].sort());
  });

  it("counts the jobs waiting for an approval, and stops counting one once it is cancelled", async () => {
    const { org, component } = await orgWithComponent(t.db, { policy: { manualStart: true } });
    expect(await countAwaitingApproval(t.db, org.orgId)).toBe(0);
    const held = await createJob(t.db, org.actor(), { componentId: component.id });
    await createJob(t.db, org.actor(), { componentId: component.id });
    expect(held.status).toBe("awaiting_approval");
    expect(await countAwaitingApproval(t.db, org.orgId)).toBe(2);
    await cancelJob(t.db, org.actor(), { jobId: held.id });
    expect(await countAwaitingApproval(t.db, org.orgId)).toBe(1);
  });
});

describe("preflight for a component", () => {
  it("reports the four essentials and the spec's secrets the component's job would resolve, without creating a job", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const before = (await listJobs(t.db, org.orgId, {})).jobs.length;
    const report = await preflightComponent(t.db, org.actor("viewer"), { componentId: component.id });
    expect(report.passed).toBe(true);
    expect(report.checks.map((c) => c.essential)).toEqual(["module", "credentials", "backend", "runner", "flow_control", "secrets"]);
    expect(report.checks.find((c) => c.essential === "credentials")?.resolvedTo).toMatch(/^local-sandbox /);
    expect((await listJobs(t.db, org.orgId, {})).jobs.length).toBe(before);
  });
});
