import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { auditEvents, infraJobs, organizations, runners } from "@/db/schema";
import { PlantonError } from "../../errors";
import { createJob } from "../jobs/create-job";
import { getJob } from "../jobs/queries";
import { orgWithComponent, ownStateBackend } from "../../../test/job-helpers";
import { setDefaultRunner } from "./manage";
import { claimJob } from "./claim";
import { heartbeat } from "./heartbeat";
import { jobAccess, jobAccessUnconfirmed } from "./job-access";
import { authenticateRunner, registerRunner } from "./register-runner";
import { startStep } from "./steps";
import { uploadEvents } from "./upload-events";
import { readEventsAfter } from "../jobs/events";

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t.close());

/** An organization's runner with a job it has claimed and is running (its init step started). */
async function runnerWithRunningJob(name: string) {
  const { org, component } = await orgWithComponent(t.db);
  const { runner, token } = await registerRunner(t.db, org.actor(), { name });
  // The job goes to this runner as the organization's default, with its state in a backend of the organization's own.
  await ownStateBackend(t.db, org);
  await setDefaultRunner(t.db, org.actor(), { runner: name });
  const job = await createJob(t.db, org.actor(), { componentId: component.id });
  const claim = (await claimJob(t.db, await authenticateRunner(t.db, token)))!;
  const access = await jobAccess(t.db, claim.credential.token, job.id);
  await startStep(t.db, access, "init", { attemptId: claim.attemptId });
  return { org, runner, token, job, claim };
}

const refusal = (p: Promise<unknown>) => p.then(() => null, (e: PlantonError) => ({ code: e.code, message: e.message }));
const auditOf = (orgId: string, action: string) => t.db.select().from(auditEvents).where(and(eq(auditEvents.orgId, orgId), eq(auditEvents.action, action)));

describe("rotating a runner's token", () => {
  it("returns the new token once; the old token and the job credentials issued under it are refused at once, and the running job fails with the reason", async () => {
    const { org, runner, token, job, claim } = await runnerWithRunningJob("rotating");
    const admin = org.users.admin.email;
    const rotated = await org.call("admin").runners.rotateToken({ org: org.slug, runner: runner.id });
    expect(rotated.token).toMatch(/^rnr_/);
    expect(rotated.token).not.toBe(token);
    expect(rotated.runner).not.toHaveProperty("tokenHash", expect.anything());
    expect(rotated.failedJobs).toEqual([job.id]);

    expect(await refusal(authenticateRunner(t.db, token))).toEqual({ code: "UNAUTHORIZED", message: expect.stringContaining("this runner token is not known (it may have been rotated") });
    expect((await authenticateRunner(t.db, rotated.token)).id).toBe(runner.id);
    expect(await refusal(jobAccess(t.db, claim.credential.token, job.id))).toEqual({
      code: "UNAUTHORIZED",
      message: `Nothing was done: this job credential was issued under a runner token of rotating that has since been rotated, so it no longer works. Stop working on job ${job.id}. Start the runner with its new token to claim new work.`,
    });
    const reason = `the token of runner rotating was rotated by ${admin}; the job's credential no longer works`;
    const view = await getJob(t.db, org.orgId, job.id);
    expect(view).toMatchObject({ status: "completed", result: "failed", reason });
    expect(view.steps.find((s) => s.step === "init")).toMatchObject({ result: "failed", reason });
    expect(view.attempts[0]).toMatchObject({ reason, endedAt: expect.any(Date) });

    const [audit] = await auditOf(org.orgId, "runner.rotate_token");
    expect(audit).toMatchObject({ actorLabel: admin, targetId: runner.id, summary: `Rotated the token of runner rotating; its running jobs ${job.id} failed` });
  });

  it("refuses a claim that was waiting while the token was rotated", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const { runner, token } = await registerRunner(t.db, org.actor(), { name: "waiting" });
    const authenticated = await authenticateRunner(t.db, token);
    await org.call("admin").runners.rotateToken({ org: org.slug, runner: runner.id });
    await createJob(t.db, org.actor(), { componentId: component.id });
    expect(await refusal(claimJob(t.db, authenticated))).toMatchObject({ code: "UNAUTHORIZED", message: expect.stringContaining("this runner token is not known") });
  });
});

