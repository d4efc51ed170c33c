// Where a job runs: the runner its connection names, else the organization's default runner, else a
// Planton-hosted runner; the job records the rule, the claim hands it only to that runner, and
// preflight refuses the routes that cannot work (Planton-managed state on a runner of the
// organization's own, a runner-mode connection on a hosted runner, an engine the runner lacks).
// The default-runner refusal and revoking a runner with jobs routed to it.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { auditEvents, connections, infraJobs, runners } from "@/db/schema";
import { routeSentence } from "@/lib/runner-routing";
import { storedStateOf } from "@/state-backends/rules";
import { claim, orgWithComponent, testRunner } from "../../../test/job-helpers";
import type { TestOrg } from "../../../test/fixtures";
import { draftComponent } from "../../../test/components";
import { createJob } from "../jobs/create-job";
import { getJob } from "../jobs/queries";
import { createConnection, setConnectionAuthorizations, updateConnection } from "../settings/connections";
import { createStateBackend, setDefaultStateBackend } from "../state-backends/backends";
import { plantonManagedKey, PlantonManagedStore, plantonStateBytes } from "../state-backends/planton-managed-store";
import { claimJob } from "./claim";
import { getDefaultRunner, ownRunner, registerOwnRunner, revokeOwnRunner, setDefaultRunner, unsetDefaultRunner } from "./manage";

