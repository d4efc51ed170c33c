import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createHash } from "node:crypto";
import { eq } from "drizzle-orm";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { artifacts, infraJobs, jobOperations, runnerAttempts, secretEnvironments, secrets, stateObjects } from "@/db/schema";
import { PlantonError } from "../../errors";
import { decryptSecret } from "../../crypto";
import { cancelJob } from "../jobs/cancel-job";
import { createJob } from "../jobs/create-job";
import { getJob } from "../jobs/queries";
import { expireLeases } from "../jobs/scheduler";
import { claim, orgWithComponent, runStep, testRunner } from "../../../test/job-helpers";
import { draftComponent } from "../../../test/components";
import { environmentByName } from "../organizations/lookup";
import { createSecret } from "../settings/secrets";
import { downloadArtifact, downloadArtifactForViewer, uploadArtifact } from "./artifacts";
import { endAttempt } from "./attempt-end";
import { claimJob, claimJobWaiting } from "./claim";
import { issueJobCredential, verifyJobCredential } from "./credentials";
import { heartbeat } from "./heartbeat";
import { jobAccess } from "./job-access";
import { readJobSecret, saveOutputs } from "./outputs";
import { authenticateRunner, registerRunner } from "./register-runner";
import { getState, lockState, putState, unlockState } from "./state";
import { startStep } from "./steps";

let t: TestDatabase;

/** The IaC input the job keeps, to change one part of it. */
const storedInput = async (jobId: string) => (await t.db.select().from(infraJobs).where(eq(infraJobs.id, jobId)))[0].iacInput!;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t.close());

const steps = async (jobId: string) =>
  (await t.db.select().from(jobOperations).where(eq(jobOperations.jobId, jobId)).orderBy(jobOperations.ordinal)).map((s) => `${s.step}:${s.result}${s.reason ? ` (${s.reason})` : ""}`);

describe("claiming jobs", () => {
  it("never hands one job to two runners claiming at the same moment", async () => {
    const { org, components } = await orgWithComponent(t.db, { components: 6 });
    const runner = await testRunner(t.db, org);
    for (const c of components) await createJob(t.db, org.actor(), { componentId: c.id });
    const claims = await Promise.all(Array.from({ length: 10 }, () => claimJob(t.db, runner)));
    const ids = claims.filter((c) => c).map((c) => c!.job.id);
    expect(ids).toHaveLength(6);
    expect(new Set(ids).size).toBe(6);
    const attempts = await Promise.all(ids.map((id) => t.db.select().from(runnerAttempts).where(eq(runnerAttempts.jobId, id))));
    expect(attempts.every((a) => a.length === 1)).toBe(true);
  });

  it("runs one job per component at a time, the component's queue in created order", async () => {
    const { org, components } = await orgWithComponent(t.db, { components: 2 });
    const runner = await testRunner(t.db, org);
    const [a, b] = components;
    const a1 = await createJob(t.db, org.actor(), { componentId: a.id, operation: "refresh" });
    const a2 = await createJob(t.db, org.actor(), { componentId: a.id, operation: "refresh" });
    const b1 = await createJob(t.db, org.actor(), { componentId: b.id, operation: "refresh" });
    const [x, y, z] = await Promise.all([claim(t.db, runner), claim(t.db, runner), claim(t.db, runner)]);
    expect([x, y, z].filter(Boolean).map((c) => c!.claim.job.id).sort()).toEqual([a1.id, b1.id].sort());
    const first = [x, y, z].find((c) => c?.claim.job.id === a1.id)!;
    await runStep(t.db, first, "init");
    expect(await runStep(t.db, first, "refresh")).toMatchObject({ next: "stop" });
    expect((await getJob(t.db, org.orgId, a1.id))).toMatchObject({ status: "completed", result: "succeeded" });
    expect((await claim(t.db, runner))!.claim.job.id).toBe(a2.id);
  });

  it("long-polls: a claim waiting for work is woken by the job's NOTIFY", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const runner = await testRunner(t.db, org);
    // No re-check within the wait: only the NOTIFY of the new job can wake the claim.
    let idle!: () => void;
    const isIdle = new Promise<void>((r) => (idle = r));
    const waiting = claimJobWaiting(t, runner, { waitSeconds: 60, recheckMs: 60_000, onIdle: () => idle() });
    await isIdle;
    const job = await createJob(t.db, org.actor(), { componentId: component.id });
    const c = await waiting;
    expect(c?.job.id).toBe(job.id);
    expect(await claimJobWaiting(t, runner, { waitSeconds: 1 })).toBeNull();
  });

  it("authenticates runners by their rnr_ token, stored only as a hash", async () => {
    const { org } = await orgWithComponent(t.db);
    const { runner, token } = await registerRunner(t.db, org.actor(), { name: "mine" });
    expect(token).toMatch(/^rnr_/);
    expect((await authenticateRunner(t.db, token)).id).toBe(runner.id);
    await expect(authenticateRunner(t.db, "rnr_nope")).rejects.toThrow(/this runner token is not known/);
  });
});

