// Infra Jobs for real: the built console as its own process on a real Postgres, real runner
// processes running the builtin engine, real files under the connection's folder.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createHash } from "node:crypto";
import { plantonCli } from "../../cli/run-cli";
import { eq } from "drizzle-orm";
import { flowControlPolicies, infraJobs, jobOperations, progressEvents, runnerAttempts, stateObjects, stateVersions } from "../../db/schema";
import { journaledAddresses } from "../../server/services/state/state-journal";
import { newId } from "../../lib/ids";
import type { ProgressEvent } from "../../lib/runner-protocol";
import { environmentByName } from "../../server/services/organizations/lookup";
import { startJobStack, stepsOf, type JobStack } from "./harness";

let stack: JobStack;
let t: JobStack["t"];
let org: JobStack["org"];
let api: JobStack["api"];
let ids: JobStack["ids"];
let runners: JobStack["runners"];
let startRunner: JobStack["startRunner"];
let run: JobStack["run"];
let waitFor: JobStack["waitFor"];
let finished: JobStack["finished"];
let events: JobStack["events"];
let file: JobStack["file"];

beforeAll(async () => {
  stack = await startJobStack();
  ({ t, org, api, ids, runners, startRunner, run, waitFor, finished, events, file } = stack);
  const prod = await environmentByName(t.db, org.orgId, "prod");
  await t.db.insert(flowControlPolicies).values({ id: newId("flowControlPolicy"), selector: "environment", orgId: org.orgId, selectorId: prod.id, pauseBeforeApply: true });
  await stack.registerKind("TestSlow", "slow", [{ name: "name", type: "string", required: true, description: "folder" }]);
  await stack.registerKind("TestCycle", "cyclic");
  await stack.registerKind("TestImport", "importable");
  await stack.component("site", "dev", "StaticSite", { site_name: "site" });
  await stack.component("shop", "prod", "StaticSite", { site_name: "shop" });
  await stack.component("creds", "staging", "DatabaseCredentials", { database_name: "orders" });
  await stack.component("slow", "dev", "TestSlow", { name: "one" });
  await stack.component("cycle", "dev", "TestCycle", {});
  await stack.component("adopt", "dev", "TestImport", {});
  for (let i = 0; i < 3; i++) await stack.component(`fleet-${i}`, "dev", "StaticSite", { site_name: `fleet-${i}` });
  await startRunner("runner-a");
}, 240_000);

afterAll(async () => {
  await stack?.close();
});

