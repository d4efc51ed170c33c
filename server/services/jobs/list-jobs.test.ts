import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
    const first = await listJobs(t.db, org.orgId, { limit: 2 });
    const second = await listJobs(t.db, org.orgId, { limit: 2, cursor: first.nextCursor! });
    expect([...first.jobs, ...second.jobs].map((j) => j.id)).toEqual([c.id, b.id, a.id]);
    expect(second.nextCursor).toBeNull();
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
