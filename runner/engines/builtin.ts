// The builtin engine, driven in-process through engine/index.ts.
import {
  apply,
  decodePlan,
  encodePlan,
  EngineError,
  importResource,
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
  type StateV4,
  type UiMessage,
  type Value,
} from "../../engine/index";
import { secretReferences } from "../../lib/secrets";
import { localRootFor } from "../local-root";
import { RemoteStateBackend, withStateLock } from "../remote-state";
import { translateUiLine, type TranslateContext } from "../translate";
import { failure, finalStateSave, planBytes, plansDestroy, type EngineAdapter, type StepContext, type StepOutcome } from "./adapter";
import { reportOutputs } from "./outputs";

/**
 * The component's state, through the runner API whatever its backend: the server resolved the backend
 * and opens it with the connection's credentials, so they never reach this runner.
 */
export function stateBackendFor(ctx: StepContext): RemoteStateBackend {
  return new RemoteStateBackend(ctx.job, { path: `${ctx.input.component.id}/${ctx.input.backend.name}`, info: `job ${ctx.input.jobId}` });
}

function providerConfig(ctx: StepContext): ProviderConfig {
  // On a hosted runner the connection's root is confined under the organization's folder (or refused).
  const local = localRootFor(ctx.input, ctx.env);
  // Test harnesses give their runners a gates folder; nothing else enables the gate resource.
  const gates = ctx.env.PLANTON_TEST_GATES_DIR;
  return { ...(local ? { local } : {}), ...(gates ? { testGates: { dir: gates } } : {}) };
}

function errorReason(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Emits engine UI lines as progress events. */
function emitter(ctx: StepContext, tctx: TranslateContext): { emit: (line: UiMessage) => void } {
  return {
    emit: (line) => {
      for (const e of translateUiLine(line, tctx)) ctx.emit(e);
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
      tracer: ctx.tracer,
    };
  }

  async init(ctx: StepContext): Promise<StepOutcome> {
    try {
      stateBackendFor(ctx);
      const { emit } = emitter(ctx, { command: "builtin validate" });
      const config = providerConfig(ctx);
      // Validation checks resource types only: the gate resource when enabled, not the local root (refresh reports that).
      const result = await validate(ctx.moduleDir, { emit, providerConfig: { testGates: config.testGates } });
      if (!result.valid) return { ok: false, reason: result.diagnostics.map((d) => d.summary).join("; ") };
      const root = config.local?.root;
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
        if (r.changed) await finalStateSave(ctx, r.state, () => backend.put(r.state));
        return prior ? r.state : null;
      });
      if (state) await reportOutputs(ctx, state.outputs);
      return { ok: true };
    } catch (err) {
      return failure(err);
    }
  }

  /** The engine's own plan is what the reviewer sees and what apply executes: it is uploaded as is. */
  async preview(ctx: StepContext): Promise<StepOutcome> {
    try {
      const backend = stateBackendFor(ctx);
      const destroy = plansDestroy(ctx.input);
      const { emit } = emitter(ctx, { command: "builtin plan" });
      const result = await withStateLock(backend, "OperationTypePlan", async () => {
        const state = await backend.get();
        return plan({ ...this.base(ctx), state, emit }, this.planRequest(ctx, destroy));
      });
      const saved = result.plan;
      const artifact = await ctx.job.uploadArtifact("plan", destroy ? "destroy.plan.json" : "plan.json", result.bytes);
      if (artifact.sha256 !== result.checksum) throw new Error(`The plan artifact was stored with sha256 ${artifact.sha256}, not ${result.checksum}; run the preview again.`);
      await uploadReview(ctx, saved, destroy ? "destroy.plan.json" : "plan.json");
      const { skipped_deletes, replacements, ...counts } = saved.summary;
      const summary: Record<string, unknown> = { ...counts, applyable: saved.applyable, deleteOperationsComputed: saved.delete_operations_computed };
      if (skipped_deletes) summary.skippedDeletes = skipped_deletes;
      if (replacements) summary.replacements = replacements;
      return { ok: true, plan: { artifactId: artifact.artifactId, sha256: result.checksum, summary, bytes: result.bytes } };
    } catch (err) {
      return failure(err);
    }
  }

  /** The policy's delete protection goes to the engine, which ignores it for a destroy plan. */
  private planRequest(ctx: StepContext, destroy: boolean) {
    return { destroy, refresh: !ctx.input.policy.skipRefresh, protectDeletes: ctx.input.policy.protectDeletes };
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
      // The reviewed plan is fetched and checked while the state lock is taken and the state read (a round trip
      // less); a plan that fails its checks releases the lock with nothing applied.
      const reviewed = ctx.plan ? reviewedPlan(ctx, ctx.plan, destroy) : Promise.resolve(undefined);
      reviewed.catch(() => {}); // reported where it is awaited, or moot when the lock is refused
      const result = await withStateLock(backend, destroy ? "OperationTypeDestroy" : "OperationTypeApply", async () => {
        const [saved, state] = await Promise.all([reviewed, backend.get()]);
        const planned = saved ?? (await plan({ ...this.base(ctx), state, emit }, this.planRequest(ctx, destroy))).plan;
        // Each resource's state change goes out as it completes; the step's end compacts them into one state write.
        const step = destroy ? "destroy" : "apply";
        const journal = backend.journal(step);
        let final: StateV4 | null = null;
        try {
          const r = await apply({ state, providerConfig: providerConfig(ctx), parallelism: ctx.input.parallelism, emit, tracer: ctx.tracer, persistDelta: (c) => journal.add(c), signal: ctx.signal }, planned);
          final = r.state;
          return r;
        } finally {
          await finalStateSave(ctx, final, () => backend.commitJournal(step, journal, final, (line) => ctx.emit({ type: "log", payload: { line } })));
        }
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
        await finalStateSave(ctx, r.state, () => backend.put(r.state));
        return r;
      });
      await reportOutputs(ctx, state.outputs);
      return { ok: true };
    } catch (err) {
      return failure(err);
    }
  }
}

/** The reviewed plan, downloaded and checked against the checksum the reviewer approved and against the step. */
async function reviewedPlan(ctx: StepContext, ref: NonNullable<StepContext["plan"]>, destroy: boolean): Promise<SavedPlan> {
  const bytes = await planBytes(ctx, ref);
  if (planChecksum(bytes) !== ref.sha256) throw new Error(`The plan artifact does not match the reviewed checksum ${ref.sha256}; nothing was applied. Run a new preview.`);
  const saved = decodePlan(bytes);
  ctx.redactor.add(sensitiveValues(saved, reviewOptions(ctx)));
  if (destroy !== (saved.operation === "destroy")) {
    throw new Error(`The reviewed plan is a ${saved.operation} plan, but this step is ${destroy ? "destroy" : "apply"}; nothing was changed. Run a new preview.`);
  }
  return saved;
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
