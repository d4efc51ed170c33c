import { chmod, readFile, rm, stat, writeFile } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { cancelJob } from "../server/services/jobs/cancel-job";
import { issueJobCredential } from "../server/services/runners/credentials";
import { revokeRunner } from "../server/services/runners/revoke-runner";
import { draftComponent, reconfigure } from "../test/components";
import { createSecret } from "../server/services/settings/secrets";
import { catalogKinds, runners as runnersTable } from "../db/schema";
import { createConnection, setConnectionAuthorizations } from "../server/services/settings/connections";
import { and, eq } from "drizzle-orm";
import type { ClaimResponse } from "../lib/runner-protocol";
import { RunnerClient } from "./client";
import { runJob, STATE_BACKUPS, type JobRunOptions } from "./job-run";
import { createLogger } from "./log";
import { RemoteStateBackend } from "./remote-state";
import { startRunnerConsole, type RunnerConsole } from "./test/console";
import { tempDir } from "./test/helpers";

// The real builtin engine in this process, against the built console on a real Postgres.
let c: RunnerConsole;
let runner: RunnerClient;
let workRoot: string;

beforeAll(async () => {
  c = await startRunnerConsole({ env: { PLANTON_LEASE_SECONDS: "60" } });
  runner = (await c.newRunner("job-run", { attempts: 3, baseMs: 5, maxMs: 20 })).client;
  workRoot = await tempDir("planton-work-");
  await c.registerKind("TestSlow", "slow", [{ name: "name", type: "string", required: true, description: "folder" }]);
  await c.registerKind("TestProtect", "protectable", [{ name: "pages", type: "number", default: 2, description: "how many pages" }]);
}, 240_000);
afterAll(() => c?.close());

