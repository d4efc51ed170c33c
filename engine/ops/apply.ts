import { parseModule } from "../config/module";
import { EngineError, StalePlanError } from "../errors";
import { Graph, walk } from "../graph/graph";
import { cloneState, findInstance, listInstances, parseInstanceAddress, sameContent, setInstance, snapshotState } from "../state/state";
import { configAddressOf } from "../state/address";
import type { ApplyOptions, ApplyResult, ChangeAction, ChangeSummary, Diagnostic, ResourceChange, SavedPlan, SensitivePath, StateV4 } from "../types";
import { Ui } from "../ui-messages";
import { diffStates, resourceKey } from "../../lib/state-delta";
import { deepEqual, isUnknown, joinUnknowns, type Attrs, type Value } from "../values";
import { idOf, planSchemaHash, prepare, reportFailure, sensitivePaths, stateValues, type OperationContext } from "./context";
import { evaluateResourceConfig, instanceScope } from "./expand";
import { readData } from "./data-sources";
import { configWithIgnores } from "./lifecycle";
import { evaluateOutputs } from "./refresh";
import { providerAddress } from "../providers/provider";

/** Refuses a plan made against a different state than the one we have now. */
export function assertPlanFresh(plan: SavedPlan, state: StateV4 | null): void {
  const fix = "Run a new preview, then apply it.";
  if (plan.state_lineage === null) {
    if (state) {
      throw new StalePlanError(
        `Saved plan is stale: the state was changed by another operation after the plan was created (plan made against no state, state is now serial ${state.serial}). ${fix}`,
      );
    }
    return;
  }
  if (!state) throw new StalePlanError(`Saved plan is stale: the plan was made against serial ${plan.state_serial}, but there is no state now. ${fix}`);
  if (state.lineage !== plan.state_lineage) {
    throw new StalePlanError(`Saved plan does not match the state: it was made against state lineage ${plan.state_lineage}, but the state has lineage ${state.lineage}. ${fix}`);
  }
  if (state.serial !== plan.state_serial) {
    throw new StalePlanError(
      `Saved plan is stale: the state was changed by another operation after the plan was created (plan made against serial ${plan.state_serial}, state is now serial ${state.serial}). ${fix}`,
    );
  }
}

/** Refuses a plan made against other provider schemas than this engine's (a plan made before the hash was kept is not checked). */
export function assertSameProviderSchemas(plan: SavedPlan, have: string): void {
  if (plan.provider_schema_hash === undefined || plan.provider_schema_hash === have) return;
  throw new StalePlanError(
    `Saved plan was made with other provider schemas (sha256 ${plan.provider_schema_hash}) than this engine has (sha256 ${have}): the engine or its providers changed since the preview, and the plan's values may mean something else now. Run a new preview, then apply it.`,
  );
}

/** apply: executes exactly the saved plan, persisting state after every resource. */
export async function apply(opts: ApplyOptions, saved: SavedPlan): Promise<ApplyResult> {
  const ui = new Ui(opts.emit);
  ui.version();
  let ctx: OperationContext;
  try {
    assertPlanFresh(saved, opts.state);
    const mod = parseModule(saved.configuration.files);
    const variables = Object.fromEntries(Object.entries(saved.variables).map(([k, v]) => [k, v.value]));
    ctx = await prepare(mod, { variables, providerConfig: opts.providerConfig, parallelism: opts.parallelism }, ui);
    assertSameProviderSchemas(saved, planSchemaHash(ctx, [...saved.resource_changes, ...saved.resource_drift]));
  } catch (err) {
    throw reportFailure(ui, err);
  }
  return applyWith(ctx, opts, saved);
}

