import { access, chmod, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JobClient, type RunnerClient } from "../client";
import type { EventDraft } from "../events";
import { silentLogger } from "../log";
import { Redactor } from "../redact";
import { RemoteStateBackend } from "../remote-state";
import { startRunnerConsole, type RunnerConsole } from "../test/console";
import { tempDir } from "../test/helpers";
import { StateLockedError } from "../../engine/index";
import { artifacts } from "../../db/schema";
import { eq } from "drizzle-orm";
import type { StepContext } from "./adapter";
import { ownBackend, PulumiAdapter, PulumiOutputReader } from "./pulumi";
import { BuiltinAdapter } from "./builtin";
import { TofuAdapter } from "./tofu";

async function ctxWithPath(pathDirs: string[], overrides: Partial<StepContext> = {}): Promise<StepContext & { events: EventDraft[] }> {
  const workDir = await tempDir();
  const moduleDir = path.join(workDir, "module");
  await mkdir(moduleDir, { recursive: true });
  const events: EventDraft[] = [];
  return {
    events,
    input: {
      jobId: "job_1",
      orgId: "org_1",
      component: { id: "cmp_1", name: "net", kind: "Network", environment: "dev" },
      operation: "update",
      steps: ["init", "refresh", "preview", "apply"],
      module: { name: "net", version: "1.0.0", provisioner: "tofu", source: "platform", files: {}, sha256: "" },
      variables: {},
      connection: null,
      backend: { id: "sbk_1", name: "s3-main", kind: "s3", config: {} },
      policy: { manualStart: false, skipRefresh: false, previewBeforeApply: true, pauseBeforeApply: false, protectDeletes: false },
      parallelism: 10,
    },
    step: "init",
    attemptId: "att_1",
    moduleDir,
    workDir,
    stateBackupDir: path.join(workDir, "state-backups"),
    variables: {},
    job: new JobClient("http://127.0.0.1:9", "job_1", "jcr_x", { attempts: 1, baseMs: 1, maxMs: 1 }),
    emit: (e) => events.push(e),
    redactor: new Redactor(),
    log: silentLogger,
    signal: new AbortController().signal,
    env: { PATH: pathDirs.join(path.delimiter) } as unknown as NodeJS.ProcessEnv,
    ...overrides,
  };
}

// Adapters that upload plans or keep state talk to the built console, with a job claimed for real.
let c: RunnerConsole;
let runner: RunnerClient;
let claims = 0;
beforeAll(async () => {
  c = await startRunnerConsole({ env: { PLANTON_LEASE_SECONDS: "300" } });
  runner = (await c.newRunner("engines")).client;
}, 240_000);
afterAll(() => c?.close());

/** A job claimed on a fresh component, and a client holding its credential. */
async function claimedJob(): Promise<{ jobId: string; component: string; job: JobClient }> {
  const component = `engines-${++claims}`;
  const jobId = await c.queue(component, "update");
  const claim = await c.claimNext(runner);
  expect(claim.job.id).toBe(jobId);
  return { jobId, component, job: runner.job(jobId, claim.credential.token) };
}

describe("CLI engines when the binary is missing", () => {
  it("tofu: init fails naming the missing binary and how to install it", async () => {
    const ctx = await ctxWithPath([await tempDir()]);
    const r = await new TofuAdapter("tofu").init(ctx);
    expect(r).toEqual({ ok: false, reason: expect.stringContaining("OpenTofu is not installed on this runner: no `tofu` binary on PATH") });
    expect((r as { reason: string }).reason).toContain("https://opentofu.org/docs/intro/install/");
  });

  it("terraform: init fails naming terraform", async () => {
    const r = await new TofuAdapter("terraform").init(await ctxWithPath([]));
    expect((r as { reason: string }).reason).toMatch(/Terraform is not installed on this runner: no `terraform` binary on PATH.*developer\.hashicorp\.com\/terraform\/install/);
  });

  it("pulumi: init fails naming the missing binary and how to install it", async () => {
    const r = await new PulumiAdapter().init(await ctxWithPath([await tempDir()]));
    expect((r as { reason: string }).reason).toMatch(/Pulumi is not installed on this runner: no `pulumi` binary on PATH.*pulumi\.com\/docs\/install/);
  });
});

