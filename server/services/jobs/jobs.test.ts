import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, count, eq, sql } from "drizzle-orm";
import { createTestDatabase, testDriver, type TestDatabase } from "../../../test/database";
import { rowsOf } from "@/db/client";
import { heldOpen, lockWaiters } from "../../../test/races";
import { seedTestOrg } from "../../../test/fixtures";
import { approvals, connections, infraComponents, infraJobs, jobOperations, stateBackendDefaults, stateBackends } from "@/db/schema";
import { newId } from "@/lib/ids";
import { encryptSecret } from "../../crypto";
import { PlantonError } from "../../errors";
import { draftComponent } from "../../../test/components";
import { cancelJob } from "./cancel-job";
import { createJob } from "./create-job";
import { appendEvents, appendRunnerEvents, readEventsAfter } from "./events";
import { streamJobEvents } from "./event-feed";
import { bundleSha256 } from "@/lib/module-bundle";
import { preflightForKind, unauthorizedConnectionMessage } from "./preflight";
import { getIacInput, getJob, listJobs } from "./queries";
import { rerunJob } from "./rerun-job";
import { resumeJob } from "./resume-job";
import { createVariable } from "../settings/secrets";
import { claim, orgWithComponent, runStep, testRunner } from "../../../test/job-helpers";
import { lockLiveJob } from "../runners/job-access";
import { connectionAuthorizations } from "@/db/schema";

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t.close());

const stepsOf = async (jobId: string) =>
  (await t.db.select().from(jobOperations).where(eq(jobOperations.jobId, jobId)).orderBy(jobOperations.ordinal)).map((s) => `${s.step}:${s.status}/${s.result}`);