let t: TestDatabase;
let dir: string;
beforeAll(async () => {
  t = await createTestDatabase();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "planton-routing-"));
});
afterAll(async () => {
  await t.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const refusal = (p: Promise<unknown>) => p.then(() => null, (e: Error) => e.message);
const runnerCheckOf = (job: { preflight: unknown }) => (job.preflight as { checks: { essential: string; passed: boolean; resolvedTo: string | null; errors: string[] }[] }).checks.find((c) => c.essential === "runner")!;

/** An organization whose builtin states go to a local directory of its own, with a runner of its own and a hosted one. */
async function routedOrg(name: string) {
  const { org, component } = await orgWithComponent(t.db);
  await createStateBackend(t.db, org.actor(), { name: "own-states", kind: "local", config: { path: path.join(dir, name) } });
  await setDefaultStateBackend(t.db, org.actor(), { provisioner: "builtin", backend: "own-states" });
  const { runner: own } = await registerOwnRunner(t.db, org.actor(), { name: "prod-runner" });
  const ownRow = await ownRunner(t.db, org.actor(), own.name);
  const hosted = await testRunner(t.db, org, "hosted-1");
  return { org, component, own: ownRow, hosted };
}

async function nameRunnerOnConnection(org: TestOrg, runnerId: string | null, mode: "stored" | "runner" = "stored") {
  const [c] = await t.db.select().from(connections).where(eq(connections.id, org.connectionId));
  await updateConnection(t.db, org.actor(), { id: c.id, name: c.name, provider: c.provider, config: c.config as Record<string, string>, mode, runnerId });
}

describe("routing a job", () => {
  it("runs on the runner its connection names, and only there; the job says which rule chose it", async () => {
    const { org, component, own, hosted } = await routedOrg("by-connection");
    await nameRunnerOnConnection(org, own.id);
    const job = await createJob(t.db, org.actor(), { componentId: component.id });
    expect(job.status).toBe("queued");
    expect(runnerCheckOf(job)).toMatchObject({ passed: true, resolvedTo: "prod-runner: named by connection local-sandbox" });
    expect((await getJob(t.db, org.orgId, job.id)).route).toEqual({ rule: "connection", runner: "prod-runner", connection: "local-sandbox", sentence: "on prod-runner: named by connection local-sandbox" });
    expect(await claim(t.db, hosted)).toBeNull();
    const c = await claim(t.db, own);
    expect(c?.claim.job.id).toBe(job.id);
  });

  it("runs on the organization's default runner when the connection names none, and on a Planton-hosted runner when neither does", async () => {
    const { org, component, own, hosted } = await routedOrg("by-default");
    expect(await setDefaultRunner(t.db, org.actor(), { runner: "prod-runner" })).toEqual({
      runner: "prod-runner",
      description: "Deploys and live cloud operations of connections that name no runner run on prod-runner.",
    });
    const onDefault = await createJob(t.db, org.actor(), { componentId: component.id });
    expect((await getJob(t.db, org.orgId, onDefault.id)).route?.sentence).toBe("on prod-runner: the organization's default runner");
    expect(await claim(t.db, hosted)).toBeNull();
    expect((await claim(t.db, own))?.claim.job.id).toBe(onDefault.id);

    await unsetDefaultRunner(t.db, org.actor());
    expect((await getDefaultRunner(t.db, org.actor())).runner).toBeNull();
    const other = await draftComponent(t.db, org.actor(), { environment: "dev", kind: "StaticSite", name: "elsewhere", spec: { site_name: "elsewhere" }, connection: "local-sandbox" });
    const onHosted = await createJob(t.db, org.actor(), { componentId: other.id });
    expect((await getJob(t.db, org.orgId, onHosted.id)).route).toMatchObject({ rule: "hosted", runner: null, sentence: routeSentence({ rule: "hosted", runner: null, connection: null }) });
    expect(await claim(t.db, own)).toBeNull();
    expect((await claim(t.db, hosted))?.claim.job.id).toBe(onHosted.id);
  });

  it("fails preflight when Planton-managed state would go to a runner of the organization's own, naming the component and the command that moves its state", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const { runner } = await registerOwnRunner(t.db, org.actor(), { name: "own-runner" });
    await nameRunnerOnConnection(org, runner.id);
    const job = await createJob(t.db, org.actor(), { componentId: component.id });
    expect(job).toMatchObject({ status: "completed", result: "failed" });
    expect(job.reason).toBe(
      `Component site-0's state is on Planton-managed storage, which only Planton-hosted runners can reach, and this job would run on runner own-runner (named by connection local-sandbox). Move its state to a backend of your own first (planton tofu state migrate-backend ${component.id} --to <backend>, or every state at once: planton infra state-backend move-off-planton --to <backend>), then run the job again.`,
    );
    expect(runnerCheckOf(job).passed).toBe(false);
  });

  it("fails preflight when a runner-mode connection would run on a Planton-hosted runner, naming the runner's variables", async () => {
    const { org } = await orgWithComponent(t.db);
    const { runner } = await registerOwnRunner(t.db, org.actor(), { name: "cloud-runner" });
    await createConnection(t.db, org.actor(), { name: "aws-own", provider: "aws", config: { region: "eu-west-1" }, mode: "runner", runnerId: runner.id });
    const [aws] = await t.db.select().from(connections).where(eq(connections.name, "aws-own"));
    await setConnectionAuthorizations(t.db, org.actor(), { id: aws.id, organization: true });
    const bucket = await draftComponent(t.db, org.actor(), { environment: "dev", kind: "AwsS3Bucket", name: "logs", spec: { bucket_name: "logs" }, connection: "aws-own" });
    // The runner is named, then cleared: its work returns to a Planton-hosted runner, which has none of the runner's credentials.
    await t.db.update(connections).set({ runnerId: null }).where(eq(connections.id, aws.id));
    const job = await createJob(t.db, org.actor(), { componentId: bucket.id });
    const check = runnerCheckOf(job);
    expect(check.passed).toBe(false);
    expect(check.errors).toContainEqual(expect.stringMatching(/^Connection aws-own is in runner mode: its credentials come from the environment of a runner of the organization's own \(AWS_ACCESS_KEY_ID, .*\), and this job would run on a Planton-hosted runner/));
  });

  it("hands a job only to a runner that has its module's engine, and preflight says when the runner lacks it", async () => {
    const { org, component, own } = await routedOrg("engines");
    await nameRunnerOnConnection(org, own.id);
    const job = await createJob(t.db, org.actor(), { componentId: component.id });
    // The job's module as if it needed OpenTofu: a runner that reported only the builtin engine leaves it.
    const [row] = await t.db.select().from(infraJobs).where(eq(infraJobs.id, job.id));
    await t.db.update(infraJobs).set({ iacInput: { ...row.iacInput!, module: { ...row.iacInput!.module, provisioner: "tofu" } } }).where(eq(infraJobs.id, job.id));
    expect(await claimJob(t.db, own, { version: "1.0.0", engines: { builtin: "0.9.0" } })).toBeNull();
    const claimed = await claimJob(t.db, own, { version: "1.0.0", engines: { builtin: "0.9.0", tofu: "1.9.0" } });
    expect(claimed?.job.id).toBe(job.id);
    const [after] = await t.db.select().from(runners).where(eq(runners.id, own.id));
    expect(after).toMatchObject({ version: "1.0.0", engines: { builtin: "0.9.0", tofu: "1.9.0" } });
  });
});

describe("the default runner", () => {
  it("is refused while any state is on Planton-managed storage, listing what is left by environment and the command that moves it", async () => {
    const { org, component } = await orgWithComponent(t.db);
    await registerOwnRunner(t.db, org.actor(), { name: "prod-runner" });
    const store = new PlantonManagedStore(t.db, org.orgId, "test");
    const doc = { version: 4, terraform_version: "1.9.0", serial: 1, lineage: "l-1", outputs: {}, resources: [], check_results: null };
    await store.write(plantonManagedKey(org.orgId, component.id), storedStateOf(plantonStateBytes(doc)));
    expect(await refusal(setDefaultRunner(t.db, org.actor(), { runner: "prod-runner" }))).toBe(
      "Nothing was changed: prod-runner cannot be the default runner while 1 state is on Planton-managed storage (dev: site-0), which only Planton-hosted runners can reach. Move it off first: planton infra state-backend move-off-planton --to <backend> (or Settings → State Backends → Move off Planton-managed storage), then set the default again.",
    );
    expect(await getDefaultRunner(t.db, org.actor())).toEqual({ runner: null, description: "Deploys and live cloud operations of connections that name no runner run on a Planton-hosted runner." });
    expect(await refusal(setDefaultRunner(t.db, org.actor(), { runner: "no-such-runner" }))).toMatch(/^Runner no-such-runner was not found/);
  });
});

describe("revoking a runner with jobs routed to it", () => {
  it("cancels the jobs waiting for it, saying why, so none waits forever", async () => {
    const { org, component, own, hosted } = await routedOrg("revoked");
    await setDefaultRunner(t.db, org.actor(), { runner: own.name });
    const job = await createJob(t.db, org.actor(), { componentId: component.id });
    const { cancelledJobs } = await revokeOwnRunnerWithJobs(org, own.name);
    expect(cancelledJobs).toEqual([job.id]);
    const after = await getJob(t.db, org.orgId, job.id);
    expect(after).toMatchObject({ status: "completed", result: "cancelled" });
    expect(after.reason).toBe(`Cancelled: runner prod-runner, where this job was routed, was revoked by ${org.actor().label} while the job was queued; nothing more ran. Run it again (planton infra job rerun) to route it anew.`);
    expect(await claim(t.db, hosted)).toBeNull();
    // Revoking cleared the default: the next job goes to a Planton-hosted runner.
    const next = await createJob(t.db, org.actor(), { componentId: component.id });
    expect((await getJob(t.db, org.orgId, next.id)).route?.rule).toBe("hosted");
  });
});

async function revokeOwnRunnerWithJobs(org: TestOrg, name: string) {
  await revokeOwnRunner(t.db, org.actor(), { runner: name });
  const [audit] = await t.db.select().from(auditEvents).where(and(eq(auditEvents.orgId, org.orgId), eq(auditEvents.action, "runner.revoke")));
  return { cancelledJobs: (audit.changes as { cancelledJobs: string[] }).cancelledJobs };
}
