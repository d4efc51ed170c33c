// OpenTofu and Terraform through their CLIs (`-json` UI lines, the same translation as builtin).
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import type { StateV4 } from "../../engine/index";
import { engineCannotProtectPlan } from "../../lib/delete-protection";
import { writePrivateFile } from "../private-files";
import { RemoteStateBackend } from "../remote-state";
import { translateJsonLine, type TranslateContext } from "../translate";
import { failure, finalStateSave, planBytes, plansDestroy, uploadReviewRendition, type EngineAdapter, type StepContext, type StepOutcome } from "./adapter";
import { findBinary, runCli } from "./cli";
import { reportOutputs } from "./outputs";

const INSTALL: Record<"tofu" | "terraform", string> = {
  tofu: "OpenTofu is not installed on this runner: no `tofu` binary on PATH. Install it on the runner host (https://opentofu.org/docs/intro/install/, e.g. `brew install opentofu` or the deb/rpm packages), or run the job on a runner that has it, then run the job again.",
  terraform: "Terraform is not installed on this runner: no `terraform` binary on PATH. Install it on the runner host (https://developer.hashicorp.com/terraform/install), or run the job on a runner that has it, then run the job again.",
};

/** Where the CLI reads the resolved variables from (an `*.auto.tfvars.json` file is loaded by every command). */
export const VARIABLES_FILE = "planton.auto.tfvars.json";

const ENGINE_NAME: Record<"tofu" | "terraform", string> = { tofu: "OpenTofu", terraform: "Terraform" };

/** One change of `tofu show -json <planfile>` (OpenTofu's and Terraform's documented JSON plan), as far as the review reads it. */
interface ShownChange {
  address: string;
  type: string;
  previous_address?: string;
  change?: { actions?: string[]; importing?: unknown };
}

/** A change's actions in the builtin engine's words (engine/types.ts ChangeAction). */
export function reviewAction(c: ShownChange): string {
  const actions = c.change?.actions ?? [];
  if (actions.includes("delete") && actions.includes("create")) return "replace";
  const [only] = actions;
  if (only === "no-op" || only === undefined) return c.change?.importing ? "import" : c.previous_address && c.previous_address !== c.address ? "move" : "noop";
  return only;
}

/** The addresses a plan (`tofu show -json <planfile>`) deletes, alone or as half of a replace. */
export function plannedDeletes(plan: { resource_changes?: { address: string; change?: { actions?: string[] } }[] }): string[] {
  return (plan.resource_changes ?? []).filter((c) => c.change?.actions?.includes("delete")).map((c) => c.address);
}

export class TofuAdapter implements EngineAdapter {
  readonly name: "tofu" | "terraform";

  constructor(flavour: "tofu" | "terraform" = "tofu") {
    this.name = flavour;
  }

  binary(env: NodeJS.ProcessEnv): string | undefined {
    return findBinary([this.name], env);
  }

  private planFile(ctx: StepContext): string {
    return path.join(ctx.workDir, "plan.tfplan");
  }

  /** Runs one CLI command, translating its `-json` lines (or plain lines) into events. */
  private async run(ctx: StepContext, args: string[], tctx: TranslateContext): Promise<{ code: number; stdout: string }> {
    const bin = this.binary(ctx.env);
    if (!bin) throw new Error(INSTALL[this.name]);
    ctx.emit({ type: "log", payload: { line: `\x1b[2m$ ${this.name} ${args.join(" ")}\x1b[0m` } });
    return runCli(bin, args, {
      cwd: ctx.moduleDir,
      env: { ...ctx.env, TF_IN_AUTOMATION: "1", TF_INPUT: "0" },
      signal: ctx.signal,
      onStdout: (l) => {
        for (const e of translateJsonLine(l, tctx)) ctx.emit(e);
      },
      onStderr: (l) => l && ctx.emit({ type: "log", payload: { line: l, stream: "stderr" } }),
    });
  }

  private async must(ctx: StepContext, args: string[], command: string, tctx: TranslateContext = { command }): Promise<string> {
    const { code, stdout } = await this.run(ctx, args, tctx);
    if (code !== 0) throw new Error(`${command} exited with code ${code}; see the log above for the engine's error.`);
    return stdout;
  }

