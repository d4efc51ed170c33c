// The builtin engine, driven in-process through engine/index.ts.
import path from "node:path";
import {
  apply,
  decodePlan,
  encodePlan,
  EngineError,
  importResource,
  LocalStateBackend,
  plan,
  planChecksum,
  refresh,
  reviewPlan,
  sensitiveValues,
  stateSensitiveValues,
  validate,
  type ProviderConfig,
  type SavedPlan,
  type StateBackend,
  type UiMessage,
  type Value,
} from "../../engine/index";
import { secretReferences } from "../../lib/secrets";
import { RemoteStateBackend, withStateLock } from "../remote-state";
import { translateUiLine, type TranslateContext } from "../translate";
import { failure, plansDestroy, type EngineAdapter, type StepContext, type StepOutcome } from "./adapter";
import { reportOutputs } from "./outputs";

/** Chooses where the component's state lives; the server resolved the backend, the runner reaches it. */
export function stateBackendFor(ctx: StepContext): StateBackend {
  const b = ctx.input.backend;
  if (b.kind === "planton_managed") {
    return new RemoteStateBackend(ctx.job, { path: `${ctx.input.component.id}/${b.name}`, info: `job ${ctx.input.jobId}` });
  }
  if (b.kind === "local" && typeof b.config.path === "string") return new LocalStateBackend(b.config.path);
  throw new EngineError(
    `Nothing ran: the builtin engine cannot reach state backend ${b.name} (kind ${b.kind}) from this runner. ` +
      "Use the Planton-managed backend for builtin modules on a Planton-hosted runner (planton infra state-backend set-default planton-managed), then run the job again.",
  );
}

function providerConfig(ctx: StepContext): ProviderConfig {
  const root = ctx.input.connection?.config.root;
  return typeof root === "string" ? { local: { root } } : {};
}