describe("job credentials", () => {
  it("are scoped to their job, refused for another job's routes, and expire", async () => {
    const { org, components } = await orgWithComponent(t.db, { components: 2 });
    const runner = await testRunner(t.db, org);
    const j1 = await createJob(t.db, org.actor(), { componentId: components[0].id });
    const j2 = await createJob(t.db, org.actor(), { componentId: components[1].id });
    const c = await claimJob(t.db, runner);
    const other = c!.job.id === j1.id ? j2.id : j1.id;
    expect(c!.credential.token).toMatch(/^jcr_/);
    expect(new Date(c!.credential.expiresAt).getTime() - Date.now()).toBeLessThanOrEqual(3600_000);
    const err = await jobAccess(t.db, c!.credential.token, other).catch((e) => e);
    expect(err).toBeInstanceOf(PlantonError);
    expect(err.code).toBe("FORBIDDEN");
    const expired = await issueJobCredential({ jobId: c!.job.id, orgId: org.orgId, attemptId: c!.attemptId, runnerTokenHash: runner.tokenHash }, -10);
    await expect(verifyJobCredential(expired.token, c!.job.id)).rejects.toThrow(/expired/);
    await expect(verifyJobCredential("jcr_forged.token.x", c!.job.id)).rejects.toThrow(/not valid/);
  });

  it("once verified, are taken as verified only by their exact text and only until they expire", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const runner = await testRunner(t.db, org);
    const job = await createJob(t.db, org.actor(), { componentId: component.id });
    const short = await issueJobCredential({ jobId: job.id, orgId: org.orgId, attemptId: "run_x", runnerTokenHash: runner.tokenHash }, 2);
    expect((await verifyJobCredential(short.token, job.id)).attemptId).toBe("run_x");
    // The same claims under another signature: not the verified text, so verified (and refused).
    const [head, body, sig] = short.token.split(".");
    const other = `${head}.${body}.${sig.slice(0, -2)}${sig.endsWith("AA") ? "BA" : "AA"}`;
    await expect(verifyJobCredential(other, job.id)).rejects.toThrow(/not valid/);
    // Verified before, it is still refused once its time is up.
    vi.useFakeTimers({ now: Date.now() + 3_000, toFake: ["Date"] });
    try {
      await expect(verifyJobCredential(short.token, job.id)).rejects.toThrow(/expired/);
    } finally {
      vi.useRealTimers();
    }
    // And for another job, verified or not.
    await expect(verifyJobCredential(short.token, "job_other")).rejects.toThrow(/not job_other|is for job/);
  });
});