async function applyWith(ctx: OperationContext, opts: ApplyOptions, saved: SavedPlan): Promise<ApplyResult> {
  const { ui } = ctx;
  const working = cloneState(saved.prior_state);
  let lastPersisted = cloneState(saved.prior_state);
  let persistChain: Promise<void> = Promise.resolve();
  const diagnostics: Diagnostic[] = [];
  const done: ChangeSummary = { add: 0, change: 0, import: 0, remove: 0, forget: 0 };

  let bumped = false;
  // What the backend holds, which the next delta is made from: the state the apply started on (the plan's
  // prior state may differ from it by what the plan's refresh found).
  let stored: StateV4 | null = opts.state;
  // Serialised, so snapshots reach storage in order; serial moves only when content changed.
  // Resource entries changed since the last save (by the walk); null: anything may have (a full comparison).
  let touched: Set<string> | null = null;
  const touch = (addr: string) => {
    const { type, name, module, mode } = parseInstanceAddress(addr);
    touched?.add(resourceKey({ module: module || undefined, mode, type, name }));
  };
  const persist = (): Promise<void> => {
    persistChain = persistChain.then(async () => {
      // Taken with the snapshot, in one turn: an entry a walker is changing was touched before its first write.
      const only = touched;
      touched = new Set();
      // Entries no walker touched since the last save are shared with it (never written again), not copied.
      const snapshot = snapshotState(working, lastPersisted, only);
      if (opts.persistDelta) {
        // The change itself says whether anything changed: the whole state is not encoded twice per resource.
        const from = stored ?? { serial: 0, lineage: snapshot.lineage, resources: [] };
        const delta = diffStates(from, snapshot, stored === lastPersisted && only ? only : undefined);
        const changed = delta.resources.length > 0 || !!delta.fields || !!delta.order || (!opts.state && !bumped);
        snapshot.serial = delta.serial = lastPersisted.serial + (changed ? 1 : 0);
        bumped ||= changed;
        lastPersisted = snapshot;
        if (!stored || delta.serial !== from.serial || delta.resources.length || delta.fields || delta.order) await opts.persistDelta({ baseSerial: from.serial, delta });
        stored = snapshot;
        return;
      }
      const changed = !sameContent(snapshot, lastPersisted) || (!opts.state && !bumped);
      snapshot.serial = lastPersisted.serial + (changed ? 1 : 0);
      bumped ||= changed;
      lastPersisted = snapshot;
      await opts.persistState?.(cloneState(snapshot));
    });
    return persistChain;
  };

  // Moves and forgets only touch the state, so they happen before anything else.
  for (const c of saved.resource_changes) {
    if (c.previous_address && findInstance(working, c.previous_address) && !findInstance(working, c.address)) {
      const it = listInstances(working).find((x) => x.address === c.previous_address)!;
      setInstance(working, c.previous_address, it.resource.provider, null);
      const { index_key: _ignored, ...rest } = it.instance;
      setInstance(working, c.address, it.resource.provider, rest);
    }
    if (c.action === "forget") {
      setInstance(working, c.address, "", null);
      done.forget++;
    }
  }

  // A change the plan marks not executed (delete protection) is never carried out.
  const changes = saved.resource_changes.filter((c) => !c.not_executed && c.action !== "forget" && c.action !== "noop" && c.action !== "move");
  const skipped = saved.resource_changes.filter((c) => c.not_executed).length;
  if (skipped) done.skipped_deletes = skipped;
  const g = new Graph();
  const byAddr = new Map(changes.map((c) => [c.address, c]));
  // Each change's configuration address, worked out once; the changes by it, so an edge is found from a
  // change's own depends_on rather than by comparing every pair (a 151-resource apply asked 22 000 times).
  const base = new Map(changes.map((c) => [c, configAddressOf(c.address)]));
  const kept = new Map<string, ResourceChange[]>();
  const deleted = new Map<string, ResourceChange[]>();
  for (const c of changes) {
    const by = c.action === "delete" ? deleted : kept;
    const list = by.get(base.get(c)!);
    if (list) list.push(c);
    else by.set(base.get(c)!, [c]);
  }
  const deletes = changes.filter((c) => c.action === "delete");
  for (const c of changes) g.add(c.address);
  for (const c of changes) {
    if (c.action === "delete") {
      // Delete dependents first: whoever depends on me must be gone before I go.
      for (const dep of c.depends_on) for (const d of deleted.get(dep) ?? []) if (d !== c) g.connect(d.address, c.address);
    } else {
      for (const dep of c.depends_on) for (const other of kept.get(dep) ?? []) if (other !== c) g.connect(c.address, other.address);
      // Orphans go first, so a new object never collides with an old one still being removed.
      for (const d of deletes) g.connect(c.address, d.address);
    }
  }

  const result = await walk(
    g,
    async (addr) => {
      const c = byAddr.get(addr)!;
      try {
        touch(c.address);
        await applyChange(ctx, c, working, done);
      } finally {
        touch(c.address);
        await persist();
      }
    },
    { parallelism: ctx.parallelism, signal: opts.signal },
  );

  for (const [addr, err] of result.failed) {
    const message = err instanceof Error ? err.message : String(err);
    diagnostics.push({ severity: "error", summary: message.startsWith(addr) ? message : `${addr}: ${message}`, detail: "", address: addr });
  }
  working.outputs = saved.operation === "destroy" ? {} : evaluateOutputs(ctx, working);
  await persist();
  await persistChain;
  for (const d of diagnostics) ui.diagnostic(d);
  const status: ApplyResult["status"] = result.failed.size ? "errored" : result.aborted ? "cancelled" : "applied";
  if (status === "cancelled") ui.log(`Apply cancelled: ${result.notStarted.length} resource(s) were not started; state was saved.`, "warn");
  done.replacements?.sort();
  ui.summary(done, saved.operation === "destroy" ? "destroy" : "apply");
  ui.outputs(lastPersisted.outputs);
  return {
    status,
    state: lastPersisted,
    outputs: lastPersisted.outputs,
    summary: done,
    diagnostics,
    not_applied: [...result.skipped, ...result.notStarted].sort(),
  };
}