describe("tofu adapter with a stand-in `tofu` on PATH", () => {
  it("runs `tofu plan -json -out=…` and turns its JSON lines into events", async () => {
    // A stand-in script printing sample lines written by hand in OpenTofu's documented -json format.
    const bin = await tempDir("fake-bin-");
    const samples = [
      `{"@level":"info","@message":"OpenTofu 1.8.0","@module":"tofu.ui","@timestamp":"2026-01-01T00:00:00Z","tofu":"1.8.0","type":"version","ui":"1.2"}`,
      `{"@level":"info","@message":"null_resource.a: Plan to create","@module":"tofu.ui","@timestamp":"2026-01-01T00:00:00Z","change":{"resource":{"addr":"null_resource.a","module":"","resource":"null_resource.a","implied_provider":"null","resource_type":"null_resource","resource_name":"a","resource_key":null},"action":"create"},"type":"planned_change"}`,
      `{"@level":"info","@message":"Plan: 1 to add, 0 to change, 0 to destroy.","@module":"tofu.ui","@timestamp":"2026-01-01T00:00:00Z","changes":{"add":1,"change":0,"import":0,"remove":0,"operation":"plan"},"type":"change_summary"}`,
    ];
    const script = `#!/bin/sh\nfor a in "$@"; do case "$a" in -out=*) printf 'PLANBYTES' > "\${a#-out=}";; esac; done\ncat <<'EOF'\n${samples.join("\n")}\nEOF\n`;
    await writeFile(path.join(bin, "tofu"), script);
    await chmod(path.join(bin, "tofu"), 0o755);
    const ctx = await ctxWithPath([bin, "/usr/bin", "/bin"], { step: "preview" });
    const claimed = await claimedJob();
    ctx.job = claimed.job;
    const r = await new TofuAdapter("tofu").preview(ctx);
    expect(r).toMatchObject({ ok: true, plan: { sha256: expect.stringMatching(/^[0-9a-f]{64}$/), summary: { command: "tofu plan", add: 1, change: 0, remove: 0 } } });
    expect((await c.artifacts(claimed.jobId)).find((a) => a.kind === "plan")!.text).toBe("PLANBYTES");
    expect(ctx.events[0]!.payload.line).toMatch(/\$ tofu plan -json -input=false -out=.*plan\.tfplan/);
    expect(ctx.events.filter((e) => e.type !== "log")).toEqual([
      { type: "resource", payload: { address: "null_resource.a", type: "null_resource", action: "create", phase: "planned", message: "null_resource.a: Plan to create" } },
      { type: "summary", payload: { command: "tofu plan", operation: "plan", add: 1, change: 0, remove: 0 } },
    ]);
  });
});