function errorReason(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Emits engine UI lines as progress events; `hold` keeps some back until the step knows more. */
function emitter(ctx: StepContext, tctx: TranslateContext, hold?: (line: UiMessage) => boolean): { emit: (line: UiMessage) => void; held: UiMessage[] } {
  const held: UiMessage[] = [];
  return {
    held,
    emit: (line) => {
      if (hold?.(line)) held.push(line);
      else for (const e of translateUiLine(line, tctx)) ctx.emit(e);
    },
  };
}

export class BuiltinAdapter implements EngineAdapter {
  readonly name = "builtin";

  private base(ctx: StepContext) {
    return {
      moduleDir: ctx.moduleDir,
      variables: ctx.variables as Record<string, Value>,
      providerConfig: providerConfig(ctx),
      parallelism: ctx.input.parallelism,
    };
  }

  async init(ctx: StepContext): Promise<StepOutcome> {
    try {
      stateBackendFor(ctx);
      const { emit } = emitter(ctx, { command: "builtin validate" });
      const result = await validate(ctx.moduleDir, { emit });
      if (!result.valid) return { ok: false, reason: result.diagnostics.map((d) => d.summary).join("; ") };
      const root = providerConfig(ctx).local?.root;
      ctx.emit({
        type: "log",
        payload: { line: `Initialized the builtin engine: module ${ctx.input.module.name}@${ctx.input.module.version} (sha256 ${ctx.input.module.sha256.slice(0, 12)}…)${root ? `, local root ${root}` : ""}.` },
      });
      return { ok: true };
    } catch (err) {
      return failure(err);
    }
  }

  async refresh(ctx: StepContext): Promise<StepOutcome> {
    try {
      const backend = stateBackendFor(ctx);
      const { emit } = emitter(ctx, { command: "builtin refresh" });
      const state = await withStateLock(backend, "OperationTypeRefresh", async () => {
        const prior = await backend.get();
        ctx.redactor.add(stateSensitiveValues(prior));
        const r = await refresh({ ...this.base(ctx), state: prior, emit });
        if (r.changed) await backend.put(r.state);
        return prior ? r.state : null;
      });
      if (state) await reportOutputs(ctx, state.outputs);
      return { ok: true };
    } catch (err) {
      return failure(err);
    }
  }

  async preview(ctx: StepContext): Promise<StepOutcome> {
    try {
      const backend = stateBackendFor(ctx);
      const destroy = plansDestroy(ctx.input);
      const protect = ctx.input.policy.protectDeletes && ctx.input.operation === "update";
      // Under delete protection the summary and planned deletes wait until the plan is trimmed.
      const tctx: TranslateContext = { command: "builtin plan" };
      const { emit, held } = emitter(ctx, tctx, (l) => protect && (l.type === "change_summary" || (l.type === "planned_change" && l.change.action === "delete")));
      const result = await withStateLock(backend, "OperationTypePlan", async () => {
        const state = await backend.get();
        return plan({ ...this.base(ctx), state, emit }, { destroy, refresh: !ctx.input.policy.skipRefresh });
      });
      let saved = result.plan;
      if (protect) {
        const protectedDeletes = new Set(saved.resource_changes.filter((c) => c.action === "delete").map((c) => c.address));
        saved = withoutDeletes(saved);
        tctx.skippedDeletes = protectedDeletes.size;
        for (const line of held) {
          if (line.type === "planned_change") line["@message"] += " (not executed)";
          if (line.type === "change_summary") {
            line.changes = { ...line.changes, remove: saved.summary.remove };
            line["@message"] = line["@message"].replace(/\d+ to destroy/, `${saved.summary.remove} to destroy (${protectedDeletes.size} delete(s) not executed: delete protection is on)`);
          }
          for (const e of translateUiLine(line, tctx)) ctx.emit(e);
        }
      }
      const bytes = protect ? encodePlan(saved) : result.bytes;
      const sha256 = planChecksum(bytes);
      const artifact = await ctx.job.uploadArtifact("plan", destroy ? "destroy.plan.json" : "plan.json", bytes);
      if (artifact.sha256 !== sha256) throw new Error(`The plan artifact was stored with sha256 ${artifact.sha256}, not ${sha256}; run the preview again.`);
      await uploadReview(ctx, saved, destroy ? "destroy.plan.json" : "plan.json");
      const summary: Record<string, unknown> = { ...saved.summary, applyable: saved.applyable, deleteOperationsComputed: saved.delete_operations_computed };
      if (protect && tctx.skippedDeletes) summary.skippedDeletes = tctx.skippedDeletes;
      return { ok: true, plan: { artifactId: artifact.artifactId, sha256, summary } };
    } catch (err) {
      return failure(err);
    }
  }

  apply(ctx: StepContext): Promise<StepOutcome> {
    return this.execute(ctx, "builtin apply", false);
  }

  destroy(ctx: StepContext): Promise<StepOutcome> {
    return this.execute(ctx, "builtin destroy", true);
  }

  /** Executes exactly the reviewed plan; without one (preview turned off) plans and applies in one go. */
  private async execute(ctx: StepContext, command: string, destroy: boolean): Promise<StepOutcome> {
    try {
      const backend = stateBackendFor(ctx);
      const { emit } = emitter(ctx, { command });
      let saved: SavedPlan | undefined;
      if (ctx.plan) {
        const bytes = await ctx.job.downloadArtifact(ctx.plan.artifactId, ctx.plan.sha256);
        if (planChecksum(bytes) !== ctx.plan.sha256) throw new Error(`The plan artifact does not match the reviewed checksum ${ctx.plan.sha256}; nothing was applied. Run a new preview.`);
        saved = decodePlan(bytes);
        ctx.redactor.add(sensitiveValues(saved, reviewOptions(ctx)));
        if (destroy !== (saved.operation === "destroy")) {
          throw new Error(`The reviewed plan is a ${saved.operation} plan, but this step is ${destroy ? "destroy" : "apply"}; nothing was changed. Run a new preview.`);
        }
      }
      const result = await withStateLock(backend, destroy ? "OperationTypeDestroy" : "OperationTypeApply", async () => {
        const state = await backend.get();
        const planned = saved ?? (await plan({ ...this.base(ctx), state, emit }, { destroy, refresh: !ctx.input.policy.skipRefresh })).plan;
        return apply({ state, providerConfig: providerConfig(ctx), parallelism: ctx.input.parallelism, emit, persistState: (s) => backend.put(s), signal: ctx.signal }, planned);
      });
      if (!destroy) await reportOutputs(ctx, result.outputs);
      if (result.status === "errored") return { ok: false, reason: result.diagnostics.map((d) => d.summary).join("; ") || "apply errored" };
      if (result.status === "cancelled") return { ok: false, reason: `stopped before finishing: ${result.not_applied.length} resource(s) were not started; state was saved` };
      return { ok: true };
    } catch (err) {
      return { ok: false, reason: errorReason(err) };
    }
  }

  async import(ctx: StepContext): Promise<StepOutcome> {
    try {
      const target = ctx.input.import;
      if (!target) return { ok: false, reason: "Nothing ran: the import job names no resource address and id." };
      const backend = stateBackendFor(ctx);
      const { emit } = emitter(ctx, { command: "builtin import" });
      const { state } = await withStateLock(backend, "OperationTypeImport", async () => {
        const prior = await backend.get();
        const r = await importResource({ ...this.base(ctx), state: prior, emit }, target.address, target.id);
        await backend.put(r.state);
        return r;
      });
      await reportOutputs(ctx, state.outputs);
      return { ok: true };
    } catch (err) {
      return failure(err);
    }
  }
}

/** Spec variables whose value came from the secret store: masked in the review like declared-sensitive ones. */
function reviewOptions(ctx: StepContext) {
  return { secretVariables: Object.entries(ctx.input.variables).filter(([, v]) => secretReferences(v).length > 0).map(([k]) => k) };
}

/**
 * Uploads the review rendition people read (kind plan_review): sensitive values masked by the engine,
 * then every secret value the runner knows replaced byte for byte.
 */
async function uploadReview(ctx: StepContext, saved: SavedPlan, name: string): Promise<void> {
  const opts = reviewOptions(ctx);
  ctx.redactor.add(sensitiveValues(saved, opts));
  const review = ctx.redactor.value(reviewPlan(saved, opts));
  await ctx.job.uploadArtifact("plan_review", name, encodePlan(review));
  // The job page's diff reads planned before/after from events: only ever the masked ones.
  for (const c of review.resource_changes) {
    if (c.action === "noop") continue;
    ctx.emit({ type: "resource", payload: { address: c.address, type: c.type, action: c.action, phase: "planned", before: c.change.before, after: c.change.after } });
  }
}

/** The plan an update under delete protection executes: planned deletes stay in the review, not in the work. */
function withoutDeletes(saved: SavedPlan): SavedPlan {
  const resource_changes = saved.resource_changes.filter((c) => c.action !== "delete");
  return { ...saved, resource_changes, summary: { ...saved.summary, remove: saved.summary.remove - (saved.resource_changes.length - resource_changes.length) } };
}

export function moduleDirOf(workDir: string): string {
  return path.join(workDir, "module");
}