async function applyChange(ctx: OperationContext, c: ResourceChange, working: StateV4, done: ChangeSummary): Promise<void> {
  if (c.mode === "data") return readPlannedData(ctx, c, working);
  const p = ctx.providers.forType(c.type);
  if (!p) throw new EngineError(`${c.address}: the builtin engine has no provider for "${c.type}"`);
  const providerAddr = providerAddress(p.schema);
  const current = findInstance(working, c.address);

  const run = async (action: ChangeAction, id: ReturnType<typeof idOf>, fn: () => Promise<void>) => {
    const started = Date.now();
    ctx.ui.applyStart(c.address, action, action === "create" ? undefined : id);
    try {
      await fn();
    } catch (err) {
      ctx.ui.applyErrored(c.address, action, Math.round((Date.now() - started) / 1000));
      throw err;
    }
    const now = findInstance(working, c.address);
    ctx.ui.applyComplete(c.address, action, Math.round((Date.now() - started) / 1000), action === "delete" ? undefined : idOf(ctx, c.type, now?.attributes));
  };

  const destroy = async () => {
    const prior = findInstance(working, c.address);
    if (!prior) return;
    await run("delete", idOf(ctx, c.type, prior.attributes), async () => {
      await p.provider.apply({ address: c.address, type: c.type, prior: prior.attributes, planned: null });
      setInstance(working, c.address, providerAddr, null);
    });
  };

  /** `ignoreBase`: the object whose values lifecycle.ignore_changes keeps (the replaced one, for a replace). */
  const write = async (prior: Attrs | null, action: "create" | "update", ignoreBase: Attrs | null = prior) => {
    const found = instanceScope(ctx, c.address, stateValues(working));
    if (!found) throw new EngineError(`${c.address}: the saved plan's configuration has no resource block for it; run a new preview`);
    await run(action, idOf(ctx, c.type, prior), async () => {
      // Re-plan with the values upstream resources now have; known planned values must not move.
      const config = configWithIgnores(ctx, found.entry.r, p.resource, found.scope, ignoreBase);
      const resp = await p.provider.plan({ address: c.address, type: c.type, prior, config });
      checkConsistent(c, resp.planned);
      const res = await p.provider.apply({ address: c.address, type: c.type, prior, planned: resp.planned });
      if (!res.state) throw new EngineError(`${c.address}: the provider returned no object after ${action}`);
      setInstance(working, c.address, providerAddr, {
        schema_version: p.resource.version,
        attributes: res.state,
        sensitive_attributes: withConfigMarks(sensitivePaths(p.resource), c.change.after_sensitive),
        dependencies: c.depends_on,
      });
    });
  };

  if (c.change.importing && !current) {
    const attrs = c.change.before as Attrs;
    await run("import", { key: "id", value: c.change.importing.id }, async () => {
      setInstance(working, c.address, providerAddr, { schema_version: p.resource.version, attributes: attrs, sensitive_attributes: sensitivePaths(p.resource), dependencies: c.depends_on });
    });
    done.import++;
  }

  switch (c.action) {
    case "import":
      return;
    case "create":
      await write(null, "create");
      done.add++;
      return;
    case "update":
      await write(findInstance(working, c.address)?.attributes ?? null, "update");
      done.change++;
      return;
    case "replace": {
      const old = findInstance(working, c.address);
      (done.replacements ??= []).push(c.address);
      if (c.change.actions[0] === "create" && old) {
        // create_before_destroy: the new object exists before the old one goes.
        await write(null, "create", old.attributes);
        done.add++;
        const oldId = idOf(ctx, c.type, old.attributes);
        try {
          await run("delete", oldId, async () => {
            await p.provider.apply({ address: c.address, type: c.type, prior: old.attributes, planned: null });
          });
        } catch (err) {
          // The state has room for one object per address (no deposed objects): say what is left behind.
          throw new EngineError(
            `${c.address}: the replacement was created, but the old object${oldId ? ` (${oldId.key}=${oldId.value})` : ""} could not be destroyed: ${err instanceof Error ? err.message : String(err)}. It is no longer in the state; remove it by hand.`,
          );
        }
        done.remove++;
        return;
      }
      await destroy();
      done.remove++;
      await write(null, "create", old?.attributes ?? null);
      done.add++;
      return;
    }
    case "delete":
      await destroy();
      done.remove++;
      return;
    default:
      return;
  }
}