describe("delete protection on engines that cannot leave a change out", () => {
  const protectedPolicy = { manualStart: false, skipRefresh: false, previewBeforeApply: true, pauseBeforeApply: false, protectDeletes: true };
  const exists = (p: string) => access(p).then(() => true, () => false);

  /** A stand-in `tofu`: `show -json` prints the given plan document, `apply` leaves a marker file. */
  async function tofuWith(showJson: object): Promise<string> {
    const bin = await tempDir("fake-bin-");
    await writeFile(path.join(bin, "show.json"), JSON.stringify(showJson));
    const script = `#!/bin/sh\ncase "$1" in\n  show) cat "${bin}/show.json";;\n  apply) echo applied > applied.marker;;\nesac\n`;
    await writeFile(path.join(bin, "tofu"), script);
    await chmod(path.join(bin, "tofu"), 0o755);
    return bin;
  }

  async function protectedApply(bin: string, policy = protectedPolicy) {
    const ctx = await ctxWithPath([bin, "/usr/bin", "/bin"], { step: "apply" });
    ctx.input = { ...ctx.input, policy };
    ctx.job = (await claimedJob()).job;
    ctx.plan = await ctx.job.uploadArtifact("plan", "plan.tfplan", new TextEncoder().encode("PLANBYTES"));
    return { ctx, result: await new TofuAdapter("tofu").apply(ctx) };
  }

  // Sample written by hand in the shape of OpenTofu's documented `tofu show -json` plan output.
  const sample = (actions: string[][]) => ({
    format_version: "1.2",
    resource_changes: actions.map((a, i) => ({ address: `aws_s3_bucket.b${i}`, mode: "managed", type: "aws_s3_bucket", name: `b${i}`, change: { actions: a, before: {}, after: null } })),
  });

  it("tofu refuses an update whose plan deletes or replaces, naming them and the fix, and applies nothing", async () => {
    const bin = await tofuWith(sample([["delete"], ["delete", "create"], ["update"]]));
    const { ctx, result } = await protectedApply(bin);
    expect(result).toEqual({
      ok: false,
      reason:
        'Nothing was applied: delete protection is on for this component, and the plan deletes or replaces 2 resource(s) (aws_s3_bucket.b0, aws_s3_bucket.b1); OpenTofu cannot leave them out of an apply. To delete them, run a destroy job for the component, or turn "Protect deletes" off for the component\'s flow-control policy (Settings → Flow Control) and run the update again.',
    });
    expect(await exists(path.join(ctx.moduleDir, "applied.marker"))).toBe(false);
  });

  it("tofu applies a protected update whose plan deletes nothing, and an unprotected one that does", async () => {
    const harmless = await protectedApply(await tofuWith(sample([["update"], ["create"]])));
    expect(harmless.result).toEqual({ ok: true });
    expect(await exists(path.join(harmless.ctx.moduleDir, "applied.marker"))).toBe(true);
    const off = await protectedApply(await tofuWith(sample([["delete"]])), { ...protectedPolicy, protectDeletes: false });
    expect(off.result).toEqual({ ok: true });
    expect(await exists(path.join(off.ctx.moduleDir, "applied.marker"))).toBe(true);
  });

  it("pulumi refuses an update under protection before running anything, and says why", async () => {
    const bin = await tempDir("fake-bin-");
    const marker = path.join(bin, "ran.marker");
    await writeFile(path.join(bin, "pulumi"), `#!/bin/sh\necho ran > "${marker}"\n`);
    await chmod(path.join(bin, "pulumi"), 0o755);
    const ctx = await ctxWithPath([bin, "/usr/bin", "/bin"], { step: "apply" });
    ctx.input = { ...ctx.input, policy: protectedPolicy };
    const r = await new PulumiAdapter().apply(ctx);
    expect(r).toEqual({ ok: false, reason: expect.stringMatching(/^Nothing was applied: delete protection is on for this component, and Pulumi cannot tell before an update whether it deletes or replaces resources/) });
    expect((r as { reason: string }).reason).toContain('turn "Protect deletes" off for the component\'s flow-control policy (Settings → Flow Control) and run the update again');
    expect(await exists(marker)).toBe(false);
  });
});

describe("a Pulumi module's own backend", () => {
  it("is read from Pulumi.yaml (backend.url), shown without credentials or query; none without one", async () => {
    const dir = await tempDir();
    expect(await ownBackend(dir)).toBeNull();
    await writeFile(path.join(dir, "Pulumi.yaml"), "name: pets\nruntime: nodejs\n");
    expect(await ownBackend(dir)).toBeNull();
    await writeFile(path.join(dir, "Pulumi.yaml"), "name: pets\nruntime: nodejs\nbackend:\n  url: s3://team-state/pets?region=eu-west-1&awssdk=v2\n");
    expect(await ownBackend(dir)).toBe("s3://team-state/pets");
    await writeFile(path.join(dir, "Pulumi.yaml"), "name: pets\nbackend:\n  url: https://ci:s3cret@pulumi.example.com/api\n");
    expect(await ownBackend(dir)).toBe("https://pulumi.example.com/api");
  });
});

describe("pulumi output reader", () => {
  it("translates streamed engine events line by line and a preview document at the end", () => {
    const events: EventDraft[] = [];
    const reader = new PulumiOutputReader((e) => events.push(e), { command: "pulumi up" });
    // Sample lines written by hand from Pulumi's documented engine events.
    reader.line(`{"sequence":1,"timestamp":1,"resourcePreEvent":{"metadata":{"op":"create","urn":"urn:pulumi:dev::p::random:index/randomPet:RandomPet::pet","type":"random:index/randomPet:RandomPet"}}}`);
    reader.line(`{"sequence":2,"timestamp":2,"summaryEvent":{"resourceChanges":{"create":1}}}`);
    reader.end();
    expect(events.filter((e) => e.type !== "log").map((e) => e.type)).toEqual(["resource", "summary"]);
    const preview: EventDraft[] = [];
    const r2 = new PulumiOutputReader((e) => preview.push(e), { command: "pulumi preview" });
    for (const l of JSON.stringify({ steps: [{ op: "update", urn: "urn:pulumi:dev::p::t::n" }], changeSummary: { update: 1 } }, null, 2).split("\n")) r2.line(l);
    r2.end();
    expect(preview.find((e) => e.type === "summary")!.payload).toEqual({ command: "pulumi preview", operation: "plan", add: 0, change: 1, remove: 0 });
  });
});

