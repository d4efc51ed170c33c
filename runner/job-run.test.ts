import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RunnerClient } from "./client";
import { runJob } from "./job-run";
import { StandInServer } from "./test/stand-in-server";
import { moduleFiles, tempDir } from "./test/helpers";
import type { ClaimResponse } from "../lib/runner-protocol";

// These tests run the real builtin engine against a STAND-IN for the server's runner routes
// (runner/test/stand-in-server.ts); the real server's routes are being written in parallel.
describe("a claimed builtin job, run against a stand-in server", () => {
  let server: StandInServer;
  let runner: RunnerClient;
  let root: string;
  let workRoot: string;
  let files: Record<string, string>;

  beforeEach(async () => {
    server = await new StandInServer().start();
    runner = new RunnerClient(server.url, "rnr_test", { attempts: 3, baseMs: 5, maxMs: 20 });
    root = await tempDir("planton-root-");
    workRoot = await tempDir("planton-work-");
    files = await moduleFiles("static-site");
  });
  afterEach(() => server.stop());

  const claimNext = async (): Promise<ClaimResponse> => (await runner.claim({ capacity: 1, waitSeconds: 0 }))!;
  const connection = () => ({ name: "laptop", provider: "local", mode: "stored" as const, config: { root } });
  const events = () => server.eventsInOrder();

  it("update: plans, saves the plan artifact, applies exactly it, then a refresh finds no drift", async () => {
    server.enqueue({ operation: "update", steps: ["init", "refresh", "preview", "apply"], variables: { site_name: "docs" }, connection: connection() }, files);
    const result = await runJob(await claimNext(), { runner, workRoot });
    expect(result).toMatchObject({ exitCode: 0, reason: "completed" });
    expect(server.stepStarts).toEqual(["init", "refresh", "preview", "apply"]);
    expect(server.stepFinishes.map((f) => [f.step, f.body.result])).toEqual([
      ["init", "succeeded"],
      ["refresh", "succeeded"],
      ["preview", "succeeded"],
      ["apply", "succeeded"],
    ]);
    // The preview's plan went up as an artifact, and its checksum is what the finish reported.
    const preview = server.stepFinishes.find((f) => f.step === "preview")!.body.plan as { artifactId: string; sha256: string; summary: Record<string, unknown> };
    expect(preview.summary).toMatchObject({ add: 5, change: 0, remove: 0 });
    expect(server.artifacts.has(preview.artifactId)).toBe(true);
    // Files are on disk under the connection's root; the state is in the (stand-in) managed backend, unlocked.
    const sitePath = server.state!.outputs.site_path!.value as string;
    expect(await readFile(path.join(root, sitePath, "robots.txt"), "utf8")).toBe("User-agent: *\nAllow: /\n");
    expect(server.state!.resources).toHaveLength(5);
    expect(server.lock).toBeNull();
    // Events: numbered from 1 without gaps, with the engine's commands in the summaries.
    expect(events().map((e) => e.seq)).toEqual(events().map((_, i) => i + 1));
    const summaries = events().filter((e) => e.type === "summary").map((e) => [e.operation, e.payload.command, e.payload.add]);
    // (The first refresh has no state yet, so the engine makes no summary for it.)
    expect(summaries).toEqual([
      ["preview", "builtin plan", 5],
      ["apply", "builtin apply", 5],
    ]);
    expect(events().some((e) => e.type === "resource" && e.operation === "apply" && e.payload.phase === "complete" && e.payload.address === "local_file.index")).toBe(true);
    expect(events().find((e) => e.type === "outputs")!.payload).toEqual({ outputs: { index_sha256: expect.any(Object), site_path: { value: sitePath, sensitive: false } } });
    expect(server.attemptEnds).toEqual([{ attemptId: expect.any(String), exitCode: 0, reason: "completed" }]);

    // A refresh job afterwards sees no drift; after a file is deleted by hand it does.
    server.enqueue({ operation: "refresh", steps: ["init", "refresh"], variables: { site_name: "docs" }, connection: connection() }, files);
    await runJob(await claimNext(), { runner, workRoot });
    expect(events().filter((e) => e.type === "resource" && e.payload.phase === "drift")).toEqual([]);
    await rm(path.join(root, sitePath, "robots.txt"));
    server.events.clear();
    server.enqueue({ operation: "refresh", steps: ["init", "refresh"], variables: { site_name: "docs" }, connection: connection() }, files);
    await runJob(await claimNext(), { runner, workRoot });
    expect(events().filter((e) => e.type === "resource" && e.payload.phase === "drift").map((e) => [e.payload.address, e.payload.action])).toEqual([["local_file.robots", "delete"]]);
  });

  it("pauses after the preview when the server says stop, and a resumed attempt applies exactly the approved plan", async () => {
    server.onStepFinish = (step) => (step === "preview" ? { next: "stop" } : undefined);
    server.enqueue({ operation: "update", steps: ["init", "refresh", "preview", "apply"], variables: { site_name: "blog" }, connection: connection() }, files);
    const first = await runJob(await claimNext(), { runner, workRoot });
    expect(first.stoppedBy).toBe("server_stop");
    expect(server.stepStarts).toEqual(["init", "refresh", "preview"]);
    expect(server.state).toBeNull();
    const plan = server.stepFinishes.at(-1)!.body.plan as { artifactId: string; sha256: string };

    server.onStepFinish = undefined;
    server.enqueue({ operation: "update", steps: ["init", "apply"], variables: { site_name: "blog" }, connection: connection(), approvedPlan: plan }, files);
    const second = await runJob(await claimNext(), { runner, workRoot });
    expect(second).toMatchObject({ exitCode: 0 });
    expect(server.state!.resources).toHaveLength(5);
  });

  it("refuses to apply a plan whose artifact does not match the approved checksum", async () => {
    server.enqueue({ operation: "update", steps: ["init", "preview"], variables: { site_name: "x" }, connection: connection() }, files);
    await runJob(await claimNext(), { runner, workRoot });
    const plan = server.stepFinishes.at(-1)!.body.plan as { artifactId: string; sha256: string };
    server.enqueue({ operation: "update", steps: ["init", "apply"], variables: { site_name: "x" }, connection: connection(), approvedPlan: { artifactId: plan.artifactId, sha256: "f".repeat(64) } }, files);
    const r = await runJob(await claimNext(), { runner, workRoot });
    expect(r.exitCode).toBe(1);
    expect(r.reason).toMatch(/not the reviewed f{64}; nothing was applied/);
    expect(server.state).toBeNull();
  });

  it("a stale plan is refused by the engine: the state changed after the preview", async () => {
    server.onStepFinish = (step) => (step === "preview" ? { next: "stop" } : undefined);
    server.enqueue({ operation: "update", steps: ["init", "preview"], variables: { site_name: "s" }, connection: connection() }, files);
    await runJob(await claimNext(), { runner, workRoot });
    const plan = server.stepFinishes.at(-1)!.body.plan as { artifactId: string; sha256: string };
    server.onStepFinish = undefined;
    server.enqueue({ operation: "update", steps: ["init", "preview", "apply"], variables: { site_name: "s" }, connection: connection() }, files);
    await runJob(await claimNext(), { runner, workRoot });
    server.enqueue({ operation: "update", steps: ["init", "apply"], variables: { site_name: "s" }, connection: connection(), approvedPlan: plan }, files);
    const r = await runJob(await claimNext(), { runner, workRoot });
    expect(r.reason).toMatch(/Saved plan is stale/);
  });

  it("a held state lock fails the step with OpenTofu's \"Error acquiring the state lock\" and the holder", async () => {
    server.lock = { ID: "lock-1", Path: "cmp_site", Operation: "OperationTypeApply", Who: "someone@elsewhere", Version: "1.8.0", Created: "2026-01-01T00:00:00Z", Info: "job job_other" };
    server.enqueue({ operation: "refresh", steps: ["init", "refresh"], variables: { site_name: "docs" }, connection: connection() }, files);
    const r = await runJob(await claimNext(), { runner, workRoot });
    expect(r.exitCode).toBe(1);
    expect(r.reason).toContain("Error acquiring the state lock");
    expect(r.reason).toContain("someone@elsewhere");
    expect(server.stepFinishes.at(-1)!.body).toMatchObject({ result: "failed", reason: expect.stringContaining("Lock Info:") });
    expect(events().some((e) => e.type === "diagnostic" && String(e.payload.summary).includes("Error acquiring the state lock"))).toBe(true);
  });

  it("a bundle that does not match its checksum fails init and nothing runs", async () => {
    const claim = server.enqueue({ operation: "update", steps: ["init", "refresh", "preview", "apply"], variables: { site_name: "docs" }, connection: connection() }, files);
    claim.input.module.sha256 = "0".repeat(64);
    const r = await runJob(await claimNext(), { runner, workRoot });
    expect(server.stepStarts).toEqual(["init"]);
    expect(r.reason).toMatch(/init failed: Nothing ran: the module bundle does not match its checksum/);
    expect(server.attemptEnds.at(-1)).toMatchObject({ exitCode: 1 });
  });

  it("a cancel during a step lets that step finish and stops at the next boundary", async () => {
    // The stand-in answers heartbeats with cancel from the moment the preview starts, and holds the preview's finish briefly.
    server.onStepStart = (step) => {
      if (step === "preview") server.heartbeatSignal = "cancel";
    };
    server.onStepFinish = async (step) => {
      if (step === "preview") await new Promise((r) => setTimeout(r, 150));
    };
    server.enqueue({ operation: "update", steps: ["init", "refresh", "preview", "apply"], variables: { site_name: "docs" }, connection: connection() }, files);
    const r = await runJob(await claimNext(), { runner, workRoot, heartbeatMs: 20 });
    expect(server.stepFinishes.map((f) => [f.step, f.body.result])).toEqual([
      ["init", "succeeded"],
      ["refresh", "succeeded"],
      ["preview", "succeeded"],
    ]);
    expect(server.stepStarts).not.toContain("apply");
    expect(r.stoppedBy).toBe("cancel");
    expect(server.attemptEnds.at(-1)).toMatchObject({ exitCode: 0, reason: "cancelled: stopped at the step boundary before apply" });
    expect(server.state).toBeNull();
  });

  it("stops working on the job at the next step boundary when a heartbeat is refused (attempt replaced, runner revoked, token rotated)", async () => {
    const message = "Nothing was done: runner r1 was revoked at 2026-12-01T08:00:00.000Z, so its job credentials no longer work. Stop working on job job_1.";
    server.onStepStart = (step) => {
      if (step === "preview") server.heartbeatRefusal = { status: 403, message };
    };
    // The preview's finish waits until a heartbeat has been refused.
    server.onStepFinish = async (step) => {
      while (step === "preview" && server.heartbeatsRefused === 0) await new Promise((r) => setTimeout(r, 10));
    };
    server.enqueue({ operation: "update", steps: ["init", "refresh", "preview", "apply"], variables: { site_name: "docs" }, connection: connection() }, files);
    const r = await runJob(await claimNext(), { runner, workRoot, heartbeatMs: 20 });
    expect(r).toMatchObject({ stoppedBy: "credential_refused", exitCode: 1 });
    expect(r.reason).toMatch(/^stopped before apply: POST \/jobs\/[^/]+\/heartbeat answered 403: /);
    expect(r.reason.endsWith(message)).toBe(true);
    expect(server.stepStarts).toEqual(["init", "refresh", "preview"]);
    expect(server.state).toBeNull();
  });

  it("stops when a step start answers proceed:false", async () => {
    server.onStepStart = (step) => (step === "refresh" ? { proceed: false } : undefined);
    server.enqueue({ operation: "refresh", steps: ["init", "refresh"], variables: { site_name: "docs" }, connection: connection() }, files);
    const r = await runJob(await claimNext(), { runner, workRoot });
    expect(r.stoppedBy).toBe("not_proceed");
    expect(server.stepFinishes.map((f) => f.step)).toEqual(["init"]);
    expect(server.attemptEnds).toHaveLength(1);
  });

  it("uses a renewed credential from the heartbeat for the calls after it", async () => {
    server.renewCredential = { token: "jcr_renewed", expiresAt: new Date(Date.now() + 3600_000).toISOString() };
    server.onStepFinish = async () => void (await new Promise((r) => setTimeout(r, 60)));
    server.enqueue({ operation: "refresh", steps: ["init", "refresh"], variables: { site_name: "docs" }, connection: connection() }, files);
    await runJob(await claimNext(), { runner, workRoot, heartbeatMs: 20 });
    expect(server.tokensSeen.has("Bearer jcr_renewed")).toBe(true);
  });

  it("resolves $secret references in variables and never lets the value reach an event", async () => {
    server.secrets.set("site-title", "Top Secret Title 42");
    server.enqueue({ operation: "update", steps: ["init", "preview", "apply"], variables: { site_name: "sec", title: "$secret/site-title" }, connection: connection() }, files);
    const r = await runJob(await claimNext(), { runner, workRoot });
    expect(r.exitCode).toBe(0);
    const html = await readFile(path.join(root, server.state!.outputs.site_path!.value as string, "index.html"), "utf8");
    expect(html).toContain("Top Secret Title 42");
    expect(JSON.stringify(events())).not.toContain("Top Secret Title 42");
    // Two uploads: the executable plan (which the server encrypts) holds the value; the review rendition never does.
    const uploads = [...server.artifacts.values()].map((b) => new TextDecoder().decode(b));
    expect(uploads.filter((u) => u.includes("Top Secret Title 42")).map((u) => JSON.parse(u).masked)).toEqual([undefined]);
    const review = uploads.find((u) => JSON.parse(u).masked === true)!;
    expect(JSON.parse(review).variables.title.value).toBe("(sensitive value)");
    // The planned diff the job page shows comes masked too.
    const planned = events().filter((e) => e.type === "resource" && e.payload.phase === "planned" && e.payload.after);
    expect(planned.find((e) => e.payload.address === "local_file.index")?.payload.after).toMatchObject({ content: expect.stringContaining("(sensitive value)") });
  });

  it("under delete protection an update shows planned deletes as not executed and counts them as skipped", async () => {
    server.enqueue({ operation: "update", steps: ["init", "preview", "apply"], variables: { site_name: "p" }, connection: connection() }, files);
    await runJob(await claimNext(), { runner, workRoot });
    const fewer = { ...files, "main.tf": files["main.tf"]!.replace(/resource "local_file" "robots" \{[\s\S]*?\n\}\n/, "") };
    fewer["main.tf"] = fewer["main.tf"]!.replace(", local_file.robots.content_sha256", "");
    server.events.clear();
    server.enqueue(
      { operation: "update", steps: ["init", "preview", "apply"], variables: { site_name: "p" }, connection: connection(), policy: { manualStart: false, skipRefresh: false, previewBeforeApply: true, pauseBeforeApply: false, protectDeletes: true } },
      fewer,
    );
    const r = await runJob(await claimNext(), { runner, workRoot });
    expect(r.exitCode).toBe(0);
    const planSummary = events().find((e) => e.type === "summary" && e.operation === "preview")!.payload;
    expect(planSummary).toMatchObject({ command: "builtin plan", remove: 0, skippedDeletes: 1 });
    expect(events().some((e) => e.type === "log" && String(e.payload.line).includes("local_file.robots: Plan to delete (not executed)"))).toBe(true);
    const planned = events().find((e) => e.type === "resource" && e.payload.address === "local_file.robots" && e.payload.phase === "planned")!;
    expect(planned.payload.notExecuted).toMatchObject({ reason: "delete_protection", message: expect.stringContaining("local_file.robots is not deleted") });
    // The uploaded plan is the engine's own: the delete stays in it, marked, for the reviewer to see.
    const saved = JSON.parse(new TextDecoder().decode([...server.artifacts.values()].at(-1)));
    expect(saved.resource_changes.find((c: { address: string }) => c.address === "local_file.robots")).toMatchObject({ action: "delete", not_executed: { reason: "delete_protection" } });
    expect(server.state!.resources.some((x) => x.type === "local_file" && x.name === "robots")).toBe(true);
  });
});
