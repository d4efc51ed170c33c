// Pulumi through its CLI: engine events (`--json`) translated into progress events.
import { cp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { engineCannotProtectPlan, engineCannotProtectUpdate, someAddresses } from "../../lib/delete-protection";
import { STEP_SUMMARY_OPERATION, type PlanReviewRendition } from "../../lib/runner-protocol";
import { artifactJson } from "../../lib/artifacts";
import { PULUMI_OPS, translatePulumiEvent, translatePulumiPreview, type TranslateContext } from "../translate";
import { failure, finalStateSave, planBytes, stateBackupPath, uploadReviewRendition, type EngineAdapter, type PlanRef, type StepContext, type StepOutcome } from "./adapter";
import { privateFolder, writePrivateFile } from "../private-files";
import { findBinary, runCli } from "./cli";
import { reportOutputs } from "./outputs";
import { RemoteStateBackend } from "../remote-state";
import { isPulumiCheckpoint, pulumiIdentity, type PulumiCheckpoint } from "../../state-backends/rules";

export const PULUMI_MISSING =
  "Pulumi is not installed on this runner: no `pulumi` binary on PATH. Install it on the runner host (https://www.pulumi.com/docs/install/, e.g. `curl -fsSL https://get.pulumi.com | sh`), or run the job on a runner that has it, then run the job again.";

/**
 * Feeds `pulumi … --json` stdout to the translator: each line that is an engine event is
 * translated at once; anything else is kept and, at the end, read as one preview document.
 */
export class PulumiOutputReader {
  private rest: string[] = [];
  /** The preview document (`pulumi preview --json`: its steps and change summary), once read at the end. */
  preview: Record<string, unknown> | null = null;
  constructor(
    private readonly emit: StepContext["emit"],
    private readonly tctx: TranslateContext,
  ) {}

  line(text: string): void {
    const t = text.trim();
    if (t.startsWith("{") && t.endsWith("}")) {
      try {
        const ev = JSON.parse(t) as Record<string, unknown>;
        if (Object.keys(ev).some((k) => k.endsWith("Event"))) {
          for (const e of translatePulumiEvent(ev, this.tctx)) this.emit(e);
          return;
        }
      } catch {
        // part of a multi-line document
      }
    }
    this.rest.push(text);
  }

  end(): void {
    if (this.rest.length === 0) return;
    const text = this.rest.join("\n");
    this.rest = [];
    try {
      const doc = JSON.parse(text) as Record<string, unknown>;
      this.preview = doc;
      for (const e of translatePulumiPreview(doc, this.tctx)) this.emit(e);
    } catch {
      for (const line of text.split("\n")) if (line) this.emit({ type: "log", payload: { line } });
    }
  }
}

/** What `pulumi stack export` writes and `pulumi stack import` takes: `{version: 3, deployment: {manifest, resources, …}}`. */
interface PulumiDeployment {
  version: number;
  deployment: NonNullable<PulumiCheckpoint["checkpoint"]["latest"]>;
}

/** One step of `pulumi preview --json`, as far as the review reads it. */
interface PulumiPreviewStep {
  op: string;
  urn: string;
  newState?: { type?: string };
  oldState?: { type?: string };
}

/** The halves of a replacement Pulumi lists beside its `replace` step, which the review counts once. */
const REPLACEMENT_HALVES = new Set(["create-replacement", "delete-replaced", "discard-replaced", "read-replacement"]);

/**
 * What a Pulumi preview changes, for its review rendition: each resource's URN, type and change in the builtin engine's
 * words — no inputs or outputs, which may hold secrets. One change per URN, in the preview's order: a later step of the
 * same resource that changes it wins over "same".
 */
export function previewChanges(steps: PulumiPreviewStep[]): PlanReviewRendition["resource_changes"] {
  const changes = new Map<string, PlanReviewRendition["resource_changes"][number]>();
  for (const s of steps) {
    const action = PULUMI_OPS[s.op] ?? "noop";
    if (REPLACEMENT_HALVES.has(s.op) || (changes.has(s.urn) && action === "noop")) continue;
    changes.set(s.urn, { address: s.urn, type: s.newState?.type ?? s.oldState?.type ?? s.urn.split("::").at(-2) ?? "", action });
  }
  return [...changes.values()];
}

/** What a Pulumi destroy was reviewed as (Pulumi saves no destroy plan of its own): the stack's resources it deletes, by URN. */
interface PulumiDestroyPlan {
  planton_pulumi_destroy_plan: 1;
  stack: string;
  urns: string[];
}

/** The URNs a destroy preview's steps delete, sorted. */
function destroyedUrns(steps: PulumiPreviewStep[]): string[] {
  return [...new Set(steps.filter((s) => PULUMI_OPS[s.op] === "delete" && !REPLACEMENT_HALVES.has(s.op)).map((s) => s.urn))].sort();
}

/** Why an update under delete protection may not run: no saved plan to hold it to, one that cannot be read, or one that deletes. */
function protectedDeletesRefusal(saved: Uint8Array | null): string | null {
  // Written as `pulumi preview --save-plan` writes it, or in its versioned wrapper ({version, plan}).
  const doc = saved && (artifactJson(saved) as { resourcePlans?: unknown; plan?: { resourcePlans?: unknown } } | null);
  const plans = doc?.resourcePlans ?? doc?.plan?.resourcePlans;
  if (!plans || typeof plans !== "object") return engineCannotProtectUpdate("Pulumi");
  const deletes = Object.entries(plans as Record<string, { steps?: string[] }>)
    .filter(([, p]) => (p.steps ?? []).some((op) => PULUMI_OPS[op] === "delete" || PULUMI_OPS[op] === "replace"))
    .map(([urn]) => urn);
  return deletes.length ? engineCannotProtectPlan("Pulumi", deletes) : null;
}

/** Pulumi's file backend in the attempt's workspace. */
const PULUMI_STATE_FOLDER = "pulumi-state";

export const NOT_A_PULUMI_CHECKPOINT =
  "Nothing ran: this component's state is not a Pulumi checkpoint (it holds an OpenTofu state, written by another engine). Run the component with the engine that wrote its state, or move that state aside (Settings → State Backends) before running Pulumi.";

/** The backend a module's Pulumi.yaml names (`backend: {url: …}`), shown without credentials; null when it names none. */
export async function ownBackend(moduleDir: string): Promise<string | null> {
  for (const name of ["Pulumi.yaml", "Pulumi.yml"]) {
    const text = await readFile(path.join(moduleDir, name), "utf8").catch(() => null);
    if (text === null) continue;
    let project: unknown;
    try {
      project = parseYaml(text);
    } catch {
      return null; // Pulumi itself says what is wrong with the file
    }
    const url = (project as { backend?: { url?: unknown } } | null)?.backend?.url;
    if (typeof url !== "string" || !url) return null;
    try {
      const u = new URL(url);
      return `${u.protocol}//${u.host}${u.pathname}`;
    } catch {
      return url.split("?")[0]!.replace(/\/\/[^@/]*@/, "//");
    }
  }
  return null;
}

export class PulumiAdapter implements EngineAdapter {
  readonly name = "pulumi";

  private stack(ctx: StepContext): string {
    return `${ctx.input.component.environment}-${ctx.input.component.name}`.replace(/[^A-Za-z0-9_.-]/g, "-");
  }

  private async env(ctx: StepContext): Promise<NodeJS.ProcessEnv> {
    // Pulumi's own backend is a folder of the attempt's workspace: the component's state comes from, and goes back to,
    // the component's state backend through withState. A module whose Pulumi.yaml names a backend keeps it (the
    // variable would override it), and withState then leaves the state alone.
    const backend = (await ownBackend(ctx.moduleDir)) ? {} : { PULUMI_BACKEND_URL: `file://${path.join(ctx.workDir, PULUMI_STATE_FOLDER)}` };
    return { ...backend, PULUMI_CONFIG_PASSPHRASE: "", PULUMI_SKIP_UPDATE_CHECK: "1", ...ctx.env, PULUMI_EXPERIMENTAL: "1" };
  }

  /** Runs one Pulumi command, its events translated; answers the preview document it printed, if any. */
  private async run(ctx: StepContext, args: string[], command: string): Promise<Record<string, unknown> | null> {
    const bin = findBinary(["pulumi"], ctx.env);
    if (!bin) throw new Error(PULUMI_MISSING);
    ctx.emit({ type: "log", payload: { line: `\x1b[2m$ pulumi ${args.join(" ")}\x1b[0m` } });
    const reader = new PulumiOutputReader(ctx.emit, { command, operation: STEP_SUMMARY_OPERATION[ctx.step] });
    const { code } = await runCli(bin, args, {
      cwd: ctx.moduleDir,
      env: await this.env(ctx),
      signal: ctx.signal,
      onStdout: (l) => reader.line(l),
      onStderr: (l) => l && ctx.emit({ type: "log", payload: { line: l, stream: "stderr" } }),
    });
    reader.end();
    if (code !== 0) throw new Error(`${command} exited with code ${code}; see the log above for the engine's error.`);
    return reader.preview;
  }

  /**
   * The component's state reaches Pulumi through Pulumi's own commands: the checkpoint the component's backend keeps
   * (any kind, through the runner API, under the state lock) is imported into the attempt's backend before the command
   * (`pulumi stack import`), and, when `save`, what the command left is exported after it (`pulumi stack export`, also
   * after a failed command: the resources it made are in it) and written back when Pulumi recorded a new deployment —
   * its manifest time, the checkpoint's serial. A preview (`save` false) writes nothing.
   */
  private async withState<T>(ctx: StepContext, operation: string, save: boolean, fn: (prior: PulumiCheckpoint | null) => Promise<T>): Promise<T> {
    const own = await ownBackend(ctx.moduleDir);
    if (own) {
      ctx.emit({ type: "log", payload: { line: `This module's Pulumi.yaml names its own backend (${own}): the stack's state stays there, not on the component's state backend.` } });
      return fn(null);
    }
    const backend = new RemoteStateBackend(ctx.job, { path: `${ctx.input.component.id}/${ctx.input.backend.name}`, info: `job ${ctx.input.jobId}` });
    const lock = await backend.lock({ Operation: operation });
    try {
      const stored: unknown = await backend.get();
      if (stored && !isPulumiCheckpoint(stored)) throw new Error(NOT_A_PULUMI_CHECKPOINT);
      const prior = stored ? (stored as PulumiCheckpoint) : null;
      const stack = this.stack(ctx);
      const file = path.join(ctx.workDir, "pulumi-deployment.json");
      if (prior?.checkpoint.latest) {
        const deployment: PulumiDeployment = { version: 3, deployment: prior.checkpoint.latest };
        await writePrivateFile(file, JSON.stringify(deployment));
        await this.run(ctx, ["stack", "import", "--file", file, "--stack", stack], "pulumi stack import");
      }
      let failed: unknown = null;
      try {
        return await fn(prior);
      } catch (err) {
        failed = err;
        throw err;
      } finally {
        if (save) await this.saveExported(ctx, { file, stack, prior, put: (reached) => backend.put(reached), failed });
        await rm(file, { force: true });
      }
    } finally {
      await backend.unlock(lock.ID);
    }
  }

  /**
   * Exports what the command left and writes it back when Pulumi recorded a new deployment. An export that fails does
   * not lose the stack: Pulumi's backend folder is copied to the runner's state backups (0700, like a failed final save)
   * and the step fails naming it — and the command's own error, when it failed first.
   */
  private async saveExported(
    ctx: StepContext,
    o: { file: string; stack: string; prior: PulumiCheckpoint | null; put: (reached: PulumiCheckpoint) => Promise<void>; failed: unknown },
  ): Promise<void> {
    let reached: PulumiCheckpoint;
    try {
      await this.run(ctx, ["stack", "export", "--file", o.file, "--stack", o.stack], "pulumi stack export");
      const exported = JSON.parse(await readFile(o.file, "utf8")) as PulumiDeployment;
      // The checkpoint keeps the stack it was first written for: its lineage, which never changes.
      reached = { version: 3, checkpoint: { stack: o.prior?.checkpoint.stack ?? o.stack, latest: exported.deployment } };
    } catch (err) {
      const kept = stateBackupPath(ctx, "-pulumi-state");
      const copied = await privateFolder(ctx.stateBackupDir)
        .then(() => cp(path.join(ctx.workDir, PULUMI_STATE_FOLDER), kept, { recursive: true }))
        .then(() => true, () => false);
      const first = o.failed ? ` (the ${ctx.step} had failed first: ${failure(o.failed).reason})` : "";
      throw new Error(
        `The stack's state could not be exported after the ${ctx.step} (${failure(err).reason})${first}, so it was not saved to the component's state backend. ` +
          (copied ? `Pulumi's backend folder is kept on runner host ${os.hostname()} at ${kept}, readable by the runner's user only: import it (pulumi stack import) before the component's next job.` : "Nothing could be kept on this host either."),
      );
    }
    if (pulumiIdentity(reached).serial !== (o.prior ? pulumiIdentity(o.prior).serial : 0)) await finalStateSave(ctx, reached, () => o.put(reached));
  }

  private async outputs(ctx: StepContext): Promise<void> {
    const bin = findBinary(["pulumi"], ctx.env)!;
    const read = async (showSecrets: boolean) => {
      const args = ["stack", "output", "--json", "--stack", this.stack(ctx), ...(showSecrets ? ["--show-secrets"] : [])];
      const { code, stdout } = await runCli(bin, args, { cwd: ctx.moduleDir, env: await this.env(ctx), signal: ctx.signal });
      return code === 0 && stdout.trim() ? (JSON.parse(stdout) as Record<string, unknown>) : null;
    };
    // Without --show-secrets Pulumi prints "[secret]" for secret outputs: that says which ones are sensitive.
    const masked = await read(false);
    const values = masked && (await read(true));
    if (!masked || !values) return;
    await reportOutputs(ctx, Object.fromEntries(Object.entries(values).map(([k, v]) => [k, { value: v, sensitive: masked[k] === "[secret]" }])));
  }

  async init(ctx: StepContext): Promise<StepOutcome> {
    try {
      if (!findBinary(["pulumi"], ctx.env)) return { ok: false, reason: PULUMI_MISSING };
      await this.run(ctx, ["stack", "select", "--create", this.stack(ctx), "--non-interactive"], "pulumi stack select");
      for (const [k, v] of Object.entries(ctx.variables)) {
        const args = ["config", "set", "--stack", this.stack(ctx), k, typeof v === "string" ? v : JSON.stringify(v)];
        await runCli(findBinary(["pulumi"], ctx.env)!, args, { cwd: ctx.moduleDir, env: await this.env(ctx), signal: ctx.signal });
      }
      return { ok: true };
    } catch (err) {
      return failure(err);
    }
  }

  async refresh(ctx: StepContext): Promise<StepOutcome> {
    try {
      await this.withState(ctx, "OperationTypeRefresh", true, () => this.run(ctx, ["refresh", "--yes", "--json", "--stack", this.stack(ctx)], "pulumi refresh"));
      return { ok: true };
    } catch (err) {
      return failure(err);
    }
  }

  async preview(ctx: StepContext): Promise<StepOutcome> {
    try {
      const planFile = path.join(ctx.workDir, "pulumi-plan.json");
      const destroy = ctx.input.operation === "destroy" || ctx.input.operation === "destroy_preview";
      const { doc, prior } = await this.withState(ctx, "OperationTypePlan", false, async (prior) => ({
        prior,
        doc: destroy
          ? await this.run(ctx, ["destroy", "--preview-only", "--json", "--stack", this.stack(ctx)], "pulumi destroy --preview-only")
          : await this.run(ctx, ["preview", "--json", "--save-plan", planFile, "--stack", this.stack(ctx)], "pulumi preview"),
      }));
      const state = prior ? pulumiIdentity(prior) : null;
      if (destroy) {
        // Pulumi saves no plan for a destroy: what it was previewed to delete is the plan an approval is bound to.
        if (!doc || !Array.isArray(doc.steps)) throw new Error("Nothing was planned: pulumi destroy --preview-only printed no steps, so what the destroy deletes cannot be reviewed. See its output above.");
        const plan: PulumiDestroyPlan = { planton_pulumi_destroy_plan: 1, stack: this.stack(ctx), urns: destroyedUrns(doc.steps as PulumiPreviewStep[]) };
        const bytes = new TextEncoder().encode(JSON.stringify(plan));
        const artifact = await ctx.job.uploadArtifact("plan", "pulumi-destroy-plan.json", bytes);
        await this.uploadReview(ctx, doc, { sha256: artifact.sha256, state, destroy: true });
        return { ok: true, plan: { ...artifact, summary: {}, bytes } };
      }
      const bytes = await readFile(planFile);
      const artifact = await ctx.job.uploadArtifact("plan", "pulumi-plan.json", bytes);
      await this.uploadReview(ctx, doc, { sha256: artifact.sha256, state, destroy: false });
      return { ok: true, plan: { ...artifact, summary: {}, bytes } };
    } catch (err) {
      return failure(err);
    }
  }

  /**
   * The plan's review rendition, from the preview's own document (its steps: URN, type and op): the console does not
   * read Pulumi's plan file, and without it the approver would be told the changes could not be listed. A preview that
   * printed no steps leaves it so; the preview itself stands.
   */
  private async uploadReview(ctx: StepContext, doc: Record<string, unknown> | null, plan: { sha256: string; destroy: boolean; state: { serial: number; lineage: string } | null }): Promise<void> {
    if (!doc || !Array.isArray(doc.steps)) {
      ctx.emit({ type: "log", payload: { line: "pulumi preview printed no steps: its review will not list the changes; they are in the preview output above.", stream: "stderr" } });
      return;
    }
    await uploadReviewRendition(ctx, previewChanges(doc.steps as PulumiPreviewStep[]), { ...plan, engine: "pulumi" });
  }

  async apply(ctx: StepContext): Promise<StepOutcome> {
    try {
      // Delete protection: Pulumi cannot leave a change out of an update, but `up --plan` carries out exactly the saved
      // plan (and fails on anything else), so an update whose plan deletes or replaces nothing may run.
      const saved = ctx.plan ? await planBytes(ctx, ctx.plan) : null;
      if (ctx.input.policy.protectDeletes) {
        const refusal = protectedDeletesRefusal(saved);
        if (refusal) return { ok: false, reason: refusal };
      }
      const args = ["up", "--yes", "--skip-preview", "--json", "--stack", this.stack(ctx)];
      if (saved) {
        const planFile = path.join(ctx.workDir, "pulumi-plan.json");
        await writePrivateFile(planFile, saved);
        args.push("--plan", planFile);
      }
      await this.withState(ctx, "OperationTypeApply", true, async () => {
        await this.run(ctx, args, "pulumi up");
        await this.outputs(ctx);
      });
      return { ok: true };
    } catch (err) {
      return failure(err);
    }
  }

  async destroy(ctx: StepContext): Promise<StepOutcome> {
    try {
      await this.withState(ctx, "OperationTypeDestroy", true, async () => {
        // A reviewed destroy deletes what was reviewed: under the state lock, the stack is previewed again and the
        // destroy runs only when it would delete exactly those resources.
        if (ctx.plan) await this.refuseChangedDestroy(ctx, ctx.plan);
        await this.run(ctx, ["destroy", "--yes", "--skip-preview", "--json", "--stack", this.stack(ctx)], "pulumi destroy");
      });
      return { ok: true };
    } catch (err) {
      return failure(err);
    }
  }

  private async refuseChangedDestroy(ctx: StepContext, ref: PlanRef): Promise<void> {
    const reviewed = (artifactJson(await planBytes(ctx, ref)) ?? {}) as Partial<PulumiDestroyPlan>;
    if (reviewed.planton_pulumi_destroy_plan !== 1 || !Array.isArray(reviewed.urns)) {
      throw new Error("Nothing was destroyed: the plan this destroy was approved with is not a Pulumi destroy plan. Run the destroy again: its preview makes one to review.");
    }
    const doc = await this.run(ctx, ["destroy", "--preview-only", "--json", "--stack", this.stack(ctx)], "pulumi destroy --preview-only");
    if (!doc || !Array.isArray(doc.steps)) throw new Error("Nothing was destroyed: pulumi destroy --preview-only printed no steps, so the destroy cannot be checked against the reviewed plan. See its output above.");
    const now = destroyedUrns(doc.steps as PulumiPreviewStep[]);
    const added = now.filter((u) => !reviewed.urns!.includes(u));
    const gone = reviewed.urns.filter((u) => !now.includes(u));
    if (added.length || gone.length) {
      const changes = [...(added.length ? [`it would now also delete ${someAddresses(added)}`] : []), ...(gone.length ? [`${someAddresses(gone)} ${gone.length === 1 ? "is" : "are"} no longer in it`] : [])];
      throw new Error(`Nothing was destroyed: the stack changed since its destroy was reviewed (${changes.join("; ")}). Run the destroy again and review its new plan.`);
    }
  }

  async import(ctx: StepContext): Promise<StepOutcome> {
    try {
      const target = ctx.input.import;
      if (!target) return { ok: false, reason: "Nothing ran: the import job names no resource address and id." };
      // Address form `<type token>.<name>`, e.g. `aws:s3/bucket:Bucket.my-bucket`.
      const dot = target.address.lastIndexOf(".");
      const [type, name] = dot > 0 ? [target.address.slice(0, dot), target.address.slice(dot + 1)] : [target.address, target.address];
      await this.withState(ctx, "OperationTypeImport", true, () => this.run(ctx, ["import", type, name, target.id, "--yes", "--json", "--stack", this.stack(ctx)], "pulumi import"));
      return { ok: true };
    } catch (err) {
      return failure(err);
    }
  }
}