describe("remote state backend (against the real server's state routes)", () => {
  it("locks, reads, writes under the lock id, and turns a refused lock into engine's StateLockedError", async () => {
    const { job, component } = await claimedJob();
    const a = new RemoteStateBackend(job, { path: "cmp_1/planton-managed", who: "runner-a" });
    const b = new RemoteStateBackend(job, { path: "cmp_1/planton-managed", who: "runner-b" });
    const lock = await a.lock({ Operation: "OperationTypeApply" });
    expect((await c.state(component)).lock).toMatchObject({ Operation: "OperationTypeApply", Who: "runner-a", Path: "cmp_1/planton-managed" });
    const err = await b.lock({ Operation: "OperationTypePlan" }).catch((e) => e);
    expect(err).toBeInstanceOf(StateLockedError);
    expect(err.message).toMatch(/^Error acquiring the state lock/);
    expect(err.message).toContain("Who:       runner-a");
    expect(await a.get()).toBeNull();
    const state = { version: 4 as const, terraform_version: "1.8.0", serial: 1, lineage: "l-1", outputs: {}, resources: [], check_results: null };
    await a.put(state);
    expect((await c.state(component)).state).toEqual(state);
    expect(await a.get()).toEqual(state);
    await expect(b.put(state)).rejects.toThrow(/does not hold the state lock/);
    await a.unlock(lock.ID);
    expect((await c.state(component)).lock).toBeNull();
  });
});

describe("builtin adapter: the reviewed plan", () => {
  /** A claimed job's builtin preview of one terraform_data resource: its context, the adapter, and the plan it made (with its bytes). */
  async function previewedOne() {
    const { job, component } = await claimedJob();
    const ctx = await ctxWithPath([], { job, step: "preview" });
    ctx.input = { ...ctx.input, module: { ...ctx.input.module, provisioner: "builtin" } };
    await writeFile(path.join(ctx.moduleDir, "main.tf"), 'resource "terraform_data" "a" {\n  input = "one"\n}\n');
    const adapter = new BuiltinAdapter();
    const previewed = await adapter.preview(ctx);
    if (!previewed.ok || !previewed.plan?.bytes) throw new Error(`preview failed or kept no plan bytes: ${previewed.ok ? "no bytes" : previewed.reason}`);
    return { ctx, adapter, component, plan: previewed.plan };
  }

  it("an apply whose plan does not match the reviewed checksum applies nothing and releases the state lock it took meanwhile; the reviewed plan then applies", async () => {
    const { ctx, adapter, component, plan } = await previewedOne();
    const { artifactId, sha256 } = plan;

    const tampered = await adapter.apply({ ...ctx, step: "apply", plan: { artifactId, sha256: "0".repeat(64) } });
    expect(tampered).toEqual({ ok: false, reason: expect.stringContaining("nothing was applied") });
    expect(await c.state(component)).toEqual({ state: null, lock: null });

    expect(await adapter.apply({ ...ctx, step: "apply", plan: { artifactId, sha256 } })).toEqual({ ok: true });
    const after = await c.state(component);
    expect(after.lock).toBeNull();
    expect(after.state?.resources.map((r) => `${r.type}.${r.name}`)).toEqual(["terraform_data.a"]);
  });

  it("the apply of this attempt's own preview executes the bytes that preview made, checked against the plan's checksum, without downloading them", async () => {
    const { ctx, adapter, component, plan } = await previewedOne();
    const { artifactId, sha256, bytes } = plan;
    // The stored plan is gone: an apply that downloads it fails; one holding the preview's bytes needs nothing from the server.
    await c.t.db.delete(artifacts).where(eq(artifacts.id, artifactId));
    expect(await adapter.apply({ ...ctx, step: "apply", plan: { artifactId, sha256 } })).toEqual({ ok: false, reason: expect.stringMatching(/404|not found/i) });
    // Bytes that are not the plan the checksum names are not used: the apply downloads (and here finds nothing).
    const other = new TextEncoder().encode('{"not":"this plan"}');
    expect(await adapter.apply({ ...ctx, step: "apply", plan: { artifactId, sha256, bytes: other } })).toEqual({ ok: false, reason: expect.stringMatching(/404|not found/i) });
    expect(await c.state(component)).toEqual({ state: null, lock: null });

    expect(await adapter.apply({ ...ctx, step: "apply", plan: { artifactId, sha256, bytes } })).toEqual({ ok: true });
    expect((await c.state(component)).state?.resources.map((r) => `${r.type}.${r.name}`)).toEqual(["terraform_data.a"]);
  });
});