describe("running a job through the runner API services", () => {
  it("heartbeats extend the lease and answer cancel; a cancelled running job finishes its in-flight step and cancels the rest", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const runner = await testRunner(t.db, org);
    const job = await createJob(t.db, org.actor(), { componentId: component.id, operation: "update" });
    const c = (await claim(t.db, runner))!;
    expect(c.claim.input.steps).toEqual(["init", "refresh", "preview", "apply"]);
    expect((await heartbeat(t.db, c.access, { attemptId: c.claim.attemptId })).signal).toBe("none");
    await runStep(t.db, c, "init");
    await startStep(t.db, c.access, "refresh", { attemptId: c.claim.attemptId });
    await cancelJob(t.db, org.actor(), { jobId: job.id });
    expect((await heartbeat(t.db, c.access, { attemptId: c.claim.attemptId })).signal).toBe("cancel");
    expect((await getJob(t.db, org.orgId, job.id)).status).toBe("running");
    const { finishStep } = await import("./steps");
    expect(await finishStep(t.db, c.access, "refresh", { attemptId: c.claim.attemptId, result: "succeeded" })).toEqual({ next: "stop" });
    expect(await getJob(t.db, org.orgId, job.id)).toMatchObject({ status: "completed", result: "cancelled" });
    expect(await steps(job.id)).toEqual([
      "init:succeeded",
      "refresh:succeeded",
      `preview:cancelled (cancelled by ${org.users.admin.email})`,
      `apply:cancelled (cancelled by ${org.users.admin.email})`,
    ]);
    await endAttempt(t.db, c.access, { attemptId: c.claim.attemptId, exitCode: 0 });
  });

  it("a runner lost right after its claim, before it started any step, leaves the job queued for another runner", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const runner = await testRunner(t.db, org);
    const job = await createJob(t.db, org.actor(), { componentId: component.id, operation: "update" });
    const first = (await claim(t.db, runner))!;
    await t.db.update(infraJobs).set({ leaseExpiresAt: new Date(Date.now() - 1000) }).where(eq(infraJobs.id, job.id));
    expect(await expireLeases(t.db)).toContain(job.id);
    expect(await getJob(t.db, org.orgId, job.id)).toMatchObject({ status: "queued", result: "tbd", currentAttemptId: null });
    const [ended] = await t.db.select().from(runnerAttempts).where(eq(runnerAttempts.id, first.claim.attemptId));
    expect(ended.reason).toBe("runner lost before it started any step; the job was queued again");
    const second = (await claim(t.db, runner))!;
    expect(second.claim.job.id).toBe(job.id);
    expect(second.claim.input.steps).toEqual(["init", "refresh", "preview", "apply"]);
    await expect(runStep(t.db, first, "init")).rejects.toThrow();
    expect((await runStep(t.db, second, "init")).proceed).toBe(true);
  });

  it("a gated apply cannot be started without an approval of the reviewed plan, whatever the runner sends", async () => {
    const { org, component } = await orgWithComponent(t.db, { policy: { pauseBeforeApply: true, previewBeforeApply: false } });
    const runner = await testRunner(t.db, org);
    const job = await createJob(t.db, org.actor(), { componentId: component.id, operation: "update" });
    const c = (await claim(t.db, runner))!;
    expect(c.claim.input.steps).toEqual(["init", "refresh", "preview", "apply"]);
    // A runner that skips the preview is refused: the next step is preview, not apply.
    await runStep(t.db, c, "init");
    await runStep(t.db, c, "refresh");
    await expect(startStep(t.db, c.access, "apply", { attemptId: c.claim.attemptId })).rejects.toThrow(/the next step of job .* is preview, not apply/);
    // Even a job put back to running by hand (a bug, a bad migration) cannot reach apply without the approval.
    await runStep(t.db, c, "preview", "succeeded", { plan: { artifactId: "art_x", sha256: "a".repeat(64), summary: {} } });
    expect((await getJob(t.db, org.orgId, job.id)).status).toBe("awaiting_approval");
    await t.db.update(infraJobs).set({ status: "running" }).where(eq(infraJobs.id, job.id));
    const refused = await startStep(t.db, c.access, "apply", { attemptId: c.claim.attemptId }).catch((e) => e);
    expect(refused).toBeInstanceOf(PlantonError);
    expect(refused.message).toBe(`Nothing was started: apply of job ${job.id} needs an approval of its reviewed plan first (flow control pauses before apply). Approve the job in the console or with planton infra job resume ${job.id}.`);
    expect(await steps(job.id)).toContain("apply:tbd");
  });

  it("a failed step fails the job and skips the rest; ending an attempt early fails what it left running", async () => {
    const { org, components } = await orgWithComponent(t.db, { components: 2 });
    const runner = await testRunner(t.db, org);
    const j1 = await createJob(t.db, org.actor(), { componentId: components[0].id });
    const c1 = (await claim(t.db, runner))!;
    await runStep(t.db, c1, "init");
    expect(await runStep(t.db, c1, "refresh", "failed", { reason: "provider local: root /nope does not exist" })).toMatchObject({ next: "stop" });
    expect(await getJob(t.db, org.orgId, j1.id)).toMatchObject({ status: "completed", result: "failed", reason: "refresh failed: provider local: root /nope does not exist" });
    expect(await steps(j1.id)).toEqual(["init:succeeded", "refresh:failed (provider local: root /nope does not exist)", "preview:skipped (refresh failed)"]);

    const j2 = await createJob(t.db, org.actor(), { componentId: components[1].id });
    const c2 = (await claim(t.db, runner))!;
    await startStep(t.db, c2.access, "init", { attemptId: c2.claim.attemptId });
    await endAttempt(t.db, c2.access, { attemptId: c2.claim.attemptId, exitCode: 137, reason: "killed" });
    expect(await getJob(t.db, org.orgId, j2.id)).toMatchObject({ status: "completed", result: "failed", reason: "killed" });
    await expect(jobAccess(t.db, c2.claim.credential.token, j2.id)).rejects.toThrow(/has ended \(killed\)/);
  });

  it("a lapsed lease is 'runner lost': the step fails with it, the lock is released, the component's next job is claimable", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const runner = await testRunner(t.db, org);
    const lost = await createJob(t.db, org.actor(), { componentId: component.id, operation: "update" });
    const next = await createJob(t.db, org.actor(), { componentId: component.id, operation: "refresh" });
    const c = (await claim(t.db, runner))!;
    await runStep(t.db, c, "init");
    await runStep(t.db, c, "refresh");
    await startStep(t.db, c.access, "preview", { attemptId: c.claim.attemptId });
    expect(await lockState(t.db, c.access, { ID: "lock-1", Operation: "OperationTypeApply", Who: "runner@host" })).toMatchObject({ ok: true });
    expect(await claim(t.db, runner)).toBeNull();

    // Other tests' jobs in this database may lapse too on a slow machine: only this job's lease is asserted.
    expect(await expireLeases(t.db)).not.toContain(lost.id);
    await t.db.update(infraJobs).set({ leaseExpiresAt: new Date(Date.now() - 1000) }).where(eq(infraJobs.id, lost.id));
    expect(await expireLeases(t.db)).toContain(lost.id);
    const view = await getJob(t.db, org.orgId, lost.id);
    expect(view).toMatchObject({ status: "completed", result: "failed", reason: "runner lost" });
    expect(view.attempts[0]).toMatchObject({ reason: "runner lost" });
    expect(view.attempts[0].endedAt).not.toBeNull();
    expect(await steps(lost.id)).toEqual(["init:succeeded", "refresh:succeeded", "preview:failed (runner lost)", "apply:skipped (preview failed)"]);
    const [st] = await t.db.select().from(stateObjects).where(eq(stateObjects.componentId, component.id));
    expect(st).toMatchObject({ lockInfo: null, lockedByJob: null });
    expect((await claim(t.db, runner))!.claim.job.id).toBe(next.id);
    // The lost runner's credential no longer works.
    await expect(jobAccess(t.db, c.claim.credential.token, lost.id)).rejects.toThrow(/runner lost/);
  });
});