describe("Infra Jobs, end to end", () => {
  it("a preview plans the changes, saves the plan with its checksum, and changes nothing", async () => {
    const job = await finished((await run("site", "preview")).id);
    expect(job.result).toBe("succeeded");
    expect(stepsOf(job)).toEqual(["init:completed/succeeded", "refresh:completed/succeeded", "preview:completed/succeeded"]);
    const plan = await api.jobs.plan.query({ org: org.slug, id: job.id });
    expect(plan.checksum).toMatch(/^[0-9a-f]{64}$/);
    expect(plan.state.providerSchemaHash).toMatch(/^[0-9a-f]{64}$/);
    // The record names the module version it ran and the registry it came from, beside its bundle's checksum.
    expect(job.module).toEqual({ name: "static-site", version: "1.0.0", provisioner: "builtin", registry: "platform" });
    expect(job.moduleSha256).toMatch(/^[0-9a-f]{64}$/);
    const slow = await finished((await run("slow", "preview")).id);
    expect(slow.module).toEqual({ name: "slow", version: "0.1.0", provisioner: "builtin", registry: "organization" });
    expect(job.artifacts.some((a) => a.kind === "plan" && a.sha256 === plan.checksum)).toBe(true);
    expect(fs.existsSync(file("sites"))).toBe(false);
    const summary = (await events(job.id)).find((e) => e.type === "summary");
    expect(summary?.payload).toMatchObject({ command: "builtin plan" });
  });

  it("an update on a prod component pauses after its preview, and once approved with the reviewed checksum it applies", async () => {
    const created = await run("shop", "update", { versionMessage: "first release" });
    const paused = await waitFor(created.id, (j) => j.status === "awaiting_approval" || j.status === "completed");
    expect(paused.status).toBe("awaiting_approval");
    expect(stepsOf(paused)).toEqual(["init:completed/succeeded", "refresh:completed/succeeded", "preview:completed/succeeded", "apply:queued/tbd"]);
    const plan = await api.jobs.plan.query({ org: org.slug, id: created.id });

    const wrong = await api.jobs.resume.mutate({ org: org.slug, jobId: created.id, expectedChecksum: "0".repeat(64) }).catch((e) => e);
    expect(wrong.message).toContain("Nothing was approved and nothing ran");
    expect((await api.jobs.get.query({ org: org.slug, id: created.id })).status).toBe("awaiting_approval");

    await api.jobs.resume.mutate({ org: org.slug, jobId: created.id, expectedChecksum: plan.checksum });
    const done = await finished(created.id);
    expect(done.result).toBe("succeeded");
    expect(done.approvals).toHaveLength(1);
    expect(done.approvals[0]).toMatchObject({ planSha256: plan.checksum, userLabel: expect.stringContaining(org.users.engineer.email) });
    const sites = fs.readdirSync(file("sites"));
    expect(sites.some((s) => s.startsWith("shop-"))).toBe(true);
    const summary = (await events(created.id)).filter((e) => e.type === "summary").map((e) => e.payload.command);
    expect(summary).toContain("builtin apply");
  });

  it("an ended job's log is archived as an artifact with its SHA-256, and the CLI saves it checked against the Digest", async () => {
    const job = await finished((await run("site", "preview")).id);
    // The scheduler archives it once the runner has ended its attempt: a signal the job record carries.
    const archived = await waitFor(job.id, (j) => j.artifacts.some((a) => a.kind === "log"));
    const log = archived.artifacts.find((a) => a.kind === "log")!;
    expect(log).toMatchObject({ name: "job.log", encrypted: false });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "planton-job-log-"));
    try {
      const token = await stack.tokenFor("viewer");
      const { planton: asViewer } = plantonCli(() => ({ url: stack.server.url, token, configDir: dir }));
      const target = path.join(dir, "preview.log");
      const saved = await asViewer(["infra", "job", "download-log", job.id, "--output", target]);
      expect(saved.code, saved.stderr).toBe(0);
      expect(saved.stdout).toContain(`sha256 ${log.sha256} (verified against the console's Digest)`);
      const text = fs.readFileSync(target, "utf8");
      expect(createHash("sha256").update(text).digest("hex")).toBe(log.sha256);
      expect(text).toMatch(/^\S+ \[preview\]   \+ local_file.index: Plan to create$/m);
      expect(text).toMatch(/^\S+ \[job\] status completed, succeeded$/m);
      // It never overwrites a file.
      const again = await asViewer(["infra", "job", "download-log", job.id, "--output", target]);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain(`Nothing was saved: ${target} exists.`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a refresh finds drift after a file is deleted by hand, and an update recreates it", async () => {
    expect((await finished((await run("site", "update")).id)).result).toBe("succeeded");
    const siteDir = fs.readdirSync(file("sites")).find((s) => s.startsWith("site-"))!;
    const index = file("sites", siteDir, "index.html");
    expect(fs.existsSync(index)).toBe(true);
    fs.rmSync(index);

    const refresh = await finished((await run("site", "refresh")).id);
    expect(refresh.result).toBe("succeeded");
    const drift = (await events(refresh.id)).filter((e) => e.type === "resource" && e.payload.phase === "drift");
    expect(drift.map((e) => e.payload.address)).toContain("local_file.index");

    expect((await finished((await run("site", "update")).id)).result).toBe("succeeded");
    expect(fs.existsSync(index)).toBe(true);
  });

  it("a destroy removes every resource and leaves an empty state", async () => {
    const job = await finished((await run("site", "destroy")).id);
    expect(job.result).toBe("succeeded");
    expect(fs.readdirSync(file("sites")).some((s) => s.startsWith("site-"))).toBe(false);
    const [st] = await t.db.select().from(stateObjects).where(eq(stateObjects.componentId, ids.site));
    expect((st.state as { resources: unknown[] }).resources).toEqual([]);
    expect(st.lockInfo).toBeNull();
    expect((await events(job.id)).some((e) => e.type === "summary" && e.payload.command === "builtin destroy")).toBe(true);
    // The refresh before it saw the site's outputs; what the destroy removed reports none.
    expect((await events(job.id)).some((e) => e.type === "outputs" && e.operation === "refresh" && "site_path" in (e.payload.outputs as object))).toBe(true);
    expect(job.outputs).toEqual({});
  });

  it("an import reads an existing file into state without changing it", async () => {
    fs.mkdirSync(file("imported"), { recursive: true });
    fs.writeFileSync(file("imported", "readme.txt"), "made by hand\n");
    const before = fs.statSync(file("imported", "readme.txt")).mtimeMs;
    const job = await finished((await run("adopt", "import", { import: { address: "local_file.existing", id: "imported/readme.txt" } })).id);
    expect(job.result).toBe("succeeded");
    expect(stepsOf(job)).toEqual(["init:completed/succeeded", "import:completed/succeeded", "refresh:completed/succeeded"]);
    expect(fs.statSync(file("imported", "readme.txt")).mtimeMs).toBe(before);
    const [st] = await t.db.select().from(stateObjects).where(eq(stateObjects.componentId, ids.adopt));
    expect((st.state as { resources: { type: string; name: string }[] }).resources.map((r) => `${r.type}.${r.name}`)).toEqual(["local_file.existing"]);
    // A preview afterwards has nothing to do.
    const preview = await finished((await run("adopt", "preview")).id);
    expect((await api.jobs.plan.query({ org: org.slug, id: preview.id })).counts.byAction).toEqual({});
  });

  it("a cycle in the module is refused before anything runs", async () => {
    const job = await finished((await run("cycle", "update")).id);
    expect(job.result).toBe("failed");
    const failedStep = job.steps.find((s) => s.result === "failed")!;
    expect(failedStep.reason).toMatch(/Cycle: terraform_data\.(a|b), terraform_data\.(a|b)/);
    expect(job.steps.find((s) => s.step === "apply")?.result).not.toBe("succeeded");
  });

  it("an unknown operation is refused as Unknown Operation and no job is created", async () => {
    const before = (await api.jobs.list.query({ org: org.slug, componentId: ids.site })).jobs.length;
    const err = await run("site", "deploy").catch((e) => e);
    expect(err.message).toContain("Unknown Operation");
    expect(err.message).toContain("refresh, preview, update, destroy, destroy_preview, import");
    expect((await api.jobs.list.query({ org: org.slug, componentId: ids.site })).jobs.length).toBe(before);
  });

  it("a generated password reaches the secret store and shows only as a $secret reference", async () => {
    const job = await finished((await run("creds", "update")).id);
    expect(job.result).toBe("succeeded");
    const outputs = job.outputs as Record<string, { value: unknown; sensitive: boolean }>;
    expect(outputs.password).toMatchObject({ sensitive: true, value: expect.stringMatching(/^\$secret\//) });
    const all = JSON.stringify(await events(job.id));
    const [st] = await t.db.select().from(stateObjects).where(eq(stateObjects.componentId, ids.creds));
    const real = (st.state as { outputs: { password: { value: string } } }).outputs.password.value;
    expect(real.length).toBeGreaterThan(8);
    expect(all).not.toContain(real);
    expect(fs.readFileSync(file("credentials", "orders.env"), "utf8")).not.toContain(real);
  });

  it("a rerun makes a new job linked to the old one, with a fresh preflight", async () => {
    const first = await finished((await run("site", "preview")).id);
    const rerun = await api.jobs.rerun.mutate({ org: org.slug, jobId: first.id });
    expect(rerun.id).not.toBe(first.id);
    const done = await finished(rerun.id);
    expect(done).toMatchObject({ rerunOf: first.id, result: "succeeded" });
  });

  it("an event stream resumed with the last seq it saw gets every event once", async () => {
    const job = await run("site", "update");
    const seen: number[] = [];
    const collect = (lastEventId: string | null, stopAfter: number | null) =>
      new Promise<void>((resolve, reject) => {
        let n = 0;
        const sub = api.jobs.stream.subscribe(
          { org: org.slug, id: job.id, lastEventId },
          {
            onData: (tracked) => {
              const e = tracked.data as ProgressEvent;
              seen.push(e.seq);
              n++;
              const ended = e.type === "job_status" && e.payload.status === "completed";
              if ((stopAfter !== null && n >= stopAfter) || ended) {
                sub.unsubscribe();
                resolve();
              }
            },
            onError: reject,
          },
        );
      });
    await collect(null, 5);
    await collect(String(seen[seen.length - 1]), null);
    const all = (await events(job.id)).map((e) => e.seq);
    expect(seen).toEqual(all);
    expect(new Set(seen).size).toBe(seen.length);
    expect(all).toEqual(all.map((_, i) => i + 1));
  });

  it("a cancel that lands while the last operation runs comes too late: apply finishes, the job succeeds and its record says so, state consistent", async () => {
    stack.gates.hold("one");
    const job = await run("slow", "update");
    await stack.gates.held("one");
    await api.jobs.cancel.mutate({ org: org.slug, jobId: job.id });
    expect((await api.jobs.get.query({ org: org.slug, id: job.id })).steps.find((s) => s.step === "apply")?.status).toBe("running");
    stack.gates.release("one");
    const done = await finished(job.id);
    expect(done.result).toBe("succeeded");
    expect(done.reason).toMatch(/^Succeeded: the cancel asked for by .+ came too late; apply, the last operation, was already running and finished, so there was nothing left to stop\.$/);
    expect(done.steps.find((s) => s.step === "apply")).toMatchObject({ status: "completed", result: "succeeded" });
    expect(fs.readFileSync(file("slow", "one", "after.txt"), "utf8")).toMatch(/^after /);
    const [st] = await t.db.select().from(stateObjects).where(eq(stateObjects.componentId, ids.slow));
    expect(st.lockInfo).toBeNull();
  });

  it("a queued job behind a running one waits its turn, and is cancelled at once when asked", async () => {
    await t.db.delete(stateObjects).where(eq(stateObjects.componentId, ids.slow));
    fs.rmSync(file("slow"), { recursive: true, force: true });
    stack.gates.hold("one");
    const first = await run("slow", "update");
    const second = await run("slow", "preview");
    await stack.gates.held("one");
    expect((await api.jobs.get.query({ org: org.slug, id: second.id })).status).toBe("queued");
    await api.jobs.cancel.mutate({ org: org.slug, jobId: second.id });
    const cancelled = await api.jobs.get.query({ org: org.slug, id: second.id });
    expect(cancelled).toMatchObject({ status: "completed", result: "cancelled" });
    expect(cancelled.steps.every((s) => s.result === "cancelled")).toBe(true);
    stack.gates.release("one");
    expect((await finished(first.id)).result).toBe("succeeded");
  });

  it("a stale plan is refused: the state changed after the preview was reviewed", async () => {
    const created = await run("shop", "update", { versionMessage: "second" });
    await waitFor(created.id, (j) => j.status === "awaiting_approval");
    const plan = await api.jobs.plan.query({ org: org.slug, id: created.id });
    // Another writer moved the state on while the plan waited for review.
    const [st] = await t.db.select().from(stateObjects).where(eq(stateObjects.componentId, ids.shop));
    const moved = { ...(st.state as Record<string, unknown>), serial: (st.serial ?? 0) + 5 };
    await t.db.update(stateObjects).set({ state: moved, serial: (st.serial ?? 0) + 5 }).where(eq(stateObjects.id, st.id));
    await api.jobs.resume.mutate({ org: org.slug, jobId: created.id, expectedChecksum: plan.checksum });
    const done = await finished(created.id);
    expect(done.result).toBe("failed");
    expect(done.steps.find((s) => s.step === "apply")?.reason).toContain("Saved plan is stale");
  });

  it("two runner processes never run one job twice", async () => {
    await startRunner("runner-b");
    const jobs = [];
    for (let round = 0; round < 2; round++) for (let i = 0; i < 3; i++) jobs.push(await run(`fleet-${i}`, round === 0 ? "update" : "preview"));
    const done = await Promise.all(jobs.map((j) => finished(j.id)));
    for (const j of done) {
      expect(j.result, `${j.id}: ${j.reason}`).toBe("succeeded");
      expect(j.attempts).toHaveLength(1);
      // Each attempt names the job-scoped credential it ran with (its id, never the credential).
      const [row] = await t.db.select().from(runnerAttempts).where(eq(runnerAttempts.jobId, j.id));
      expect(j.attempts[0]).toMatchObject({ id: row.id, credentialId: row.credentialId });
      expect(row.credentialId).toMatch(/^jcr_/);
    }
    expect(new Set(done.map((j) => j.attempts[0].credentialId)).size).toBe(done.length);
  });

  it("a runner killed mid-apply is declared lost, loses nothing it finished (its state changes are compacted), its lock released, and the next job on the component succeeds on the intact state", async () => {
    for (const r of runners.splice(0)) r.kill("SIGKILL");
    await t.db.delete(stateObjects).where(eq(stateObjects.componentId, ids.slow));
    fs.rmSync(file("slow"), { recursive: true, force: true });
    const victim = await startRunner("runner-c", 1);
    stack.gates.hold("one");
    const job = await run("slow", "update");
    await stack.gates.held("one");
    // The first file is written and its state change kept by the console (not yet a state write: the
    // apply's changes are compacted when it ends); kill the runner while the gate holds the apply.
    await vi.waitFor(async () => expect(await journaledAddresses(t.db, job.id)).toEqual(["local_file.first"]), { timeout: 60_000, interval: 100 });
    const [held] = await t.db.select().from(stateObjects).where(eq(stateObjects.componentId, ids.slow));
    expect((held?.state as { resources?: { name: string }[] } | null)?.resources ?? []).toEqual([]);
    victim.kill("SIGKILL");

    const lost = await finished(job.id);
    expect(lost.result).toBe("failed");
    expect(lost.steps.find((s) => s.step === "apply")).toMatchObject({ result: "failed", reason: expect.stringContaining("runner lost") });
    expect(lost.attempts[0].reason).toContain("runner lost");
    const [st] = await t.db.select().from(stateObjects).where(eq(stateObjects.componentId, ids.slow));
    expect(st.lockInfo).toBeNull();
    expect((st.state as { resources: { name: string }[] }).resources.map((r) => r.name)).toEqual(["first"]);
    expect(await journaledAddresses(t.db, job.id)).toEqual([]);
    // One version for what the lost apply finished, not one per resource.
    expect(await t.db.select({ id: stateVersions.id }).from(stateVersions).where(eq(stateVersions.jobId, job.id))).toHaveLength(1);

    await startRunner("runner-d");
    stack.gates.release("one");
    const next = await finished((await run("slow", "update")).id);
    expect(next.result).toBe("succeeded");
    const resources = await api.jobs.plan.query({ org: org.slug, id: next.id });
    expect(resources.counts.byAction).toEqual({ create: 2 });
    expect(fs.readFileSync(file("slow", "one", "after.txt"), "utf8")).toMatch(/^after /);
  });

  it("every reason and diagnostic the suite's jobs recorded reads as one sentence: none ends in a double period", async () => {
    const texts = [
      ...(await t.db.select({ text: infraJobs.reason }).from(infraJobs)).map((r) => r.text),
      ...(await t.db.select({ text: jobOperations.reason }).from(jobOperations)).map((r) => r.text),
      ...(await t.db.select({ text: runnerAttempts.reason }).from(runnerAttempts)).map((r) => r.text),
      ...(await t.db.select({ p: progressEvents.payload }).from(progressEvents).where(eq(progressEvents.type, "diagnostic")))
        .map((r) => r.p as { summary?: unknown; detail?: unknown })
        .flatMap((p) => [p.summary, p.detail]),
    ].filter((x): x is string => typeof x === "string" && x.length > 0);
    expect(texts.length).toBeGreaterThan(20);
    expect(texts.filter((x) => /\.\.(\s|$)/.test(x))).toEqual([]);
  });
});
