import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, count, eq } from "drizzle-orm";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { seedTestOrg, type TestOrg } from "../../../test/fixtures";
import { claim, runStep, testRunner, type Claimed } from "../../../test/job-helpers";
import { auditEvents, componentVersions, connections, infraComponents, infraJobs, stateObjects } from "@/db/schema";
import { newId } from "@/lib/ids";
import type { StepName } from "@/lib/runner-protocol";
import { recordAudit } from "../../audit";
import { PlantonError } from "../../errors";
import { cancelJob } from "../jobs/cancel-job";
import { createJob } from "../jobs/create-job";
import { listJobs } from "../jobs/queries";
import { rerunJob } from "../jobs/rerun-job";
import { resumeJob } from "../jobs/resume-job";
import { failRunningJob, lockJob } from "../jobs/transitions";
import { lockState, putState, unlockState } from "../runners/state";
import { setFlowControlPolicy } from "../settings/flow-control";
import { getComponentState } from "../state/component-state";
import { createStateBackend, deleteStateBackend } from "../state-backends/backends";
import { changeComponent, createComponentAndDeploy, deleteComponent, forgetComponent, getComponentView, listComponentVersions, listComponentViews } from "./lifecycle";

let t: TestDatabase;
let org: TestOrg;

beforeAll(async () => {
  t = await createTestDatabase();
  org = await seedTestOrg(t.db);
  await t.db.insert(connections).values({ id: newId("connection"), orgId: org.orgId, name: "aws-prod", provider: "aws", config: { region: "us-east-1" } });
});
afterAll(() => t.close());

const counts = async (o: TestOrg = org) => ({
  components: (await t.db.select({ n: count() }).from(infraComponents).where(eq(infraComponents.orgId, o.orgId)))[0].n,
  versions: (await t.db.select({ n: count() }).from(componentVersions).where(eq(componentVersions.orgId, o.orgId)))[0].n,
  jobs: (await t.db.select({ n: count() }).from(infraJobs).where(eq(infraJobs.orgId, o.orgId)))[0].n,
  audit: (await t.db.select({ n: count() }).from(auditEvents).where(eq(auditEvents.orgId, o.orgId)))[0].n,
  statuses: (await t.db.select({ id: infraComponents.id, status: infraComponents.status, v: infraComponents.specVersion }).from(infraComponents).where(eq(infraComponents.orgId, o.orgId))).sort((a, b) => a.id.localeCompare(b.id)),
});

async function refused(call: () => Promise<unknown>, o: TestOrg = org) {
  const before = await counts(o);
  const err = await call().then(
    () => null,
    (e) => e,
  );
  expect(err, "the call was refused").toBeInstanceOf(PlantonError);
  expect(await counts(o), "nothing was written").toEqual(before);
  return err as PlantonError;
}

const site = (name: string, more: Record<string, unknown> = {}) => ({ environment: "dev", kind: "StaticSite", name, spec: { site_name: name }, connection: "local-sandbox", ...more });
const draft = (o: TestOrg, name: string, more: Record<string, unknown> = {}) => createComponentAndDeploy(t.db, o.actor(), { ...site(name, more), deploy: false });
const actionsOf = (o: TestOrg, targetId: string) =>
  t.db
    .select({ action: auditEvents.action, actor: auditEvents.actorLabel, result: auditEvents.result, changes: auditEvents.changes })
    .from(auditEvents)
    .where(and(eq(auditEvents.orgId, o.orgId), eq(auditEvents.targetId, targetId)))
    .orderBy(auditEvents.createdAt, auditEvents.id);

/** Claims the next job (it must be `jobId`) and runs its steps; the last one ends as `last`. */
async function drive(runner: Awaited<ReturnType<typeof testRunner>>, jobId: string, steps: StepName[], last: "succeeded" | "failed" = "succeeded", reason?: string): Promise<Claimed> {
  const c = (await claim(t.db, runner))!;
  expect(c?.claim.job.id, "the job claimed").toBe(jobId);
  for (const [i, s] of steps.entries()) await runStep(t.db, c, s, i === steps.length - 1 ? last : "succeeded", i === steps.length - 1 && reason ? { reason } : {});
  return c;
}
const UPDATE: StepName[] = ["init", "refresh", "preview", "apply"];
const DESTROY: StepName[] = ["init", "refresh", "preview", "destroy"];
const jobOf = async (id: string) => (await t.db.select().from(infraJobs).where(eq(infraJobs.id, id)))[0];