describe("Planton-managed state, artifacts, secrets and outputs", () => {
  it("locks state as OpenTofu does: a second locker gets 409 'Error acquiring the state lock' with the holder", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const runner = await testRunner(t.db, org);
    const j1 = await createJob(t.db, org.actor(), { componentId: component.id });
    const c1 = (await claim(t.db, runner))!;
    const held = await lockState(t.db, c1.access, { ID: "11111111-2222-3333-4444-555555555555", Operation: "OperationTypeApply", Who: "ada@runner-1", Version: "builtin 0.1.0", Path: "" });
    expect(held.ok).toBe(true);
    // Another job of the component (forced running for the test) is refused with the holder named.
    const j2 = await createJob(t.db, org.actor(), { componentId: component.id });
    const attemptId = "run_test_other";
    await t.db.insert(runnerAttempts).values({ id: attemptId, jobId: j2.id, runnerId: runner.id, credentialId: "jcr_x" });
    await t.db.update(infraJobs).set({ status: "running", runnerId: runner.id, currentAttemptId: attemptId }).where(eq(infraJobs.id, j2.id));
    const cred = await issueJobCredential({ jobId: j2.id, orgId: org.orgId, attemptId, runnerTokenHash: runner.tokenHash });
    const a2 = await jobAccess(t.db, cred.token, j2.id);
    const refused = await lockState(t.db, a2, { ID: "other", Operation: "OperationTypePlan" });
    expect(refused.ok).toBe(false);
    if (!refused.ok) {
      expect(refused.message.startsWith("Error acquiring the state lock\n\nError message: state is locked\nLock Info:\n  ID:        11111111-2222-3333-4444-555555555555\n")).toBe(true);
      expect(refused.message).toContain("  Who:       ada@runner-1\n");
      expect(refused.lock.Path).toBe(`planton-managed/${org.orgId}/${component.id}/terraform.tfstate`);
    }
    expect(await getState(t.db, c1.access)).toBeNull();
    const state = { version: 4, serial: 1, lineage: "lin-1", terraform_version: "x", outputs: {}, resources: [] };
    await expect(putState(t.db, c1.access, "wrong", state)).rejects.toThrow(/Nothing was written/);
    await putState(t.db, c1.access, held.lock.ID, state);
    expect(await getState(t.db, c1.access)).toEqual(state);
    await expect(putState(t.db, c1.access, held.lock.ID, { ...state, serial: 0 })).rejects.toThrow(/its serial 0 is older than the stored state's/);
    await expect(unlockState(t.db, c1.access, "nope")).rejects.toThrow(/does not match the existing lock ID/);
    await unlockState(t.db, c1.access, held.lock.ID);
    expect((await lockState(t.db, a2, { ID: "other", Operation: "OperationTypePlan" })).ok).toBe(true);
    expect(j1.id).toBeTruthy();
  });

  it("refuses Planton-managed state to a self-hosted runner, even when a job reached one (preflight refuses that route first)", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const runner = await testRunner(t.db, org, "own", false);
    const job = await createJob(t.db, org.actor(), { componentId: component.id });
    // Routed by hand past preflight: the runner API's own guard is the one under test.
    await t.db.update(infraJobs).set({ routeRunnerId: runner.id, routeRule: "default" }).where(eq(infraJobs.id, job.id));
    const c = (await claim(t.db, runner))!;
    await expect(lockState(t.db, c.access, { Operation: "OperationTypeApply" })).rejects.toThrow(/available only to Planton-hosted runners/);
  });

  it("checks an artifact's Digest on upload and sends it on download", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const runner = await testRunner(t.db, org);
    await createJob(t.db, org.actor(), { componentId: component.id });
    const c = (await claim(t.db, runner))!;
    const bytes = new TextEncoder().encode('{"plan":1}');
    const b64 = createHash("sha256").update(bytes).digest("base64");
    await expect(uploadArtifact(t.db, c.access, { kind: "plan", name: "tfplan", digest: "sha-256=AAAA", bytes })).rejects.toThrow(/the upload was damaged/);
    await expect(uploadArtifact(t.db, c.access, { kind: "plan", name: "tfplan", digest: null, bytes })).rejects.toThrow(/Digest: sha-256/);
    const up = await uploadArtifact(t.db, c.access, { kind: "plan", name: "tfplan", digest: `sha-256=${b64}`, bytes });
    expect(up.sha256).toBe(createHash("sha256").update(bytes).digest("hex"));
    const down = await downloadArtifact(t.db, c.claim.job.id, up.artifactId);
    expect(down.digest).toBe(`sha-256=${b64}`);
    expect(Buffer.from(down.bytes).toString()).toBe('{"plan":1}');
  });

  it("keeps an executable plan encrypted at rest and refuses it to people, pointing at the review rendition", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const runner = await testRunner(t.db, org);
    const job = await createJob(t.db, org.actor(), { componentId: component.id });
    const c = (await claim(t.db, runner))!;
    const upload = async (kind: string, text: string) => {
      const bytes = new TextEncoder().encode(text);
      return uploadArtifact(t.db, c.access, { kind, name: "plan.json", digest: `sha-256=${createHash("sha256").update(bytes).digest("base64")}`, bytes });
    };
    const plan = await upload("plan", '{"variables":{"password":{"value":"hunter2-the-real-one"}}}');
    const review = await upload("plan_review", '{"variables":{"password":{"value":"(sensitive value)"}}}');
    const [row] = await t.db.select().from(artifacts).where(eq(artifacts.id, plan.artifactId));
    expect(row.encrypted).toBe(true);
    expect(Buffer.from(row.content, "base64").toString()).not.toContain("hunter2");
    expect(row.sha256).toBe(plan.sha256);
    expect(Buffer.from((await downloadArtifact(t.db, job.id, plan.artifactId)).bytes).toString()).toContain("hunter2-the-real-one");
    const refused = await downloadArtifactForViewer(t.db, job.id, plan.artifactId).catch((e) => e);
    expect(refused).toMatchObject({ code: "FORBIDDEN" });
    expect(refused.message).toBe(
      `Nothing was sent: artifact ${plan.artifactId} is job ${job.id}'s executable plan, which holds secret values, so it is kept encrypted and only the job's runner reads it. Download its review rendition (artifact ${review.artifactId}, sensitive values masked), or run planton infra job plan ${job.id}.`,
    );
    expect(Buffer.from((await downloadArtifactForViewer(t.db, job.id, review.artifactId)).bytes).toString()).toContain("(sensitive value)");
  });

  it("keeps sensitive outputs in the secret store as $secret references named for the environment, and reads only secrets the job references", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const runner = await testRunner(t.db, org);
    const job = await createJob(t.db, org.actor(), { componentId: component.id });
    const c = (await claim(t.db, runner))!;
    const out = await saveOutputs(t.db, c.access, { attemptId: c.claim.attemptId, outputs: { url: { value: "file:///x", sensitive: false }, password: { value: "s3cret", sensitive: true } } });
    expect(out.outputs).toEqual({ url: { value: "file:///x", sensitive: false }, password: { value: "$secret/DEV__SITE_0__PASSWORD", sensitive: true } });
    const [row] = await t.db.select().from(secrets).where(eq(secrets.name, "DEV__SITE_0__PASSWORD"));
    expect(decryptSecret(row.valueEncrypted)).toBe("s3cret");
    expect(row).toMatchObject({ scope: "environment", componentId: component.id });
    const dev = await environmentByName(t.db, org.orgId, "dev");
    expect(await t.db.select().from(secretEnvironments).where(eq(secretEnvironments.secretId, row.id))).toEqual([{ secretId: row.id, environmentId: dev.id }]);
    expect((await getJob(t.db, org.orgId, job.id)).outputs).toEqual(out.outputs);
    await expect(readJobSecret(t.db, c.access, "DEV__SITE_0__PASSWORD")).rejects.toThrow(/does not reference the secret DEV__SITE_0__PASSWORD/);
    // A job whose input references the secret may read it.
    await t.db.update(infraJobs).set({ iacInput: { ...(await storedInput(job.id)), variables: { db_password: "$secret/DEV__SITE_0__PASSWORD" } } }).where(eq(infraJobs.id, job.id));
    expect(await readJobSecret(t.db, c.access, "DEV__SITE_0__PASSWORD")).toEqual({ value: "s3cret" });
  });

  it("a runner reads a secret only where its scope allows the job's environment", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const runner = await testRunner(t.db, org);
    await createSecret(t.db, org.actor(), { name: "PROD_ONLY", value: "prod-only-value", scope: "environment", environments: ["prod"] });
    const job = await createJob(t.db, org.actor(), { componentId: component.id });
    const c = (await claim(t.db, runner))!;
    // The spec was changed after preflight: the runner's read still asks the same question.
    await t.db.update(infraJobs).set({ iacInput: { ...(await storedInput(job.id)), variables: { token: "$secret/PROD_ONLY", other: "$secret/NOT_THERE" } } }).where(eq(infraJobs.id, job.id));
    const refused = await readJobSecret(t.db, c.access, "PROD_ONLY").catch((e) => e);
    expect(refused).toMatchObject({ code: "FORBIDDEN" });
    expect(refused.message).toBe(
      "Nothing ran: environment dev may not use the secret PROD_ONLY. Allow it in Settings → Secrets & Variables (scope: environments dev, or the organization), then run the job again.",
    );
    expect(await readJobSecret(t.db, c.access, "NOT_THERE").catch((e) => e)).toMatchObject({ code: "NOT_FOUND", message: expect.stringContaining("the secret NOT_THERE, which does not exist") });
  });

  it("two components of one name in two environments keep distinct generated secrets", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const runner = await testRunner(t.db, org);
    const twin = await draftComponent(t.db, org.actor(), { environment: "prod", kind: "StaticSite", name: component.name, spec: { site_name: "twin" }, connection: "local-sandbox" });
    const saved: string[] = [];
    for (const [comp, value] of [[component, "dev-password"], [twin, "prod-password"]] as const) {
      await createJob(t.db, org.actor(), { componentId: comp.id });
      const c = (await claim(t.db, runner))!;
      const out = await saveOutputs(t.db, c.access, { attemptId: c.claim.attemptId, outputs: { password: { value, sensitive: true } } });
      saved.push(out.outputs.password.value as string);
      await endAttempt(t.db, c.access, { attemptId: c.claim.attemptId, exitCode: 0 });
    }
    expect(saved).toEqual(["$secret/DEV__SITE_0__PASSWORD", "$secret/PROD__SITE_0__PASSWORD"]);
    const rows = await t.db.select().from(secrets).where(eq(secrets.orgId, org.orgId));
    expect(Object.fromEntries(rows.map((r) => [r.name, decryptSecret(r.valueEncrypted)]))).toEqual({ DEV__SITE_0__PASSWORD: "dev-password", PROD__SITE_0__PASSWORD: "prod-password" });
  });

  it("refuses an output value the database cannot store, saying which and why, and stores nothing", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const runner = await testRunner(t.db, org);
    const job = await createJob(t.db, org.actor(), { componentId: component.id });
    const c = (await claim(t.db, runner))!;
    const refused = await saveOutputs(t.db, c.access, { attemptId: c.claim.attemptId, outputs: { password: { value: "ab\u0000cd", sensitive: true } } }).catch((e) => e);
    expect(refused).toMatchObject({ code: "BAD_REQUEST" });
    expect(refused.message).toBe(
      "Nothing was stored: the sensitive output password cannot be kept, because it contains a NUL byte (\\0). Change the module so the output holds text without it, then run the job again.",
    );
    expect(await t.db.select().from(secrets).where(eq(secrets.orgId, org.orgId))).toEqual([]);
    expect((await getJob(t.db, org.orgId, job.id)).outputs).toBeNull();
  });
});