describe("creating an Infra Job", () => {
  it("queues a preview with its steps and keeps the IaC input with the module bundle's SHA-256", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const job = await createJob(t.db, org.actor("engineer"), { componentId: component.id });
    expect(job).toMatchObject({ operation: "preview", status: "queued", result: "tbd", createdByLabel: org.users.engineer.email });
    expect(await stepsOf(job.id)).toEqual(["init:queued/tbd", "refresh:queued/tbd", "preview:queued/tbd"]);
    const input = (await getIacInput(t.db, org.orgId, job.id)) as { module: { files: Record<string, string>; sha256: string }; variables: unknown; backend: { kind: string }; steps: string[] };
    expect(Object.keys(input.module.files)).toEqual(expect.arrayContaining(["main.tf", "variables.tf", "outputs.tf"]));
    expect(input.module.sha256).toBe(bundleSha256(input.module.files));
    expect(input.variables).toEqual({ site_name: "site-0", title: "Hello from Planton", page_count: 2 });
    expect(input.backend.kind).toBe("planton_managed");
    expect(input.steps).toEqual(["init", "refresh", "preview"]);
    expect((await getJob(t.db, org.orgId, job.id)).preflight).toMatchObject({ passed: true });
  });

  it("the IaC input answers an address saved with credentials in it (before that was refused) with *** in their place; the job keeps what it ran with", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const job = await createJob(t.db, org.actor("engineer"), { componentId: component.id });
    const [row] = await t.db.select({ input: infraJobs.iacInput }).from(infraJobs).where(eq(infraJobs.id, job.id));
    const legacy = {
      ...row.input!,
      connection: { name: "pulumi-legacy", provider: "pulumi_cloud", mode: "stored", config: { api_url: "https://me:legacy-pul-token@api.pulumi.com" } },
      backend: { ...row.input!.backend, kind: "s3", config: { bucket: "states", endpoint: "https://AKIAEXAMPLE:legacy-s3-secret@minio.example:9000" } },
    };
    await t.db.update(infraJobs).set({ iacInput: legacy as typeof row.input }).where(eq(infraJobs.id, job.id));
    const shown = (await getIacInput(t.db, org.orgId, job.id)) as unknown as typeof legacy;
    expect(shown.connection.config.api_url).toBe("https://***@api.pulumi.com");
    expect(shown.backend.config).toEqual({ bucket: "states", endpoint: "https://***@minio.example:9000" });
    expect(JSON.stringify(shown)).not.toMatch(/legacy-(pul-token|s3-secret)/);
    const [kept] = await t.db.select({ input: infraJobs.iacInput }).from(infraJobs).where(eq(infraJobs.id, job.id));
    expect(JSON.stringify(kept.input)).toContain("legacy-s3-secret");
  });

  it("refuses an unknown operation, naming the valid ones, and creates nothing", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const before = (await t.db.select({ n: count() }).from(infraJobs))[0].n;
    const err = await createJob(t.db, org.actor(), { componentId: component.id, operation: "apply" }).catch((e) => e);
    expect(err).toBeInstanceOf(PlantonError);
    expect(err.message).toBe('Unknown Operation "apply": use one of refresh, preview, update, destroy, destroy_preview, import. No job was created.');
    expect((await t.db.select({ n: count() }).from(infraJobs))[0].n).toBe(before);
  });

  it("refuses the unauthorized connection with the spec's message word for word; nothing runs", async () => {
    const org = await seedTestOrg(t.db);
    const connId = newId("connection");
    await t.db.insert(connections).values({ id: connId, orgId: org.orgId, name: "aws-prod", provider: "aws", config: { region: "us-east-1" }, credentialsEncrypted: encryptSecret("{}") });
    const c = await draftComponent(t.db, org.actor(), { environment: "staging", kind: "AwsS3Bucket", name: "bucket", spec: { bucket_name: "my-bucket" }, connection: "aws-prod" });
    const job = await createJob(t.db, org.actor(), { componentId: c.id, operation: "update" });
    const expected =
      "Nothing ran: environment staging may not use the aws connection aws-prod. Authorize it (planton connection auth create --provider aws --connection aws-prod --scope environment --environments staging), or make it the organization's (--scope organization), then run the job again.";
    expect(unauthorizedConnectionMessage("staging", "aws", "aws-prod")).toBe(expected);
    expect(job).toMatchObject({ status: "completed", result: "failed", reason: expected, iacInput: null });
    expect(await stepsOf(job.id)).toEqual(["init:completed/skipped", "refresh:completed/skipped", "preview:completed/skipped", "apply:completed/skipped"]);
    // Authorized for staging, the same job passes preflight.
    await t.db.insert(connectionAuthorizations).values({ id: newId("connectionAuthorization"), connectionId: connId, scope: "environment", environmentId: c.environmentId });
    expect((await createJob(t.db, org.actor(), { componentId: c.id })).status).toBe("queued");
  });

  it("fails preflight for each missing essential, naming it and the fix", async () => {
    const org = await seedTestOrg(t.db);
    const check = async (componentId: string, essential: string) => {
      const job = await createJob(t.db, org.actor(), { componentId });
      expect(job).toMatchObject({ status: "completed", result: "failed" });
      const report = job.preflight as { passed: boolean; checks: { essential: string; passed: boolean; errors: string[] }[] };
      const failed = report.checks.filter((c) => !c.passed);
      expect(failed.map((c) => c.essential)).toEqual([essential]);
      return failed[0].errors;
    };
    // Credentials: no connection on the component.
    const noConn = await draftComponent(t.db, org.actor(), { environment: "dev", kind: "StaticSite", name: "no-conn", spec: { site_name: "xx" } });
    expect(await check(noConn.id, "credentials")).toEqual([
      "Component no-conn has no connection, and StaticSite deploys through a local connection. Set one on the component (Infra Components → no-conn → Edit), then run the job again.",
    ]);
    // Credentials: a stored aws connection without credentials (aws needs them; local does not).
    await t.db.insert(connections).values({ id: newId("connection"), orgId: org.orgId, name: "aws-empty", provider: "aws", config: { region: "eu-west-1" } });
    const [conn] = await t.db.select().from(connections).where(and(eq(connections.orgId, org.orgId), eq(connections.name, "aws-empty")));
    await t.db.insert(connectionAuthorizations).values({ id: newId("connectionAuthorization"), connectionId: conn.id, scope: "organization" });
    const noCreds = await draftComponent(t.db, org.actor(), { environment: "dev", kind: "AwsS3Bucket", name: "no-creds", spec: { bucket_name: "bkt-1" }, connection: "aws-empty" });
    expect((await check(noCreds.id, "credentials"))[0]).toBe(
      "Connection aws-empty has no credentials stored, and aws needs them (access_key_id, secret_access_key). Add them in Settings → Connections → aws-empty, or switch the connection to runner mode, then run the job again.",
    );
    // Module: a custom module that is not registered.
    const badModule = await draftComponent(t.db, org.actor(), { environment: "dev", kind: "StaticSite", name: "bad-module", spec: { site_name: "xx" }, connection: "local-sandbox" });
    await t.db.update(infraComponents).set({ customModuleId: "mod_gone" }).where(eq(infraComponents.id, badModule.id));
    expect((await check(badModule.id, "module"))[0]).toMatch(/^The component's custom module mod_gone is not registered\./);
    // Backend: the organization has no default and no Planton-managed backend.
    const other = await seedTestOrg(t.db);
    await t.db.delete(stateBackendDefaults).where(eq(stateBackendDefaults.orgId, other.orgId));
    await t.db.delete(stateBackends).where(eq(stateBackends.orgId, other.orgId));
    const noBackend = await draftComponent(t.db, other.actor(), { environment: "dev", kind: "StaticSite", name: "no-backend", spec: { site_name: "xx" }, connection: "local-sandbox" });
    const job = await createJob(t.db, other.actor(), { componentId: noBackend.id });
    const report = job.preflight as { checks: { essential: string; passed: boolean; errors: string[] }[] };
    expect(report.checks.filter((c) => !c.passed).map((c) => c.essential)).toEqual(["backend"]);
    expect(job.reason).toMatch(/^No state backend could be resolved/);
  });

  it("answers preflight for a kind and environment with the four checks and what each visited", async () => {
    const org = await seedTestOrg(t.db);
    const report = await preflightForKind(t.db, org.actor("viewer"), { kind: "StaticSite", environment: "prod" });
    expect(report.passed).toBe(true);
    expect(report.checks.map((c) => [c.essential, c.passed, c.resolvedTo])).toEqual([
      ["module", true, expect.stringMatching(/^static-site@1\.0\.0 \(builtin, platform registry, sha256 [0-9a-f]{64}\)$/)],
      ["credentials", true, "local-sandbox (local)"],
      ["backend", true, "planton-managed (planton_managed, the organization's default for builtin)"],
      ["runner", true, "a Planton-hosted runner: neither the connection nor the organization names a runner"],
      ["flow_control", true, "platform default"],
    ]);
    expect(report.checks[0].visited).toEqual(["component's custom module: none set", "organization registry: none for StaticSite", "platform registry: static-site@1.0.0"]);
    const aws = await preflightForKind(t.db, org.actor("viewer"), { kind: "AwsS3Bucket", environment: "prod" });
    expect(aws.checks.find((c) => c.essential === "credentials")).toMatchObject({ passed: false });
  });
});