  /**
   * The state (from whatever backend, through the runner API) reaches the CLI as a local
   * terraform.tfstate: taken (under the lock) before the command and written back after it.
   */
  private async withState<T>(ctx: StepContext, operation: string, fn: (state: StateV4 | null) => Promise<T>): Promise<T> {
    const backend = new RemoteStateBackend(ctx.job, { path: `${ctx.input.component.id}/${ctx.input.backend.name}`, info: `job ${ctx.input.jobId}` });
    const lock = await backend.lock({ Operation: operation });
    const file = path.join(ctx.moduleDir, "terraform.tfstate");
    try {
      const state = await backend.get();
      if (state) await writePrivateFile(file, JSON.stringify(state));
      const before = state ? JSON.stringify(state) : "";
      try {
        return await fn(state);
      } finally {
        const after = await readFile(file, "utf8").catch(() => "");
        if (after && after !== before) {
          const reached = JSON.parse(after) as StateV4;
          await finalStateSave(ctx, reached, () => backend.put(reached));
        }
      }
    } finally {
      await backend.unlock(lock.ID);
    }
  }

  /**
   * The variables, secrets resolved, exist as a file (0600) only while a command of the step that
   * needs them runs; they are removed after it, whatever its outcome.
   */
  private async withVariables(ctx: StepContext, fn: () => Promise<StepOutcome>): Promise<StepOutcome> {
    const file = path.join(ctx.moduleDir, VARIABLES_FILE);
    try {
      await writePrivateFile(file, JSON.stringify(ctx.variables));
      return await fn();
    } catch (err) {
      return failure(err);
    } finally {
      await rm(file, { force: true });
    }
  }

  private async outputs(ctx: StepContext): Promise<void> {
    const bin = this.binary(ctx.env)!;
    const { code, stdout } = await runCli(bin, ["output", "-json"], { cwd: ctx.moduleDir, env: ctx.env, signal: ctx.signal });
    if (code !== 0 || !stdout.trim()) return;
    await reportOutputs(ctx, JSON.parse(stdout) as Record<string, { value: unknown; sensitive: boolean }>);
  }

  async init(ctx: StepContext): Promise<StepOutcome> {
    if (!this.binary(ctx.env)) return { ok: false, reason: INSTALL[this.name] };
    // OpenTofu evaluates variables early (module sources, backend settings), so init has them too.
    return this.withVariables(ctx, () => this.initStep(ctx));
  }

  private async initStep(ctx: StepContext): Promise<StepOutcome> {
    try {
      await this.must(ctx, ["init", "-input=false", "-no-color"], `${this.name} init`);
      return { ok: true };
    } catch (err) {
      return failure(err);
    }
  }

  refresh(ctx: StepContext): Promise<StepOutcome> {
    return this.withVariables(ctx, () => this.refreshStep(ctx));
  }

  private async refreshStep(ctx: StepContext): Promise<StepOutcome> {
    const command = `${this.name} refresh`;
    try {
      await this.withState(ctx, "OperationTypeRefresh", () => this.must(ctx, ["apply", "-refresh-only", "-auto-approve", "-json", "-input=false"], command));
      await this.outputs(ctx);
      return { ok: true };
    } catch (err) {
      return failure(err);
    }
  }

  preview(ctx: StepContext): Promise<StepOutcome> {
    return this.withVariables(ctx, () => this.previewStep(ctx));
  }

  private async previewStep(ctx: StepContext): Promise<StepOutcome> {
    const command = `${this.name} plan`;
    try {
      const args = ["plan", "-json", "-input=false", `-out=${this.planFile(ctx)}`];
      if (plansDestroy(ctx.input)) args.push("-destroy");
      if (ctx.input.policy.skipRefresh) args.push("-refresh=false");
      const summary: Record<string, unknown> = {};
      // The plan's counts come from its change_summary line.
      const seen: StepContext = { ...ctx, emit: (e) => (e.type === "summary" && Object.assign(summary, e.payload), ctx.emit(e)) };
      const state = await this.withState(ctx, "OperationTypePlan", async (prior) => {
        const { code } = await this.run(seen, args, { command });
        if (code !== 0) throw new Error(`${command} exited with code ${code}; see the log above for the engine's error.`);
        return prior;
      });
      const bytes = await readFile(this.planFile(ctx));
      const artifact = await ctx.job.uploadArtifact("plan", "plan.tfplan", bytes);
      await this.uploadReview(ctx, { sha256: artifact.sha256, destroy: plansDestroy(ctx.input), state });
      return { ok: true, plan: { ...artifact, summary, bytes } };
    } catch (err) {
      return failure(err);
    }
  }

