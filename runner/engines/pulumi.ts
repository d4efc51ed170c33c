// Pulumi through its CLI: engine events (`--json`) translated into progress events.
import path from "node:path";
import { engineCannotProtectUpdate } from "../../lib/delete-protection";
import { STEP_SUMMARY_OPERATION } from "../../lib/runner-protocol";
import { translatePulumiEvent, translatePulumiPreview, type TranslateContext } from "../translate";
import { failure, planBytes, type EngineAdapter, type StepContext, type StepOutcome } from "./adapter";
import { writePrivateFile } from "../private-files";
import { findBinary, runCli } from "./cli";
import { reportOutputs } from "./outputs";

export const PULUMI_MISSING =
  "Pulumi is not installed on this runner: no `pulumi` binary on PATH. Install it on the runner host (https://www.pulumi.com/docs/install/, e.g. `curl -fsSL https://get.pulumi.com | sh`), or run the job on a runner that has it, then run the job again.";

/**
 * Feeds `pulumi … --json` stdout to the translator: each line that is an engine event is
 * translated at once; anything else is kept and, at the end, read as one preview document.
 */
export class PulumiOutputReader {
  private rest: string[] = [];
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
      for (const e of translatePulumiPreview(doc, this.tctx)) this.emit(e);
    } catch {
      for (const line of text.split("\n")) if (line) this.emit({ type: "log", payload: { line } });
    }
  }
}

export class PulumiAdapter implements EngineAdapter {
  readonly name = "pulumi";

  private stack(ctx: StepContext): string {
    return `${ctx.input.component.environment}-${ctx.input.component.name}`.replace(/[^A-Za-z0-9_.-]/g, "-");
  }

  private env(ctx: StepContext): NodeJS.ProcessEnv {
    // State stays in the job's workspace unless the module's backend says otherwise.
    return { PULUMI_BACKEND_URL: `file://${path.join(ctx.workDir, "pulumi-state")}`, PULUMI_CONFIG_PASSPHRASE: "", PULUMI_SKIP_UPDATE_CHECK: "1", ...ctx.env, PULUMI_EXPERIMENTAL: "1" };
  }

  private async run(ctx: StepContext, args: string[], command: string): Promise<void> {
    const bin = findBinary(["pulumi"], ctx.env);
    if (!bin) throw new Error(PULUMI_MISSING);
    ctx.emit({ type: "log", payload: { line: `\x1b[2m$ pulumi ${args.join(" ")}\x1b[0m` } });
    const reader = new PulumiOutputReader(ctx.emit, { command, operation: STEP_SUMMARY_OPERATION[ctx.step] });
    const { code } = await runCli(bin, args, {
      cwd: ctx.moduleDir,
      env: this.env(ctx),
      signal: ctx.signal,
      onStdout: (l) => reader.line(l),
      onStderr: (l) => l && ctx.emit({ type: "log", payload: { line: l, stream: "stderr" } }),
    });
    reader.end();
    if (code !== 0) throw new Error(`${command} exited with code ${code}; see the log above for the engine's error.`);
  }

  private async outputs(ctx: StepContext): Promise<void> {
    const bin = findBinary(["pulumi"], ctx.env)!;
    const read = async (showSecrets: boolean) => {
      const args = ["stack", "output", "--json", "--stack", this.stack(ctx), ...(showSecrets ? ["--show-secrets"] : [])];
      const { code, stdout } = await runCli(bin, args, { cwd: ctx.moduleDir, env: this.env(ctx), signal: ctx.signal });
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
        await runCli(findBinary(["pulumi"], ctx.env)!, args, { cwd: ctx.moduleDir, env: this.env(ctx), signal: ctx.signal });
      }
      return { ok: true };
    } catch (err) {
      return failure(err);
    }
  }

  async refresh(ctx: StepContext): Promise<StepOutcome> {
    try {
      await this.run(ctx, ["refresh", "--yes", "--json", "--stack", this.stack(ctx)], "pulumi refresh");
      return { ok: true };
    } catch (err) {
      return failure(err);
    }
  }

  async preview(ctx: StepContext): Promise<StepOutcome> {
    try {
      const planFile = path.join(ctx.workDir, "pulumi-plan.json");
      const destroy = ctx.input.operation === "destroy" || ctx.input.operation === "destroy_preview";
      if (destroy) await this.run(ctx, ["destroy", "--preview-only", "--json", "--stack", this.stack(ctx)], "pulumi destroy --preview-only");
      else await this.run(ctx, ["preview", "--json", "--save-plan", planFile, "--stack", this.stack(ctx)], "pulumi preview");
      if (destroy) return { ok: true };
      const { readFile } = await import("node:fs/promises");
      const bytes = await readFile(planFile);
      const artifact = await ctx.job.uploadArtifact("plan", "pulumi-plan.json", bytes);
      return { ok: true, plan: { ...artifact, summary: {}, bytes } };
    } catch (err) {
      return failure(err);
    }
  }

  async apply(ctx: StepContext): Promise<StepOutcome> {
    // Delete protection: Pulumi cannot tell beforehand whether an update deletes, nor leave a delete out.
    if (ctx.input.policy.protectDeletes) return { ok: false, reason: engineCannotProtectUpdate("Pulumi") };
    try {
      const args = ["up", "--yes", "--skip-preview", "--json", "--stack", this.stack(ctx)];
      if (ctx.plan) {
        const planFile = path.join(ctx.workDir, "pulumi-plan.json");
        await writePrivateFile(planFile, await planBytes(ctx, ctx.plan));
        args.push("--plan", planFile);
      }
      await this.run(ctx, args, "pulumi up");
      await this.outputs(ctx);
      return { ok: true };
    } catch (err) {
      return failure(err);
    }
  }

  async destroy(ctx: StepContext): Promise<StepOutcome> {
    try {
      await this.run(ctx, ["destroy", "--yes", "--skip-preview", "--json", "--stack", this.stack(ctx)], "pulumi destroy");
      return { ok: true };
    } catch (err) {
      return failure(err);
    }
  }

  async import(ctx: StepContext): Promise<StepOutcome> {
    try {
      const target = ctx.input.import;
      if (!target) return { ok: false, reason: "Nothing ran: the import job names no resource address and id." };
      // Address form `<type token>.<name>`, e.g. `aws:s3/bucket:Bucket.my-bucket`.
      const dot = target.address.lastIndexOf(".");
      const [type, name] = dot > 0 ? [target.address.slice(0, dot), target.address.slice(dot + 1)] : [target.address, target.address];
      await this.run(ctx, ["import", type, name, target.id, "--yes", "--json", "--stack", this.stack(ctx)], "pulumi import");
      return { ok: true };
    } catch (err) {
      return failure(err);
    }
  }
}