describe("Infra Components: what a create checks", () => {
  it("are created with the spec's defaults filled in, and the creation is audited", async () => {
    const before = await counts();
    const { component: c, job } = await createComponentAndDeploy(t.db, org.actor("engineer"), { ...site("docs"), deploy: false });
    expect(job).toBeNull();
    expect(c.spec).toEqual({ site_name: "docs", title: "Hello from Planton", page_count: 2 });
    expect(c).toMatchObject({ status: "draft", specVersion: 1, createdByLabel: org.users.engineer.email, lastJob: null });
    expect((await counts()).components).toBe(before.components + 1);
    const [event] = await t.db.select().from(auditEvents).where(eq(auditEvents.targetId, c.id));
    expect(event).toMatchObject({ action: "component.create", actorLabel: org.users.engineer.email, summary: "Created StaticSite docs in dev as a draft (nothing deployed)" });
  });

  it("refuse a duplicate name in the same environment, naming the field", async () => {
    await createComponentAndDeploy(t.db, org.actor(), { environment: "staging", kind: "StaticSite", name: "dup", spec: { site_name: "dup" }, deploy: false });
    const err = await refused(() => createComponentAndDeploy(t.db, org.actor(), { environment: "staging", kind: "StaticSite", name: "dup", spec: { site_name: "dup" } }));
    expect(err.message).toBe("A component named dup already exists in staging. Choose another name, or open the existing one.");
    expect(err.field).toBe("name");
    // The same name in another environment is fine.
    await createComponentAndDeploy(t.db, org.actor(), { environment: "prod", kind: "StaticSite", name: "dup", spec: { site_name: "dup" }, deploy: false });
  });

  it("refuse an unknown environment and list the known ones", async () => {
    const err = await refused(() => createComponentAndDeploy(t.db, org.actor(), { environment: "qa", kind: "StaticSite", name: "x1", spec: { site_name: "x" } }));
    expect(err.message).toBe("Environment qa was not found. Pick one of dev, staging, prod, or create it in Settings → Environments.");
    expect(err.field).toBe("environment");
  });

  it("refuse an unknown kind", async () => {
    const err = await refused(() => createComponentAndDeploy(t.db, org.actor(), { environment: "dev", kind: "Nope", name: "x2", spec: {} }));
    expect(err.message).toMatch(/^Catalog kind Nope was not found\. Use one of .*StaticSite/);
    expect(err.field).toBe("kind");
  });

  it("refuse a spec that does not match its kind, naming the field and what it accepts", async () => {
    const create = (spec: Record<string, unknown>) => createComponentAndDeploy(t.db, org.actor(), { environment: "dev", kind: "StaticSite", name: "x3", spec });
    let err = await refused(() => create({}));
    expect(err.field).toBe("spec.site_name");
    expect(err.message).toContain("The spec does not match StaticSite: site_name");
    err = await refused(() => create({ site_name: "ok", page_count: 99 }));
    expect(err.message).toBe("The spec does not match StaticSite: page_count must be at most 20. Nothing was saved.");
    err = await refused(() => create({ site_name: "ok", colour: "red" }));
    expect(err.message).toContain("Unknown field colour");
    err = await refused(() => create({ site_name: "Bad Name" }));
    expect(err.message).toContain("site_name must be lower-case letters, digits and dashes");
  });

  it("refuse a connection of the wrong provider, naming the provider the kind needs", async () => {
    const err = await refused(() => createComponentAndDeploy(t.db, org.actor(), { ...site("x4"), connection: "aws-prod" }));
    expect(err.message).toBe(
      "Connection aws-prod is an aws connection, but StaticSite deploys through a local connection. Pick a local connection, or create one in Settings → Connections.",
    );
    expect(err.field).toBe("connection");
  });

  it("are refused through the API for a viewer, with the role named", async () => {
    const err = await org.call("viewer").components.create({ org: org.slug, environment: "dev", kind: "StaticSite", name: "v1", spec: { site_name: "v" } }).catch((e) => e);
    expect(err.code).toBe("FORBIDDEN");
    expect(err.message).toBe(`Nothing was changed: this needs the engineer role, and you are a viewer in ${org.slug}. Ask an admin of ${org.slug} to change your role in Settings → Members.`);
  });
});