const run = (claim: ClaimResponse, opts: Partial<JobRunOptions> = {}) => runJob(claim, { runner, workRoot, env: { ...process.env, ...c.gates.env }, ...opts });
const started = async (jobId: string) => (await c.steps(jobId)).filter((s) => s.startedAt).map((s) => s.step);
const finishes = async (jobId: string) => (await c.steps(jobId)).filter((s) => s.endedAt && s.startedAt).map((s) => [s.step, s.result]);
const previewPlan = async (jobId: string) => (await c.steps(jobId)).find((s) => s.step === "preview")!.plan as { artifactId: string; sha256: string; summary: Record<string, unknown> };
/** Logs of one job run, kept so a test can wait on a line. */
const capture = () => {
  const lines: { msg: string }[] = [];
  return { lines, log: createLogger({}, (l) => lines.push(JSON.parse(l))), saw: (msg: string) => lines.some((l) => l.msg === msg) };
};
/** A TCP relay between a runner and the console that the test cuts, as a network that drops would. */
async function relay(target: string) {
  const { hostname, port } = new URL(target);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((inbound) => {
    const outbound = net.connect(Number(port), hostname);
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {});
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    cut: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}

/** A slow-module component whose update has applied, so its gate is in state for a refresh to read. */
async function appliedSlow(name: string) {
  await c.component(name, "dev", "TestSlow", { name });
  const id = (await c.run(name, "update")).id;
  expect(await run(await c.claimNext(runner))).toMatchObject({ exitCode: 0 });
  expect((await c.job(id)).result).toBe("succeeded");
}

describe("a claimed builtin job, run against the real server", () => {
  it("update: plans, saves the plan artifact, applies exactly it, then a refresh finds no drift", async () => {
    const jobId = await c.queue("docs", "update", { site_name: "docs" });
    const result = await run(await c.claimNext(runner));
    expect(result).toMatchObject({ exitCode: 0, reason: "completed" });
    expect(await finishes(jobId)).toEqual([
      ["init", "succeeded"],
      ["refresh", "succeeded"],
      ["preview", "succeeded"],
      ["apply", "succeeded"],
    ]);
    // The preview's plan went up as an artifact, and its checksum is what the finish reported.
    const preview = await previewPlan(jobId);
    expect(preview.summary).toMatchObject({ add: 5, change: 0, remove: 0 });
    expect((await c.artifacts(jobId)).some((a) => a.id === preview.artifactId && a.kind === "plan")).toBe(true);
    // Files are on disk under the connection's root; the state is in the Planton-managed backend, unlocked.
    const { state, lock } = await c.state("docs");
    const sitePath = state!.outputs.site_path!.value as string;
    expect(await readFile(path.join(c.infraRoot, sitePath, "robots.txt"), "utf8")).toBe("User-agent: *\nAllow: /\n");
    expect(state!.resources).toHaveLength(5);
    expect(lock).toBeNull();
    // Events: numbered from 1 without gaps, with the engine's commands in the summaries.
    const events = await c.events(jobId);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    // (The first refresh has no state yet, so the engine makes no summary for it.)
    expect(events.filter((e) => e.type === "summary").map((e) => [e.operation, e.payload.command, e.payload.add])).toEqual([
      ["preview", "builtin plan", 5],
      ["apply", "builtin apply", 5],
    ]);
    expect(events.some((e) => e.type === "resource" && e.operation === "apply" && e.payload.phase === "complete" && e.payload.address === "local_file.index")).toBe(true);
    expect(events.find((e) => e.type === "outputs")!.payload).toEqual({ outputs: { index_sha256: expect.any(Object), site_path: { value: sitePath, sensitive: false } } });
    expect((await c.attempts(jobId)).map((a) => [a.exitCode, a.reason])).toEqual([[0, "completed"]]);

    // A refresh job afterwards sees no drift; after a file is deleted by hand it does.
    const quiet = await c.queue("docs", "refresh");
    await run(await c.claimNext(runner));
    expect((await c.events(quiet)).filter((e) => e.type === "resource" && e.payload.phase === "drift")).toEqual([]);
    await rm(path.join(c.infraRoot, sitePath, "robots.txt"));
    const drifted = await c.queue("docs", "refresh");
    await run(await c.claimNext(runner));
    expect((await c.events(drifted)).filter((e) => e.type === "resource" && e.payload.phase === "drift").map((e) => [e.payload.address, e.payload.action])).toEqual([["local_file.robots", "delete"]]);
  });

  it("pauses after the preview when the server says stop, and a resumed attempt applies exactly the approved plan", async () => {
    await c.component("blog", "dev", "StaticSite", { site_name: "blog" });
    await c.componentPolicy("blog", { pauseBeforeApply: true });
    const jobId = await c.queue("blog", "update");
    const first = await run(await c.claimNext(runner));
    expect(first.stoppedBy).toBe("server_stop");
    expect(await started(jobId)).toEqual(["init", "refresh", "preview"]);
    expect((await c.state("blog")).state).toBeNull();

    await c.api.jobs.resume.mutate({ org: c.org.slug, jobId, expectedChecksum: (await previewPlan(jobId)).sha256 });
    const resumed = await c.claimNext(runner);
    expect(resumed.input.approvedPlan).toEqual({ artifactId: (await previewPlan(jobId)).artifactId, sha256: (await previewPlan(jobId)).sha256 });
    expect(await run(resumed)).toMatchObject({ exitCode: 0 });
    expect((await c.state("blog")).state!.resources).toHaveLength(5);
  });

  it("refuses to apply a plan whose artifact does not match the approved checksum", async () => {
    await c.component("xsum", "dev", "StaticSite", { site_name: "xsum" });
    await c.componentPolicy("xsum", { pauseBeforeApply: true });
    const jobId = await c.queue("xsum", "update");
    await run(await c.claimNext(runner));
    await c.api.jobs.resume.mutate({ org: c.org.slug, jobId, expectedChecksum: (await previewPlan(jobId)).sha256 });
    const claim = await c.claimNext(runner);
    // As if the stored plan had changed since review: the runner checks the bytes it downloads against the approval.
    claim.input.approvedPlan = { ...claim.input.approvedPlan!, sha256: "f".repeat(64) };
    const r = await run(claim);
    expect(r.exitCode).toBe(1);
    expect(r.reason).toMatch(/not the reviewed f{64}; nothing was applied/);
    expect((await c.state("xsum")).state).toBeNull();
  });

  it("a stale plan is refused by the engine: the state changed after the preview", async () => {
    await c.component("stale", "dev", "StaticSite", { site_name: "stale" });
    await c.queue("stale", "update");
    expect(await run(await c.claimNext(runner))).toMatchObject({ exitCode: 0 });
    await c.componentPolicy("stale", { pauseBeforeApply: true });
    const jobId = await c.queue("stale", "update");
    await run(await c.claimNext(runner));
    await c.api.jobs.resume.mutate({ org: c.org.slug, jobId, expectedChecksum: (await previewPlan(jobId)).sha256 });
    const claim = await c.claimNext(runner);
    // The state moves on after the review, written through the server's state routes.
    const backend = new RemoteStateBackend(runner.job(claim.job.id, claim.credential.token), { path: "stale", who: "someone@elsewhere" });
    const lock = await backend.lock({ Operation: "OperationTypeApply" });
    const state = (await backend.get())!;
    await backend.put({ ...state, serial: state.serial + 1 });
    await backend.unlock(lock.ID);
    const r = await run(claim);
    expect(r.reason).toMatch(/Saved plan is stale/);
  });

  it("a held state lock fails the step with OpenTofu's \"Error acquiring the state lock\" and the holder", async () => {
    const jobId = await c.queue("locked", "refresh", { site_name: "locked" });
    const claim = await c.claimNext(runner);
    await new RemoteStateBackend(runner.job(claim.job.id, claim.credential.token), { path: "locked", who: "someone@elsewhere" }).lock({ Operation: "OperationTypeApply" });
    const r = await run(claim);
    expect(r.exitCode).toBe(1);
    expect(r.reason).toContain("Error acquiring the state lock");
    expect(r.reason).toContain("someone@elsewhere");
    expect((await c.steps(jobId)).find((s) => s.step === "refresh")).toMatchObject({ result: "failed", reason: expect.stringContaining("Lock Info:") });
    expect((await c.events(jobId)).some((e) => e.type === "diagnostic" && String(e.payload.summary).includes("Error acquiring the state lock"))).toBe(true);
  });

  it("a bundle that does not match its checksum fails init and nothing runs", async () => {
    const jobId = await c.queue("tampered", "update", { site_name: "tampered" });
    const claim = await c.claimNext(runner);
    // As if the bundle had been damaged on the way: the runner checks it against the checksum the server sent.
    claim.input.module.sha256 = "0".repeat(64);
    const r = await run(claim);
    expect(await started(jobId)).toEqual(["init"]);
    expect(r.reason).toMatch(/init failed: Nothing ran: the module bundle does not match its checksum/);
    expect((await c.attempts(jobId)).at(-1)).toMatchObject({ exitCode: 1 });
  });

  it("a cancel during a step lets that step finish and stops at the next boundary", async () => {
    await appliedSlow("cancelled");
    const before = (await c.state("cancelled")).state!.serial;
    const jobId = await c.queue("cancelled", "update");
    c.gates.hold("cancelled.refresh");
    const { log, saw } = capture();
    const running = run(await c.claimNext(runner), { heartbeatMs: 50, log });
    await c.gates.held("cancelled.refresh");
    await cancelJob(c.t.db, c.org.actor("engineer"), { jobId });
    await vi.waitFor(() => expect(saw("cancel requested; stopping at the next step boundary")).toBe(true), { timeout: 15_000 });
    c.gates.release("cancelled.refresh");
    const r = await running;
    expect(await finishes(jobId)).toEqual([
      ["init", "succeeded"],
      ["refresh", "succeeded"],
    ]);
    expect(await started(jobId)).not.toContain("preview");
    expect(r.stoppedBy).toBe("cancel");
    expect((await c.attempts(jobId)).at(-1)).toMatchObject({ exitCode: 0, reason: "cancelled: stopped at the step boundary before preview" });
    expect((await c.job(jobId)).result).toBe("cancelled");
    expect((await c.state("cancelled")).state!.serial).toBe(before);
  });

  it("stops working on the job at the next step boundary when a heartbeat is refused (runner revoked)", async () => {
    await appliedSlow("revoked");
    const doomed = await c.newRunner("doomed", { attempts: 3, baseMs: 5, maxMs: 20 });
    const jobId = await c.queue("revoked", "update");
    c.gates.hold("revoked.refresh");
    const { log, saw } = capture();
    const running = run(await c.claimNext(doomed.client), { runner: doomed.client, heartbeatMs: 50, log });
    await c.gates.held("revoked.refresh");
    await revokeRunner(c.t.db, c.org.actor("admin"), { id: doomed.id });
    await vi.waitFor(() => expect(saw("the server refused a heartbeat; stopping at the next step boundary")).toBe(true), { timeout: 15_000 });
    c.gates.release("revoked.refresh");
    const r = await running;
    expect(r).toMatchObject({ stoppedBy: "credential_refused", exitCode: 1 });
    expect(r.reason).toMatch(/^stopped before preview: POST \/jobs\/[^/]+\/heartbeat answered 403: /);
    expect(r.reason).toMatch(/Nothing was done: runner doomed was revoked at .*, so its job credentials no longer work\./);
    expect(await started(jobId)).toEqual(["init", "refresh"]);
    expect((await c.job(jobId)).result).toBe("failed");
  });

  it("stops when a step start answers proceed:false", async () => {
    const jobId = await c.queue("stopped", "refresh", { site_name: "stopped" });
    const claim = await c.claimNext(runner);
    // The cancel lands before the first step starts, with no heartbeat yet to bring it.
    await cancelJob(c.t.db, c.org.actor("engineer"), { jobId });
    const r = await run(claim, { heartbeatMs: 600_000 });
    expect(r.stoppedBy).toBe("not_proceed");
    expect(await finishes(jobId)).toEqual([]);
    expect(await c.attempts(jobId)).toHaveLength(1);
    expect((await c.attempts(jobId))[0]!.endedAt).not.toBeNull();
  });

  it("uses a renewed credential from the heartbeat for the calls after it", async () => {
    await appliedSlow("renewed");
    const jobId = await c.queue("renewed", "refresh");
    const claim = await c.claimNext(runner);
    // A credential close to its expiry, as the claim's would be after 45 minutes: the next heartbeat renews it.
    const [attempt] = await c.attempts(jobId);
    const [row] = await c.t.db.select().from(runnersTable).where(eq(runnersTable.id, attempt!.runnerId));
    const short = await issueJobCredential({ jobId, orgId: c.org.orgId, attemptId: claim.attemptId, runnerTokenHash: row!.tokenHash, credentialId: attempt!.credentialId }, 600);
    const job = runner.job(jobId, short.token);
    const renew = vi.spyOn(job, "renewCredential");
    c.gates.hold("renewed.refresh");
    const { log, saw } = capture();
    const running = run({ ...claim, credential: short }, { jobClient: job, heartbeatMs: 50, log });
    await c.gates.held("renewed.refresh");
    await vi.waitFor(() => expect(saw("job credential renewed")).toBe(true), { timeout: 15_000 });
    c.gates.release("renewed.refresh");
    expect(await running).toMatchObject({ exitCode: 0, reason: "completed" });
    // Heartbeats 50 ms apart may both carry the short credential and both be renewed: the newest renewal is the one in use.
    const renewed = renew.mock.calls.at(-1)![0];
    expect(renew.mock.calls.map(([token]) => token)).not.toContain(short.token);
    expect(job["transport"]["token"]).toBe(renewed);
  });

  it("resolves $secret references in variables and never lets the value reach an event", async () => {
    await createSecret(c.t.db, c.org.actor(), { name: "SITE_TITLE", value: "Top Secret Title 42", scope: "organization" });
    const jobId = await c.queue("sec", "update", { site_name: "sec", title: "$secret/SITE_TITLE" });
    const r = await run(await c.claimNext(runner));
    expect(r.exitCode).toBe(0);
    const html = await readFile(path.join(c.infraRoot, (await c.state("sec")).state!.outputs.site_path!.value as string, "index.html"), "utf8");
    expect(html).toContain("Top Secret Title 42");
    const events = await c.events(jobId);
    expect(JSON.stringify(events)).not.toContain("Top Secret Title 42");
    // Two uploads: the executable plan (which the server encrypts) holds the value; the review rendition never does.
    const uploads = (await c.artifacts(jobId)).filter((a) => a.kind === "plan" || a.kind === "plan_review").map((a) => a.text);
    expect(uploads.filter((u) => u.includes("Top Secret Title 42")).map((u) => JSON.parse(u).masked)).toEqual([undefined]);
    const review = uploads.find((u) => JSON.parse(u).masked === true)!;
    expect(JSON.parse(review).variables.title.value).toBe("(sensitive value)");
    // The planned diff the job page shows comes masked too.
    const planned = events.filter((e) => e.type === "resource" && e.payload.phase === "planned" && e.payload.after);
    expect(planned.find((e) => e.payload.address === "local_file.index")?.payload.after).toMatchObject({ content: expect.stringContaining("(sensitive value)") });
  });

  it("hands a stored connection's credentials to the engine as its provider's variables, only in the engine's environment, masked in every event", async () => {
    const KEY_ID = "AKIAEXAMPLEJOBKEY01";
    const SECRET = "wJalrXUtnFEMI-job-scoped-secret-value";
    // A stand-in for the third-party `tofu` binary: records the AWS_* variables it was started with (outside the workspace) and logs the secret, as a careless provider might.
    const bin = await tempDir("fake-tofu-");
    const seen = path.join(bin, "env.seen");
    await writeFile(
      path.join(bin, "tofu"),
      `#!/bin/sh\nenv | grep '^AWS_' | sort >> ${seen}\necho '{"@level":"info","@message":"using key '"$AWS_SECRET_ACCESS_KEY"'","type":"log"}'\nexit 0\n`,
    );
    await chmod(path.join(bin, "tofu"), 0o755);
    // A kind deployed through an aws connection by an OpenTofu module (its files do not matter to the stand-in).
    await c.registerKind("TestAwsThing", "slow", [], "tofu");
    await c.t.db.update(catalogKinds).set({ provider: "aws" }).where(and(eq(catalogKinds.orgId, c.org.orgId), eq(catalogKinds.kind, "TestAwsThing")));
    const conn = await createConnection(c.t.db, c.org.actor(), { name: "aws-jobs", provider: "aws", config: { region: "eu-west-1" }, credentials: { access_key_id: KEY_ID, secret_access_key: SECRET } });
    await setConnectionAuthorizations(c.t.db, c.org.actor(), { id: conn.id, organization: true });
    const component = await draftComponent(c.t.db, c.org.actor(), { environment: "dev", kind: "TestAwsThing", name: "aws-thing", spec: {}, connection: "aws-jobs" });
    const jobId = (await c.api.jobs.create.mutate({ org: c.org.slug, componentId: component.id, operation: "refresh" })).id;
    const claim = await c.claimNext(runner);
    expect(claim.job.id).toBe(jobId);
    // The claim carries the connection's name and settings, never its credentials.
    expect(JSON.stringify(claim)).not.toContain(SECRET);
    await run(claim, { env: { ...process.env, PATH: [bin, process.env.PATH].join(path.delimiter) } });
    expect((await readFile(seen, "utf8")).split("\n")).toEqual(expect.arrayContaining(["AWS_ACCESS_KEY_ID=" + KEY_ID, "AWS_REGION=eu-west-1", "AWS_SECRET_ACCESS_KEY=" + SECRET]));
    const events = JSON.stringify(await c.events(jobId));
    expect(events).not.toContain(SECRET);
    expect(events).not.toContain(KEY_ID);
    expect(events).toContain("using key ");
  });

  it("a final state save that fails (the network to the console drops mid-apply) keeps the state the apply reached on the runner's host, 0600, and says where", async () => {
    await c.component("cut-off", "dev", "TestSlow", { name: "cut-off" });
    const link = await relay(c.server.url);
    const retry = { attempts: 2, baseMs: 5, maxMs: 10 };
    const cutOff = await c.newRunner("cut-off", retry);
    const client = new RunnerClient(link.url, cutOff.token, retry);
    await c.run("cut-off", "update");
    c.gates.hold("cut-off");
    const { log, lines } = capture();
    const running = run(await c.claimNext(client), { runner: client, log });
    await c.gates.held("cut-off");
    await link.cut();
    c.gates.release("cut-off");
    const r = await running;
    expect(r.exitCode).toBe(1);
    const kept = lines.find((l) => l.msg === "the final state save failed; the state this step reached is kept on this host") as { msg: string; step?: string; file?: string } | undefined;
    expect(kept, JSON.stringify(lines.slice(-10))).toMatchObject({ step: "apply", file: expect.stringContaining(path.join(workRoot, STATE_BACKUPS)) });
    // What the apply reached — all three resources, the two after the cut included — readable by the runner's user only.
    const state = JSON.parse(await readFile(kept!.file!, "utf8")) as { resources: { type: string; name: string }[] };
    expect(state.resources.map((x) => `${x.type}.${x.name}`).sort()).toEqual(["local_file.after", "local_file.first", "plantontest_gate.wait"]);
    expect((await stat(kept!.file!)).mode & 0o777).toBe(0o600);
    expect((await stat(path.join(workRoot, STATE_BACKUPS))).mode & 0o777).toBe(0o700);
    // The attempt's own workspace is gone; the backup is not.
    expect(await readFile(path.join(c.infraRoot, "slow", "cut-off", "after.txt"), "utf8")).toMatch(/^after /);
  });

  it("under delete protection an update shows planned deletes as not executed and counts them as skipped", async () => {
    await c.component("guarded", "dev", "TestProtect", { pages: 2 });
    await c.queue("guarded", "update");
    expect(await run(await c.claimNext(runner))).toMatchObject({ exitCode: 0 });
    // One page fewer in the spec: the next update's plan deletes it, and protection keeps it.
    await reconfigure(c.t.db, c.org.actor(), { id: c.ids.guarded!, spec: { pages: 1 } });
    await c.componentPolicy("guarded", { protectDeletes: true });
    const jobId = await c.queue("guarded", "update");
    const r = await run(await c.claimNext(runner));
    expect(r.exitCode).toBe(0);
    const events = await c.events(jobId);
    const planSummary = events.find((e) => e.type === "summary" && e.operation === "preview")!.payload;
    expect(planSummary).toMatchObject({ command: "builtin plan", remove: 0, skippedDeletes: 1 });
    expect(events.some((e) => e.type === "log" && String(e.payload.line).includes("local_file.page[1]: Plan to delete (not executed)"))).toBe(true);
    const planned = events.find((e) => e.type === "resource" && e.payload.address === "local_file.page[1]" && e.payload.phase === "planned")!;
    expect(planned.payload.notExecuted).toMatchObject({ reason: "delete_protection", message: expect.stringContaining("local_file.page[1] is not deleted") });
    // The uploaded plan is the engine's own: the delete stays in it, marked, for the reviewer to see.
    const saved = JSON.parse((await c.artifacts(jobId)).filter((a) => a.kind === "plan").at(-1)!.text);
    expect(saved.resource_changes.find((ch: { address: string }) => ch.address === "local_file.page[1]")).toMatchObject({ action: "delete", not_executed: { reason: "delete_protection" } });
    expect((await c.state("guarded")).state!.resources.find((x) => x.type === "local_file" && x.name === "page")!.instances).toHaveLength(2);
  });
});