describe("cancel, resume, rerun", () => {
  it("cancels a queued job at once, every pending step cancelled", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const job = await createJob(t.db, org.actor(), { componentId: component.id, operation: "update" });
    const done = await cancelJob(t.db, org.actor("engineer"), { jobId: job.id });
    expect(done).toMatchObject({ status: "completed", result: "cancelled" });
    expect(await stepsOf(job.id)).toEqual(["init:completed/cancelled", "refresh:completed/cancelled", "preview:completed/cancelled", "apply:completed/cancelled"]);
    const err = await cancelJob(t.db, org.actor(), { jobId: job.id }).catch((e) => e);
    expect(err.message).toBe(`Nothing was cancelled: job ${job.id} already completed (cancelled). To undo its changes, run a new job.`);
  });

  it("holds a manual_start job for approval; cancelling it while paused ends it; resuming another queues it", async () => {
    const { org, component } = await orgWithComponent(t.db, { policy: { manualStart: true } });
    const a = await createJob(t.db, org.actor(), { componentId: component.id });
    expect(a.status).toBe("awaiting_approval");
    expect(await cancelJob(t.db, org.actor(), { jobId: a.id })).toMatchObject({ status: "completed", result: "cancelled" });
    const b = await createJob(t.db, org.actor(), { componentId: component.id });
    const { job, approval } = await resumeJob(t.db, org.actor("engineer"), { jobId: b.id });
    expect(job.status).toBe("queued");
    expect(approval).toMatchObject({ userLabel: org.users.engineer.email, planSha256: null, pauseOrdinal: 0 });
  });

  it("cancels a job paused after its preview at once", async () => {
    const { org, component } = await orgWithComponent(t.db, { policy: { pauseBeforeApply: true } });
    const runner = await testRunner(t.db, org);
    const job = await createJob(t.db, org.actor(), { componentId: component.id, operation: "update" });
    const c = (await claim(t.db, runner))!;
    await runStep(t.db, c, "init");
    await runStep(t.db, c, "refresh");
    expect(await runStep(t.db, c, "preview", "succeeded", { plan: { artifactId: "art_x", sha256: "a".repeat(64), summary: {} } })).toMatchObject({ next: "stop" });
    expect((await getJob(t.db, org.orgId, job.id)).status).toBe("awaiting_approval");
    expect(await cancelJob(t.db, org.actor(), { jobId: job.id })).toMatchObject({ status: "completed", result: "cancelled" });
    expect(await stepsOf(job.id)).toEqual(["init:completed/succeeded", "refresh:completed/succeeded", "preview:completed/succeeded", "apply:completed/cancelled"]);
  });

  it("approves a paused job once when two approvals race, and refuses a checksum that is not the plan's", async () => {
    const { org, component } = await orgWithComponent(t.db, { policy: { pauseBeforeApply: true } });
    const runner = await testRunner(t.db, org);
    const job = await createJob(t.db, org.actor(), { componentId: component.id, operation: "update" });
    const c = (await claim(t.db, runner))!;
    const sha = "b".repeat(64);
    for (const s of ["init", "refresh"] as const) await runStep(t.db, c, s);
    await runStep(t.db, c, "preview", "succeeded", { plan: { artifactId: "art_plan", sha256: sha, summary: { add: 1 } } });

    const wrong = await resumeJob(t.db, org.actor(), { jobId: job.id, expectedChecksum: "c".repeat(64) }).catch((e) => e);
    expect(wrong.message).toBe(
      `Nothing was approved and nothing ran: the plan you reviewed (sha256 ${"c".repeat(64)}) is not this job's plan (sha256 ${sha}). Review the current plan, then resume with its checksum.`,
    );
    expect((await getJob(t.db, org.orgId, job.id)).status).toBe("awaiting_approval");

    const results = await Promise.allSettled([
      resumeJob(t.db, org.actor("engineer"), { jobId: job.id, expectedChecksum: sha }),
      resumeJob(t.db, org.actor("admin"), { jobId: job.id, expectedChecksum: sha }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const refused = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(refused.reason).toBeInstanceOf(PlantonError);
    expect(await t.db.select().from(approvals).where(eq(approvals.jobId, job.id))).toHaveLength(1);
    expect((await getJob(t.db, org.orgId, job.id)).status).toBe("queued");
    // It continues from the next step with the reviewed plan.
    const next = (await claim(t.db, runner))!;
    expect(next.claim.input.steps).toEqual(["apply"]);
    expect(next.claim.input.approvedPlan).toEqual({ artifactId: "art_plan", sha256: sha });
    expect(await runStep(t.db, next, "apply")).toMatchObject({ next: "stop" });
    expect((await getJob(t.db, org.orgId, job.id))).toMatchObject({ status: "completed", result: "succeeded" });
  });

  it("reruns a completed job as a new linked job with a fresh preflight", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const first = await createJob(t.db, org.actor(), { componentId: component.id, operation: "refresh" });
    await cancelJob(t.db, org.actor(), { jobId: first.id });
    const again = await rerunJob(t.db, org.actor("engineer"), { jobId: first.id });
    expect(again).toMatchObject({ rerunOf: first.id, operation: "refresh", status: "queued" });
    expect(again.id).not.toBe(first.id);
    const err = await rerunJob(t.db, org.actor(), { jobId: again.id }).catch((e) => e);
    expect(err.message).toMatch(/^Nothing was re-run: job .* is still queued\./);
    const { jobs } = await listJobs(t.db, org.orgId, { componentId: component.id, limit: 1 });
    expect(jobs.map((j) => j.id)).toEqual([again.id]);
    const page2 = await listJobs(t.db, org.orgId, { componentId: component.id, limit: 1, cursor: (await listJobs(t.db, org.orgId, { componentId: component.id, limit: 1 })).nextCursor! });
    expect(page2.jobs.map((j) => j.id)).toEqual([first.id]);
  });
});

describe("progress events", () => {
  it("are gap-free per job, and a retried runner batch is stored once", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const job = await createJob(t.db, org.actor(), { componentId: component.id });
    const ev = (seq: number) => ({ seq, ts: new Date().toISOString(), operation: "init" as const, type: "log" as const, payload: { line: `line ${seq}` } });
    const r1 = await appendRunnerEvents(t.db, job.id, "run_a", [ev(1), ev(2), ev(3)]);
    const r2 = await appendRunnerEvents(t.db, job.id, "run_a", [ev(1), ev(2), ev(3)]);
    const r3 = await appendRunnerEvents(t.db, job.id, "run_a", [ev(3), ev(4)]);
    expect([r1.acceptedThrough, r2.acceptedThrough, r3.acceptedThrough]).toEqual([3, 3, 4]);
    // Concurrent batches from two attempts and the server interleave without gaps.
    await Promise.all([
      appendRunnerEvents(t.db, job.id, "run_b", [ev(1), ev(2)]),
      appendRunnerEvents(t.db, job.id, "run_c", [ev(1), ev(2)]),
      t.db.transaction((tx) => appendEvents(tx, job.id, [{ operation: null, type: "log", payload: { line: "server" } }])),
    ]);
    const all = await readEventsAfter(t.db, job.id, 0);
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1));
    expect(all.filter((e) => e.payload.line === "line 3")).toHaveLength(1);
    expect(all.filter((e) => (e.payload as { line?: string }).line?.startsWith("line")).length).toBe(4 + 2 + 2);
  });

  it.skipIf(testDriver === "pglite")("a batch sent twice at once (a runner's retry racing its first try) is stored once, without gaps", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const job = await createJob(t.db, org.actor(), { componentId: component.id });
    const ev = (seq: number) => ({ seq, ts: new Date().toISOString(), operation: "init" as const, type: "log" as const, payload: { line: `retry ${seq}` } });
    const before = await readEventsAfter(t.db, job.id, 0);
    // Hold the job's row lock until both uploads wait on it: each then began before the other stored anything.
    const holder = await heldOpen(t.db, (tx) => tx.select({ id: infraJobs.id }).from(infraJobs).where(eq(infraJobs.id, job.id)).for("update"));
    const uploads = [appendRunnerEvents(t.db, job.id, "run_r", [ev(1), ev(2), ev(3)]), appendRunnerEvents(t.db, job.id, "run_r", [ev(1), ev(2), ev(3), ev(4)])];
    await lockWaiters(t.db, 2, "%jsonb_to_recordset%");
    holder.commit();
    await holder.done;
    const results = await Promise.all(uploads);
    // Whichever stored first, each is told everything it sent is kept.
    expect(results[0].acceptedThrough).toBeGreaterThanOrEqual(3);
    expect(results[1].acceptedThrough).toBe(4);
    const added = (await readEventsAfter(t.db, job.id, before.at(-1)!.seq)).map((e) => [e.seq - before.at(-1)!.seq, e.payload.line]);
    expect(added).toEqual([1, 2, 3, 4].map((n) => [n, `retry ${n}`]));
  });

  it.skipIf(testDriver === "pglite")("go on while a state call holds the running job (key share), and the job cannot end until that call is done", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const runner = await testRunner(t.db, org);
    const job = await createJob(t.db, org.actor(), { componentId: component.id, operation: "update" });
    const c = (await claim(t.db, runner))!;
    await runStep(t.db, c, "init");
    // What a state journal batch or a state call holds for its round trips.
    const stateCall = await heldOpen(t.db, (tx) => lockLiveJob(tx, c.access, "key share"));
    const ev = { seq: 1, ts: new Date().toISOString(), operation: "refresh" as const, type: "log" as const, payload: { line: "while a state call runs" } };
    expect((await appendRunnerEvents(t.db, job.id, c.access.attemptId, [ev])).acceptedThrough).toBe(1);
    // Cancelling ends the job: it waits for the state call (which may be writing state for it).
    let cancelled = false;
    const cancel = cancelJob(t.db, org.actor(), { jobId: job.id }).then((r) => ((cancelled = true), r));
    await lockWaiters(t.db, 1);
    expect(cancelled).toBe(false);
    stateCall.commit();
    await stateCall.done;
    expect(await cancel).toMatchObject({ status: "running" });
    expect(cancelled).toBe(true);
  });

  it("read after a seq, and streamed live, each once and in order until the job completes", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const job = await createJob(t.db, org.actor(), { componentId: component.id });
    const before = await readEventsAfter(t.db, job.id, 0);
    const after = before[before.length - 1].seq;
    const seen: number[] = [];
    const reader = (async () => {
      for await (const e of streamJobEvents(t, job.id, after)) seen.push(e.seq);
    })();
    for (let i = 0; i < 20; i++) await t.db.transaction((tx) => appendEvents(tx, job.id, [{ operation: null, type: "log", payload: { line: `l${i}` } }]));
    await cancelJob(t.db, org.actor(), { jobId: job.id });
    await reader;
    const total = (await readEventsAfter(t.db, job.id, 0)).length;
    expect(seen).toEqual(Array.from({ length: total - after }, (_, i) => after + i + 1));
    expect((await readEventsAfter(t.db, job.id, 5)).map((e) => e.seq)[0]).toBe(6);
  });
});