  /**
   * The plan's review rendition, from `show -json` of the plan file: the console cannot read a binary plan, and
   * without it the plan review (and its approver) would see no changes. A `show` that fails leaves the review saying
   * the changes could not be listed; the preview itself stands.
   */
  private async uploadReview(ctx: StepContext, plan: { sha256: string; destroy: boolean; state: StateV4 | null }): Promise<void> {
    const { code, stdout } = await runCli(this.binary(ctx.env)!, ["show", "-json", this.planFile(ctx)], { cwd: ctx.moduleDir, env: ctx.env, signal: ctx.signal });
    let shown: { resource_changes?: ShownChange[] } | null = null;
    try {
      shown = code === 0 ? JSON.parse(stdout) : null;
    } catch {
      // not JSON: as a failed show
    }
    if (!shown) {
      ctx.emit({ type: "log", payload: { line: `${this.name} show -json could not read the plan (exit code ${code}): its review will not list the changes; they are in the plan output above.`, stream: "stderr" } });
      return;
    }
    // The document's before and after values, which may hold secrets, are left behind.
    const changes = (shown.resource_changes ?? []).map((c) => ({ address: c.address, type: c.type, action: reviewAction(c) }));
    await uploadReviewRendition(ctx, changes, { ...plan, engine: this.name });
  }

  /**
   * Delete protection: OpenTofu and Terraform cannot leave a change out of an apply, so an update
   * whose plan deletes or replaces anything is refused before it starts.
   */
  private async refuseProtectedDeletes(ctx: StepContext): Promise<void> {
    const { code, stdout } = await runCli(this.binary(ctx.env)!, ["show", "-json", this.planFile(ctx)], { cwd: ctx.moduleDir, env: ctx.env, signal: ctx.signal });
    if (code !== 0) throw new Error(`Nothing was applied: ${this.name} show -json could not read the plan (exit code ${code}), so delete protection cannot be checked. Run a new preview, then apply it.`);
    const deletes = plannedDeletes(JSON.parse(stdout));
    if (deletes.length) throw new Error(engineCannotProtectPlan(ENGINE_NAME[this.name], deletes));
  }

  private async execute(ctx: StepContext, destroy: boolean): Promise<StepOutcome> {
    const command = `${this.name} ${destroy ? "destroy" : "apply"}`;
    const protect = !destroy && ctx.input.policy.protectDeletes;
    try {
      if (!this.binary(ctx.env)) throw new Error(INSTALL[this.name]);
      await this.withState(ctx, destroy ? "OperationTypeDestroy" : "OperationTypeApply", async () => {
        if (ctx.plan) {
          await writePrivateFile(this.planFile(ctx), await planBytes(ctx, ctx.plan));
        } else if (protect) {
          // No reviewed plan (preview turned off): make one, so it can be checked before anything changes.
          const args = ["plan", "-json", "-input=false", `-out=${this.planFile(ctx)}`, ...(ctx.input.policy.skipRefresh ? ["-refresh=false"] : [])];
          await this.must(ctx, args, `${this.name} plan`);
        }
        if (protect) await this.refuseProtectedDeletes(ctx);
        if (ctx.plan || protect) await this.must(ctx, ["apply", "-json", "-input=false", this.planFile(ctx)], command);
        else await this.must(ctx, [destroy ? "destroy" : "apply", "-auto-approve", "-json", "-input=false"], command);
      });
      if (!destroy) await this.outputs(ctx);
      return { ok: true };
    } catch (err) {
      return failure(err);
    }
  }

  apply(ctx: StepContext): Promise<StepOutcome> {
    return this.withVariables(ctx, () => this.execute(ctx, false));
  }

  destroy(ctx: StepContext): Promise<StepOutcome> {
    return this.withVariables(ctx, () => this.execute(ctx, true));
  }

  import(ctx: StepContext): Promise<StepOutcome> {
    return this.withVariables(ctx, () => this.importStep(ctx));
  }

  private async importStep(ctx: StepContext): Promise<StepOutcome> {
    try {
      const target = ctx.input.import;
      if (!target) return { ok: false, reason: "Nothing ran: the import job names no resource address and id." };
      // `tofu import` has no -json; its plain lines become log events.
      await this.withState(ctx, "OperationTypeImport", () => this.must(ctx, ["import", "-input=false", "-no-color", target.address, target.id], `${this.name} import`));
      await this.outputs(ctx);
      return { ok: true };
    } catch (err) {
      return failure(err);
    }
  }
}