/** A data source the plan could not read (its arguments were unknown): read now that they are known. */
async function readPlannedData(ctx: OperationContext, c: ResourceChange, working: StateV4): Promise<void> {
  const found = instanceScope(ctx, c.address, stateValues(working));
  const p = ctx.providers.forData(c.type);
  if (!found || !p) throw new EngineError(`${c.address}: the saved plan's configuration has no data block for it; run a new preview`);
  const config = evaluateResourceConfig(ctx, found.entry.r, p.resource, found.scope);
  const state = await readData(ctx, c.address, c.type, config);
  setInstance(working, c.address, providerAddress(p.schema), { schema_version: p.resource.version, attributes: state, sensitive_attributes: sensitivePaths(p.resource), dependencies: [] });
}

/** Values known at plan time must come out the same at apply time (OpenTofu: "inconsistent final plan"). */
function checkConsistent(c: ResourceChange, now: Attrs): void {
  const planned = joinUnknowns(c.change.after, c.change.after_unknown) as Attrs;
  for (const [k, v] of Object.entries(planned ?? {})) {
    if (isUnknown(v) || containsUnknownDeep(v)) continue;
    if (!deepEqual(v, now[k] ?? null)) {
      throw new EngineError(
        `${c.address}: Provider produced inconsistent final plan: "${k}" was planned as ${JSON.stringify(v)} but is now ${JSON.stringify(now[k] ?? null)}. Run a new preview, then apply it.`,
      );
    }
  }
}

function containsUnknownDeep(v: Value): boolean {
  if (isUnknown(v)) return true;
  if (Array.isArray(v)) return v.some(containsUnknownDeep);
  if (v && typeof v === "object") return Object.values(v).some(containsUnknownDeep);
  return false;
}

/** The schema's sensitive attributes plus the arguments the plan marked sensitive because they derive from sensitive values. */
function withConfigMarks(paths: SensitivePath[], afterSensitive: Value): SensitivePath[] {
  if (!afterSensitive || typeof afterSensitive !== "object" || Array.isArray(afterSensitive)) return paths;
  const have = new Set(paths.map((p) => p[0]?.value));
  const more = Object.entries(afterSensitive)
    .filter(([name, m]) => m !== false && !have.has(name))
    .map(([name]): SensitivePath => [{ type: "get_attr", value: name }]);
  return [...paths, ...more];
}