describe("a progress event's job (kept by migration 0023's statement-level triggers, not a per-row foreign key)", () => {
  const raw = (jobId: string, seq: number) => sql`insert into progress_events (job_id, seq, ts, type, payload) values (${jobId}, ${seq}, now(), 'log', '{"line":"raw"}'::jsonb)`;
  const eventsOf = async (jobId: string) => rowsOf<{ n: number }>(await t.db.execute(sql`select count(*)::int as n from progress_events where job_id = ${jobId}`))[0].n;
  const codeOf = (err: unknown): string | undefined => {
    for (let e = err as { code?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e) if (e.code) return e.code;
    return undefined;
  };

  it("exists: an event of a job that does not exist is refused as a foreign-key violation and nothing is stored; deleting a job deletes its events; a job's id never changes", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const job = await createJob(t.db, org.actor(), { componentId: component.id });
    const other = await createJob(t.db, org.actor(), { componentId: component.id });
    const missing = newId("infraJob");
    // One statement with a real job's event and a missing job's: all of it refused.
    const mixed = await t.db.execute(sql`insert into progress_events (job_id, seq, ts, type, payload) values (${job.id}, 1000, now(), 'log', '{}'::jsonb), (${missing}, 1, now(), 'log', '{}'::jsonb)`).catch((e: unknown) => e);
    expect(codeOf(mixed)).toBe("23503");
    expect(String((mixed as Error).cause ?? mixed)).toContain(missing);
    expect(await eventsOf(missing)).toBe(0);
    expect((await readEventsAfter(t.db, job.id, 0)).some((e) => e.seq === 1000)).toBe(false);
    // Moving events to a missing job is refused too.
    expect(codeOf(await t.db.execute(sql`update progress_events set job_id = ${missing} where job_id = ${job.id}`).catch((e: unknown) => e))).toBe("23503");
    expect(codeOf(await t.db.update(infraJobs).set({ id: missing }).where(eq(infraJobs.id, job.id)).catch((e: unknown) => e))).toBe("23503");

    const kept = await eventsOf(other.id);
    expect(await eventsOf(job.id)).toBeGreaterThan(0);
    await t.db.delete(infraJobs).where(eq(infraJobs.id, job.id));
    expect(await eventsOf(job.id)).toBe(0);
    expect(await eventsOf(other.id)).toBe(kept);
  });

  it.skipIf(testDriver === "pglite")("is locked against deletion until the writer commits: a deletion waits for the events' writer and then deletes them; a writer that waited for a deletion is refused", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const job = await createJob(t.db, org.actor(), { componentId: component.id });
    // A writer holds its uncommitted events; the deletion waits for it, then takes them with the job.
    const writer = await heldOpen(t.db, (tx) => tx.execute(raw(job.id, 1000)));
    const deletion = t.db.delete(infraJobs).where(eq(infraJobs.id, job.id)).execute();
    await lockWaiters(t.db, 1, "delete from%infra_jobs%");
    writer.commit();
    await writer.done;
    await deletion;
    expect(await eventsOf(job.id)).toBe(0);

    // A deletion holds the job; a writer waits for it, then finds the job gone.
    const second = await createJob(t.db, org.actor(), { componentId: component.id });
    const deleter = await heldOpen(t.db, (tx) => tx.delete(infraJobs).where(eq(infraJobs.id, second.id)));
    const late = t.db.execute(raw(second.id, 1000)).catch((e: unknown) => e);
    await lockWaiters(t.db, 1, "insert into progress_events%");
    deleter.commit();
    await deleter.done;
    expect(codeOf(await late)).toBe("23503");
    expect(await eventsOf(second.id)).toBe(0);
  });
});