describe("the direct path: create, change, delete, forget", () => {
  let o: TestOrg;
  let runner: Awaited<ReturnType<typeof testRunner>>;
  beforeAll(async () => {
    o = await seedTestOrg(t.db);
    runner = await testRunner(t.db, o);
    await setFlowControlPolicy(t.db, o.actor(), { selector: "environment", target: "prod", toggles: { manualStart: false, skipRefresh: false, previewBeforeApply: true, pauseBeforeApply: true, protectDeletes: true } });
  });

  it("create saves version 1 and queues an update job for it, recorded together; a draft has no job until one is run", async () => {
    const { component: c, job, queuedBehind } = await createComponentAndDeploy(t.db, o.actor("engineer"), { ...site("first"), versionMessage: "first deploy" });
    expect(job).toMatchObject({ operation: "update", status: "queued", specVersion: 1, versionMessage: "first deploy", componentId: c.id });
    expect(queuedBehind).toBeNull();
    expect(c).toMatchObject({ status: "active", specVersion: 1, lastJob: { id: job!.id, operation: "update", status: "queued", specVersion: 1 } });
    expect(c.actions).toMatchObject({ update: { allowed: true }, deploy: { allowed: true }, delete: { allowed: true }, forget: { allowed: false } });
    const { versions } = await listComponentVersions(t.db, o.orgId, c.id);
    expect(versions).toEqual([
      expect.objectContaining({
        version: 1,
        connection: "local-sandbox",
        createdByLabel: o.users.engineer.email,
        jobIds: [job!.id],
        changes: {
          description: { from: null, to: "" },
          "spec.site_name": { from: null, to: "first" },
          "spec.title": { from: null, to: "Hello from Planton" },
          "spec.page_count": { from: null, to: 2 },
          connection: { from: null, to: "local-sandbox" },
        },
      }),
    ]);
    expect((await actionsOf(o, c.id)).map((e) => e.action)).toEqual(["component.create"]);
    expect((await actionsOf(o, job!.id)).map((e) => e.action)).toEqual(["job.create"]);
    await drive(runner, job!.id, UPDATE);
    expect(await jobOf(job!.id)).toMatchObject({ status: "completed", result: "succeeded" });

    const d = await draft(o, "drafted");
    expect(d.job).toBeNull();
    expect(d.component).toMatchObject({ status: "draft", lastJob: null, actions: { deploy: { allowed: true } } });
    expect(await listJobs(t.db, o.orgId, { componentId: d.component.id })).toMatchObject({ jobs: [] });
    // Deploying it (its first job) makes it active, at the version it is at.
    const deployed = await createJob(t.db, o.actor(), { componentId: d.component.id, operation: "update" });
    expect(deployed.specVersion).toBe(1);
    expect((await getComponentView(t.db, o.actor(), d.component.id)).status).toBe("active");
    await cancelJob(t.db, o.actor(), { jobId: deployed.id });
  });

  it("create in prod queues a job that pauses before apply with its plan to review", async () => {
    const { component: c, job } = await createComponentAndDeploy(t.db, o.actor("engineer"), site("in-prod", { environment: "prod" }));
    expect(job).toMatchObject({ status: "queued", policy: expect.objectContaining({ pauseBeforeApply: true, selector: "environment", target: "prod" }) });
    const run = (await claim(t.db, runner))!;
    expect(run.claim.job.id).toBe(job!.id);
    for (const s of ["init", "refresh"] as const) await runStep(t.db, run, s);
    expect(await runStep(t.db, run, "preview", "succeeded", { plan: { artifactId: "art_prod", sha256: "b".repeat(64), summary: { add: 2 } } })).toMatchObject({ next: "stop" });
    expect(await jobOf(job!.id)).toMatchObject({ status: "awaiting_approval" });
    expect((await getComponentView(t.db, o.actor(), c.id)).lastJob).toMatchObject({ id: job!.id, status: "awaiting_approval" });
    await cancelJob(t.db, o.actor(), { jobId: job!.id });
  });

  it("a change records the next version with the field-level diff and queues a job for it behind the one waiting; no change records nothing", async () => {
    const { component: c, job: first } = await createComponentAndDeploy(t.db, o.actor(), site("changing"));
    const { component: after, job, queuedBehind } = await changeComponent(t.db, o.actor("engineer"), { id: c.id, baseVersion: 1, spec: { site_name: "changing", title: "Second" }, description: "now described", versionMessage: "retitle" });
    expect(after).toMatchObject({ specVersion: 2, description: "now described", spec: { title: "Second" }, lastJob: { id: job!.id, specVersion: 2 } });
    expect(job).toMatchObject({ operation: "update", status: "queued", specVersion: 2, versionMessage: "retitle" });
    expect(queuedBehind).toBe(first!.id);
    const { versions } = await listComponentVersions(t.db, o.orgId, c.id);
    expect(versions.map((v) => [v.version, v.jobIds])).toEqual([
      [2, [job!.id]],
      [1, [first!.id]],
    ]);
    expect(versions[0]).toMatchObject({ createdByLabel: o.users.engineer.email, description: "now described" });
    expect(versions[0].changes).toEqual({ description: { from: "", to: "now described" }, "spec.title": { from: "Hello from Planton", to: "Second" } });
    const events = await actionsOf(o, c.id);
    expect(events.map((e) => e.action)).toEqual(["component.create", "component.update"]);
    expect(events[1].changes).toEqual(versions[0].changes);

    // The same values again: the component as it is, no job, no version, no event.
    const before = await counts(o);
    const same = await changeComponent(t.db, o.actor(), { id: c.id, spec: { site_name: "changing", title: "Second" }, description: "now described" });
    expect(same).toMatchObject({ component: { specVersion: 2 }, job: null, queuedBehind: null });
    expect(await counts(o)).toEqual(before);

    // Saved without deploying: a version, no job; a key the spec drops is recorded as going to null.
    const quiet = await changeComponent(t.db, o.actor(), { id: c.id, spec: { site_name: "changing", page_count: 3 }, deploy: false });
    expect(quiet.job).toBeNull();
    const [v3] = (await listComponentVersions(t.db, o.orgId, c.id)).versions;
    expect(v3).toMatchObject({ version: 3, jobIds: [], changes: { "spec.title": { from: "Second", to: "Hello from Planton" }, "spec.page_count": { from: 2, to: 3 } } });
    // A spec the kind does not accept changes nothing.
    await refused(() => changeComponent(t.db, o.actor(), { id: c.id, spec: { site_name: 5 } }), o);
    for (const j of [first!, job!]) await cancelJob(t.db, o.actor(), { jobId: j.id });
  });

  it("two changes based on the same version at once: exactly one is saved, the other is refused naming both versions and saves nothing", async () => {
    const { component: c } = await draft(o, "contested");
    const before = await counts(o);
    const change = (who: "admin" | "engineer", title: string) => changeComponent(t.db, o.actor(who), { id: c.id, baseVersion: 1, spec: { site_name: "contested", title } });
    const results = await Promise.allSettled([change("admin", "from-admin"), change("engineer", "from-engineer")]);
    const won = results.flatMap((r, i) => (r.status === "fulfilled" ? [i] : []));
    expect(won, "exactly one change wins").toHaveLength(1);
    const winner = won[0] === 0 ? o.users.admin : o.users.engineer;
    const lost = results[1 - won[0]] as PromiseRejectedResult;
    expect(lost.reason).toBeInstanceOf(PlantonError);
    expect(lost.reason).toMatchObject({ code: "CONFLICT", field: "baseVersion" });
    expect(lost.reason.message).toMatch(
      new RegExp(`^Nothing was changed: your change is based on version 1 of contested, but it is at version 2 now, made by ${winner.email.replace(/[.]/g, "\\.")} at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\. Reload it, review what changed \\(planton infra component get ${c.id}, or its Versions tab\\), and apply your change again on version 2\\.$`),
    );
    const after = await counts(o);
    expect([after.versions, after.jobs, after.audit]).toEqual([before.versions + 1, before.jobs + 1, before.audit + 2]); // the winner's version, job, component.update and job.create
    const now = await getComponentView(t.db, o.actor(), c.id);
    expect(now).toMatchObject({ specVersion: 2, spec: { title: won[0] === 0 ? "from-admin" : "from-engineer" } });
    const { jobs } = await listJobs(t.db, o.orgId, { componentId: c.id });
    for (const j of jobs) await cancelJob(t.db, o.actor(), { jobId: j.id });
  });

  it("delete runs a destroy job behind the running one; when it succeeds the component is gone from the list, its history stays readable, and the name is free again", async () => {
    const { component: c, job: deploy } = await createComponentAndDeploy(t.db, o.actor(), site("doomed"));
    const running = (await claim(t.db, runner))!;
    expect(running.claim.job.id).toBe(deploy!.id);
    await runStep(t.db, running, "init");

    const { component: deleting, job: destroy, queuedBehind } = await deleteComponent(t.db, o.actor("engineer"), { id: c.id, versionMessage: "no longer needed" });
    expect(destroy).toMatchObject({ operation: "destroy", status: "queued", specVersion: 1, versionMessage: "no longer needed" });
    expect(queuedBehind).toBe(deploy!.id);
    expect(deleting).toMatchObject({ status: "deleting", deleteJobId: destroy!.id, actions: { update: { allowed: false }, delete: { allowed: false }, deploy: { allowed: false } } });
    expect(deleting.actions.update.why).toBe(`doomed is being deleted by job ${destroy!.id}. Wait for it to end, or cancel it (planton infra job cancel ${destroy!.id})`);

    // While it is being deleted nothing else may be done with it, and the refusals write nothing.
    expect((await refused(() => changeComponent(t.db, o.actor(), { id: c.id, description: "late" }), o)).message).toBe(`Nothing was changed: ${deleting.actions.update.why}.`);
    expect((await refused(() => createJob(t.db, o.actor(), { componentId: c.id, operation: "update" }), o)).message).toBe(`Nothing ran: ${deleting.actions.deploy.why}.`);
    expect((await refused(() => deleteComponent(t.db, o.actor(), { id: c.id }), o)).code).toBe("CONFLICT");
    expect((await refused(() => forgetComponent(t.db, o.actor(), { id: c.id, confirmName: "doomed" }), o)).message).toBe(
      `Nothing was changed: doomed is being deleted by job ${destroy!.id}. Cancel that job first (planton infra job cancel ${destroy!.id}), then forget it.`,
    );

    for (const s of ["refresh", "preview", "apply"] as const) await runStep(t.db, running, s);
    await drive(runner, destroy!.id, DESTROY);
    const gone = await getComponentView(t.db, o.actor(), c.id);
    expect(gone).toMatchObject({ status: "deleted", deletedBy: o.users.engineer.email, deleteJobId: destroy!.id, lastJob: { id: destroy!.id, result: "succeeded" } });
    expect(gone.deletedAt).toBeInstanceOf(Date);
    expect(Object.values(gone.actions).every((a) => !a.allowed)).toBe(true);
    expect((await listComponentViews(t.db, o.actor(), {})).components.map((x) => x.id)).not.toContain(c.id);
    expect((await listComponentViews(t.db, o.actor(), { show: "gone" })).components.map((x) => x.id)).toContain(c.id);
    expect((await listComponentViews(t.db, o.actor(), { show: "all", environment: "dev", kind: "StaticSite" })).components.map((x) => x.id)).toContain(c.id);
    expect((await listComponentVersions(t.db, o.orgId, c.id)).versions.map((v) => v.jobIds)).toEqual([[deploy!.id, destroy!.id]]);
    // Its page stays readable through the API, as the console and the CLI read it.
    const viewer = o.call("viewer");
    expect(await viewer.components.get({ org: o.slug, id: c.id })).toMatchObject({ status: "deleted", actions: { delete: { allowed: false } } });
    expect((await viewer.components.versions({ org: o.slug, id: c.id })).versions.map((v) => v.version)).toEqual([1]);
    expect((await viewer.components.list({ org: o.slug, show: "gone" })).components.map((x) => x.id)).toContain(c.id);
    expect((await listJobs(t.db, o.orgId, { componentId: c.id })).jobs.map((j) => j.id)).toEqual([destroy!.id, deploy!.id]);
    expect((await actionsOf(o, c.id)).map((e) => [e.action, e.actor, e.result])).toEqual([
      ["component.create", o.users.admin.email, "success"],
      ["component.delete", o.users.engineer.email, "success"],
      ["component.remove", "system", "success"],
    ]);
    expect((await refused(() => createJob(t.db, o.actor(), { componentId: c.id, operation: "refresh" }), o)).message).toBe(
      "Nothing ran: doomed was deleted; its history stays readable, but it can no longer be changed. Create a new component to deploy it again.",
    );
    const again = await draft(o, "doomed");
    expect(again.component.id).not.toBe(c.id);
  });

  it("a failed destroy leaves the component delete_failed with the reason; a retry runs another, and a cancelled or lost one leaves it delete_failed too", async () => {
    const { component: c, job: deploy } = await createComponentAndDeploy(t.db, o.actor(), site("stubborn"));
    await drive(runner, deploy!.id, UPDATE);

    const first = (await deleteComponent(t.db, o.actor("engineer"), { id: c.id })).job!;
    await drive(runner, first.id, DESTROY, "failed", "permission denied on /srv/stubborn");
    let now = await getComponentView(t.db, o.actor(), c.id);
    expect(now).toMatchObject({ status: "delete_failed", statusReason: "destroy failed: permission denied on /srv/stubborn", deleteJobId: first.id, actions: { delete: { allowed: true }, update: { allowed: true } } });
    const failed = (await actionsOf(o, c.id)).at(-1)!;
    expect(failed).toMatchObject({ action: "component.delete_failed", actor: "system", result: "failure", changes: { jobId: first.id, result: "failed" } });
    expect((await listComponentViews(t.db, o.actor(), {})).components.map((x) => x.id)).toContain(c.id);

    // The retry is the same call; cancelled while queued, it fails the same way.
    const retry = await deleteComponent(t.db, o.actor("engineer"), { id: c.id });
    expect(retry.component).toMatchObject({ status: "deleting", statusReason: null, deleteJobId: retry.job!.id });
    await cancelJob(t.db, o.actor("engineer"), { jobId: retry.job!.id });
    now = await getComponentView(t.db, o.actor(), c.id);
    expect(now).toMatchObject({ status: "delete_failed", statusReason: `Cancelled by ${o.users.engineer.email} while queued; nothing more ran.` });

    // A runner lost mid-destroy: the job fails with that reason, and so does the delete.
    const third = (await deleteComponent(t.db, o.actor(), { id: c.id })).job!;
    await drive(runner, third.id, ["init", "refresh"]);
    await t.db.transaction(async (tx) => failRunningJob(tx, (await lockJob(tx, third.id))!, "runner r1 was lost: no heartbeat"));
    now = await getComponentView(t.db, o.actor(), c.id);
    expect(now).toMatchObject({ status: "delete_failed", statusReason: "runner r1 was lost: no heartbeat", deleteJobId: third.id });

    const last = (await deleteComponent(t.db, o.actor(), { id: c.id })).job!;
    await drive(runner, last.id, DESTROY);
    expect((await getComponentView(t.db, o.actor(), c.id)).status).toBe("deleted");
  });

  it("re-running the destroy that failed to delete the component is the delete's retry: when it succeeds the component is removed", async () => {
    const { component: c, job: deploy } = await createComponentAndDeploy(t.db, o.actor(), site("rerun-doomed"));
    await drive(runner, deploy!.id, UPDATE);
    const first = (await deleteComponent(t.db, o.actor("engineer"), { id: c.id })).job!;
    await drive(runner, first.id, DESTROY, "failed", "disk full");
    expect((await getComponentView(t.db, o.actor(), c.id)).status).toBe("delete_failed");

    const again = await rerunJob(t.db, o.actor("engineer"), { jobId: first.id });
    expect(again).toMatchObject({ operation: "destroy", rerunOf: first.id });
    expect(await getComponentView(t.db, o.actor(), c.id)).toMatchObject({ status: "deleting", deleteJobId: again.id });
    expect((await actionsOf(o, c.id)).at(-1)).toMatchObject({ action: "component.delete", changes: { retryOf: first.id, jobId: again.id } });
    expect(await actionsOf(o, again.id)).toMatchObject([{ action: "job.rerun", changes: { rerunOf: first.id } }]);
    await drive(runner, again.id, DESTROY);
    expect((await getComponentView(t.db, o.actor(), c.id)).status).toBe("deleted");
  });

  it("delete in prod pauses with the destroy plan to review", async () => {
    const { component: c, job } = await createComponentAndDeploy(t.db, o.actor(), site("prod-doomed", { environment: "prod" }));
    await cancelJob(t.db, o.actor(), { jobId: job!.id });
    // The cancelled deploy never started, so nothing exists: the delete is at once. A state written by a job makes it a destroy.
    const refreshed = await createJob(t.db, o.actor(), { componentId: c.id, operation: "refresh" });
    await drive(runner, refreshed.id, ["init", "refresh"]);
    const { job: destroy } = await deleteComponent(t.db, o.actor(), { id: c.id });
    const run = (await claim(t.db, runner))!;
    for (const s of ["init", "refresh"] as const) await runStep(t.db, run, s);
    await runStep(t.db, run, "preview", "succeeded", { plan: { artifactId: "art_destroy", sha256: "c".repeat(64), summary: { destroy: 2 } } });
    expect(await jobOf(destroy!.id)).toMatchObject({ status: "awaiting_approval" });
    expect((await getComponentView(t.db, o.actor(), c.id)).status).toBe("deleting");
    await cancelJob(t.db, o.actor(), { jobId: destroy!.id });
    expect((await getComponentView(t.db, o.actor(), c.id)).status).toBe("delete_failed");
  });

  it("a job still waiting for its manual start when the destroy succeeds is cancelled with the component", async () => {
    const { component: c, job } = await createComponentAndDeploy(t.db, o.actor(), site("waiting"));
    await drive(runner, job!.id, UPDATE);
    await setFlowControlPolicy(t.db, o.actor(), { selector: "component", target: c.id, toggles: { manualStart: true, skipRefresh: false, previewBeforeApply: true, pauseBeforeApply: false, protectDeletes: false } });
    const waiting = await createJob(t.db, o.actor(), { componentId: c.id, operation: "update" });
    expect(waiting.status).toBe("awaiting_approval");
    const { job: destroy, queuedBehind } = await deleteComponent(t.db, o.actor(), { id: c.id });
    expect(queuedBehind, "a job waiting for its start holds no queue").toBeNull();
    await resumeJob(t.db, o.actor(), { jobId: destroy!.id });
    await drive(runner, destroy!.id, DESTROY);
    expect((await getComponentView(t.db, o.actor(), c.id)).status).toBe("deleted");
    expect(await jobOf(waiting.id)).toMatchObject({ status: "completed", result: "cancelled", reason: `Cancelled: waiting was deleted by destroy job ${destroy!.id} before this job started; nothing ran.` });
  });

  it("a component no job of which ever started is removed at once, with no job", async () => {
    const { component: c } = await draft(o, "never-ran");
    const out = await deleteComponent(t.db, o.actor("engineer"), { id: c.id });
    expect(out).toMatchObject({ job: null, queuedBehind: null, component: { status: "deleted", deletedBy: o.users.engineer.email } });
    expect((await actionsOf(o, c.id)).map((e) => e.action)).toEqual(["component.create", "component.delete"]);
    expect(await listJobs(t.db, o.orgId, { componentId: c.id })).toMatchObject({ jobs: [] });
  });

  it("a change of state backend is refused once the component's state lives somewhere, pointing at the move", async () => {
    // Not the default: the other tests' states stay on Planton-managed storage.
    const other = { name: "own-files" };
    await createStateBackend(t.db, o.actor(), { name: other.name, kind: "local", config: { path: fs.mkdtempSync(path.join(os.tmpdir(), "planton-components-")) } });
    const { component: fresh } = await draft(o, "movable");
    // Nothing written yet: pointing it elsewhere loses nothing.
    expect((await changeComponent(t.db, o.actor(), { id: fresh.id, stateBackend: other.name, deploy: false })).component.stateBackend).toBe(other.name);
    const { component: c, job } = await createComponentAndDeploy(t.db, o.actor(), site("settled", { stateBackend: other.name }));
    await drive(runner, job!.id, UPDATE);
    const err = await refused(() => changeComponent(t.db, o.actor(), { id: c.id, stateBackend: null }), o);
    expect(err).toMatchObject({ code: "CONFLICT", field: "stateBackend" });
    expect(err.message).toMatch(new RegExp(`^Nothing was changed: settled's state is kept in state backend ${other.name}, and pointing it at .* would leave that state behind .* planton tofu state migrate-backend ${c.id} --to `));
  });

  it("a state backend whose components were all deleted can be deleted; while one is still there it is refused, naming it", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "planton-components-"));
    await createStateBackend(t.db, o.actor(), { name: "short-lived", kind: "local", config: { path: dir } });
    const { component: c, job } = await createComponentAndDeploy(t.db, o.actor(), site("on-short-lived", { stateBackend: "short-lived" }));
    await drive(runner, job!.id, UPDATE);
    const err = await refused(() => deleteStateBackend(t.db, o.actor(), { name: "short-lived" }), o);
    expect(err.message).toContain("it keeps the state of 1 component: on-short-lived (dev)");
    const destroy = (await deleteComponent(t.db, o.actor(), { id: c.id })).job!;
    await drive(runner, destroy.id, DESTROY);
    expect((await getComponentView(t.db, o.actor(), c.id)).status).toBe("deleted");
    await deleteStateBackend(t.db, o.actor(), { name: "short-lived" });
  });

  it("forget is for admins, needs the name as confirmation (naming what keeps running), and keeps the state", async () => {
    const { component: c, job } = await createComponentAndDeploy(t.db, o.actor(), site("let-go"));
    const run = (await claim(t.db, runner))!;
    expect(run.claim.job.id).toBe(job!.id);
    const lock = await lockState(t.db, run.access, { Operation: "OperationTypeApply", Who: "runner@test" });
    if (!lock.ok) throw new Error(lock.message);
    const resource = (name: string) => ({ mode: "managed", type: "local_file", name, provider: 'provider["planton/local"]', instances: [{ attributes: { id: `/srv/${name}` } }] });
    await putState(t.db, run.access, lock.lock.ID, { version: 4, terraform_version: "builtin-0.1.0", serial: 1, lineage: "lin-let-go", outputs: {}, resources: [resource("index"), resource("about")] });
    await unlockState(t.db, run.access, lock.lock.ID);
    for (const s of UPDATE) await runStep(t.db, run, s);

    let err = await refused(() => forgetComponent(t.db, o.actor(), { id: c.id }), o);
    expect(err).toMatchObject({ code: "BAD_REQUEST", field: "confirmName" });
    expect(err.message).toBe(
      `Nothing was forgotten: forgetting let-go removes it from Planton without destroying anything, and 2 resource(s) of its state keep running unmanaged: local_file.index, local_file.about. Its state is kept for export. To go ahead, confirm with its name: planton infra component forget ${c.id} --confirm let-go (confirmName in the API); to destroy its resources instead, delete it.`,
    );
    await refused(() => forgetComponent(t.db, o.actor(), { id: c.id, confirmName: "let-go-typo" }), o);
    err = await refused(() => forgetComponent(t.db, o.actor("engineer"), { id: c.id, confirmName: "let-go" }), o);
    expect(err).toMatchObject({ code: "FORBIDDEN" });
    expect(err.message).toMatch(/^Nothing was changed: forgetting a component needs the admin role/);
    const viaApi = await o.call("engineer").components.forget({ org: o.slug, id: c.id, confirmName: "let-go" }).catch((e) => e);
    expect(viaApi.code).toBe("FORBIDDEN");

    const out = await forgetComponent(t.db, o.actor(), { id: c.id, confirmName: "let-go" });
    expect(out.unmanaged).toEqual(["local_file.index", "local_file.about"]);
    expect(out.component).toMatchObject({ status: "forgotten", deletedBy: o.users.admin.email });
    expect((await actionsOf(o, c.id)).at(-1)).toMatchObject({ action: "component.forget", actor: o.users.admin.email, changes: { unmanaged: ["local_file.index", "local_file.about"] } });
    expect(await t.db.select({ id: stateObjects.id }).from(stateObjects).where(eq(stateObjects.componentId, c.id))).toHaveLength(1);
    expect((await getComponentState(t.db, o.orgId, c.id))!.resources.map((r) => r.address)).toEqual(["local_file.index", "local_file.about"]);
    expect((await refused(() => createJob(t.db, o.actor(), { componentId: c.id, operation: "refresh" }), o)).message).toMatch(/^Nothing ran: let-go was forgotten by Planton/);
    expect((await listComponentViews(t.db, o.actor(), { show: "gone" })).components.map((x) => x.id)).toContain(c.id);
  });

  it("forget waits for the component's jobs to end", async () => {
    const { component: c, job } = await createComponentAndDeploy(t.db, o.actor(), site("busy"));
    const err = await refused(() => forgetComponent(t.db, o.actor(), { id: c.id, confirmName: "busy" }), o);
    expect(err.message).toBe(`Nothing was changed: job ${job!.id} of busy is queued, and it would go on changing resources Planton no longer manages. Cancel it (planton infra job cancel ${job!.id}) or wait for it to end, then forget busy.`);
    await cancelJob(t.db, o.actor(), { jobId: job!.id });
  });
});

describe("audit events", () => {
  it("roll back with the change they describe", async () => {
    const before = await counts();
    await t.db
      .transaction(async (tx) => {
        await recordAudit(tx, org.actor(), { action: "component.create", summary: "never committed" });
        throw new Error("the change failed after the audit event was written");
      })
      .catch(() => {});
    expect(await counts()).toEqual(before);
  });
});