describe("revoking a runner", () => {
  it("refuses its claims and heartbeats at once, fails its running job with the reason, clears it as default runner, and is audited", async () => {
    const { org, runner, token, job, claim } = await runnerWithRunningJob("doomed");
    const admin = org.users.admin.email;
    await t.db.update(organizations).set({ defaultRunnerId: runner.id }).where(eq(organizations.id, org.orgId));
    const access = await jobAccess(t.db, claim.credential.token, job.id);
    const authenticated = await authenticateRunner(t.db, token);

    const revoked = await org.call("admin").runners.revoke({ org: org.slug, runner: runner.id });
    expect(revoked.failedJobs).toEqual([job.id]);
    expect(revoked.runner.revokedAt).toBeInstanceOf(Date);

    const reason = `runner doomed was revoked by ${admin}`;
    expect(await getJob(t.db, org.orgId, job.id)).toMatchObject({ status: "completed", result: "failed", reason });
    const said = `Nothing was done: runner doomed was revoked at ${revoked.runner.revokedAt!.toISOString()}`;
    expect(await refusal(authenticateRunner(t.db, token))).toEqual({ code: "FORBIDDEN", message: `${said} and may claim no more work. Stop this runner; an admin registers a new one in Settings → Runners.` });
    // A claim that authenticated before the revoke is refused too.
    expect(await refusal(claimJob(t.db, authenticated))).toMatchObject({ code: "FORBIDDEN", message: expect.stringContaining(said) });
    expect(await refusal(heartbeat(t.db, access, { attemptId: claim.attemptId }))).toEqual({
      code: "FORBIDDEN",
      message: `${said}, so its job credentials no longer work. Stop working on job ${job.id}.`,
    });
    const [row] = await t.db.select().from(organizations).where(eq(organizations.id, org.orgId));
    expect(row.defaultRunnerId).toBeNull();

    const [audit] = await auditOf(org.orgId, "runner.revoke");
    expect(audit).toMatchObject({
      actorLabel: admin,
      targetId: runner.id,
      summary: `Revoked runner doomed; its running jobs ${job.id} failed; it is no longer the organization's default runner`,
    });
    expect(await refusal(org.call("admin").runners.revoke({ org: org.slug, runner: runner.id }))).toMatchObject({ message: expect.stringContaining("was already revoked") });
    expect(await refusal(org.call("admin").runners.rotateToken({ org: org.slug, runner: runner.id }))).toMatchObject({ message: expect.stringContaining("is revoked and gets no new token") });
  });

  it("is refused for another organization's runner and for Planton-hosted runners", async () => {
    const { runner } = await runnerWithRunningJob("theirs");
    const { org } = await orgWithComponent(t.db);
    expect(await refusal(org.call("admin").runners.revoke({ org: org.slug, runner: runner.id }))).toMatchObject({ message: expect.stringContaining(`Runner ${runner.id} was not found`) });
    const [hosted] = await t.db.insert(runners).values({ id: "rnr_hosted_test", orgId: null, scopeKey: "platform", name: "hosted-test", kind: "hosted", tokenHash: "h" }).returning();
    expect(await refusal(org.call("admin").runners.rotateToken({ org: org.slug, runner: hosted.id }))).toMatchObject({ message: expect.stringContaining("Planton-hosted runners are not an organization's to change") });
  });
});

describe("an event upload that skipped the check's read (its credential passed here before)", () => {
  const line = (seq: number) => ({ seq, ts: new Date().toISOString(), operation: "init" as const, type: "log" as const, payload: { line: `line ${seq}` } });
  const lines = async (jobId: string) => (await readEventsAfter(t.db, jobId, 0)).filter((e) => e.type === "log").map((e) => e.payload.line);

  for (const change of ["revoke", "rotateToken"] as const) {
    it(`is refused with the check's own words once the runner's ${change === "revoke" ? "revocation" : "token rotation"} changed what it passed on, and stores nothing`, async () => {
      const { org, runner, job, claim } = await runnerWithRunningJob(`unconfirmed-${change.toLowerCase()}`);
      const first = await jobAccessUnconfirmed(t.db, claim.credential.token, job.id, "closing");
      await uploadEvents(t.db, first, { attemptId: claim.attemptId, events: [line(1)] });
      // Passed before: the next upload's access has no read of its own, only the condition its append tests.
      const next = await jobAccessUnconfirmed(t.db, claim.credential.token, job.id, "closing");
      expect(next.unconfirmed).toBeDefined();
      await uploadEvents(t.db, next, { attemptId: claim.attemptId, events: [line(2)] });

      const later = await jobAccessUnconfirmed(t.db, claim.credential.token, job.id, "closing");
      await org.call("admin").runners[change]({ org: org.slug, runner: runner.id });
      const refused = await refusal(uploadEvents(t.db, later, { attemptId: claim.attemptId, events: [line(3)] }));
      expect(refused).toEqual(await refusal(jobAccess(t.db, claim.credential.token, job.id, "closing")));
      expect(refused!.message).toContain(change === "revoke" ? `runner ${runner.name} was revoked at` : "has since been rotated");
      expect(await lines(job.id)).toEqual(["line 1", "line 2"]);
      // And so is every later upload with that credential.
      expect(await refusal(jobAccessUnconfirmed(t.db, claim.credential.token, job.id, "closing"))).toEqual(refused);
    });
  }

  it("is stored after the full check once the job's status moved on, as `closing` allows", async () => {
    const { job, claim } = await runnerWithRunningJob("unconfirmed-paused");
    const access = await jobAccessUnconfirmed(t.db, claim.credential.token, job.id, "closing");
    await uploadEvents(t.db, access, { attemptId: claim.attemptId, events: [line(1)] });
    // What the check passed on (status running) no longer holds; the attempt still runs the job.
    await t.db.update(infraJobs).set({ status: "awaiting_approval" }).where(eq(infraJobs.id, job.id));
    const later = await jobAccessUnconfirmed(t.db, claim.credential.token, job.id, "closing");
    expect(await uploadEvents(t.db, later, { attemptId: claim.attemptId, events: [line(2)] })).toEqual({ acceptedThrough: 2 });
    expect(await lines(job.id)).toEqual(["line 1", "line 2"]);
  });
});