describe("variables referenced by a spec", () => {
  it("replace their $var/NAME in the job's input where their scope allows the environment, and fail preflight naming them where it does not", async () => {
    const { org } = await orgWithComponent(t.db, { components: 0 });
    await createVariable(t.db, org.actor(), { name: "SITE_TITLE", value: "Staging site", scope: "environment", environments: ["staging"] });
    const mk = (environment: string, title: string) =>
      draftComponent(t.db, org.actor(), { environment, kind: "StaticSite", name: `titled-${environment}-${title.length}`, spec: { site_name: `titled-${environment}`, title }, connection: "local-sandbox" });
    const staging = await mk("staging", "$var/SITE_TITLE");
    const ok = await createJob(t.db, org.actor(), { componentId: staging.id });
    expect(ok.status).toBe("queued");
    expect(((await getIacInput(t.db, org.orgId, ok.id)) as { variables: Record<string, unknown> }).variables.title).toBe("Staging site");

    const dev = await mk("dev", "$var/SITE_TITLE");
    const refused = await createJob(t.db, org.actor(), { componentId: dev.id });
    expect(refused).toMatchObject({ status: "completed", result: "failed" });
    expect(refused.reason).toBe(
      "Nothing ran: environment dev may not use the variable SITE_TITLE. Allow it in Settings → Secrets & Variables (scope: environments dev, or the organization), then run the job again.",
    );
    const missing = await createJob(t.db, org.actor(), { componentId: (await mk("staging", "$var/NO_SUCH")).id });
    expect(missing.reason).toBe("Nothing ran: the spec references the variable NO_SUCH, which does not exist. Create it in Settings → Secrets & Variables, or fix the reference in the component's spec, then run the job again.");
  });
});
