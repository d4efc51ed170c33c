import { createHash } from "node:crypto";
import { DELETE_PROTECTION, protectedDeleteMessage, protectedReplaceMessage } from "../../lib/delete-protection";
import { evaluate, type EvalScope } from "../config/evaluate";
import { loadModule } from "../config/module";
import { EngineError } from "../errors";
import { Graph, walk } from "../graph/graph";
import { providerAddress } from "../providers/provider";
import { configAddress, configAddressOf, formatModule, parseAddress, type InstanceKey } from "../state/address";
import { cloneState, emptyState, listInstances, parseInstanceAddress, setInstance } from "../state/state";
import type { ChangeAction, ChangeSummary, EngineOptions, OutputChange, PlanRequest, PlanResult, ResourceChange, SavedPlan, StateV4 } from "../types";
import { Ui } from "../ui-messages";
import { canonicalJson, containsUnknown, deepEqual, splitUnknowns, UNKNOWN, type Attrs, type Value } from "../values";
import { ENGINE_VERSION } from "../version";
import { planSchemaHash, prepare, reportFailure, sensitiveMask, sensitivePaths, type OperationContext, type ResourceEntry } from "./context";
import {
  checkModuleInstances,
  configMarks,
  evaluateResourceConfig,
  makeScope,
  moduleInstancesAt,
  outputMarked,
  resourceInstances,
  type ModuleInstance,
  type Repetition,
} from "./expand";
import { refreshInPlace } from "./refresh";
import { readData } from "./data-sources";
import { configWithIgnores, refuseProtectedDestroy, triggered } from "./lifecycle";

/** SHA-256 hex of a saved plan's canonical bytes. */
export function planChecksum(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

export function encodePlan(plan: SavedPlan): Uint8Array {
  return new TextEncoder().encode(canonicalJson(plan));
}

export function decodePlan(bytes: Uint8Array): SavedPlan {
  const plan = JSON.parse(new TextDecoder().decode(bytes)) as SavedPlan & { masked?: boolean };
  if (plan.planton_plan_format !== 1) throw new EngineError("Unsupported plan file: it was not written by this version of the builtin engine; run a new preview");
  if (plan.masked) throw new EngineError("This is the review rendition of a plan, with sensitive values masked; it cannot be applied. Apply the job's executable plan, or run a new preview");
  return plan;
}

const TF_ACTIONS: Record<ChangeAction, string[]> = {
  noop: ["no-op"],
  create: ["create"],
  read: ["read"],
  update: ["update"],
  replace: ["delete", "create"],
  delete: ["delete"],
  import: ["no-op"],
  move: ["no-op"],
  forget: ["forget"],
};

/** Counts what will execute; changes marked not_executed count only as skipped deletes. */
export function summarize(changes: ResourceChange[]): ChangeSummary {
  const s: ChangeSummary = { add: 0, change: 0, import: 0, remove: 0, forget: 0 };
  let skipped = 0;
  const replacements: string[] = [];
  for (const c of changes) {
    if (c.not_executed) {
      skipped++;
      continue;
    }
    if (c.change.importing) s.import++;
    if (c.action === "create") s.add++;
    if (c.action === "update") s.change++;
    if (c.action === "delete") s.remove++;
    if (c.action === "replace") (s.add++, s.remove++, replacements.push(c.address));
    if (c.action === "forget") s.forget++;
  }
  if (skipped) s.skipped_deletes = skipped;
  if (replacements.length) s.replacements = replacements;
  return s;
}

/** Delete protection: in a plan that is not a destroy, deletes and replaces stay in view but are marked not to execute. */
function protect(c: ResourceChange): ResourceChange {
  if (c.action === "delete") return { ...c, not_executed: { reason: DELETE_PROTECTION, message: protectedDeleteMessage(c.address) } };
  // A replace is left out whole: its delete would destroy the protected object, a create alone would collide with it.
  if (c.action === "replace") return { ...c, not_executed: { reason: DELETE_PROTECTION, message: protectedReplaceMessage(c.address) } };
  return c;
}

interface Pending {
  address: string;
  mode: "managed" | "data";
  type: string;
  name: string;
  index?: InstanceKey;
  provider: string;
  action: ChangeAction;
  reason?: ResourceChange["action_reason"];
  before: Attrs | null;
  after: Attrs | null;
  replacePaths?: string[];
  previous?: string;
  importId?: string;
  /** A replace that creates the new object before destroying the old (lifecycle.create_before_destroy). */
  createFirst?: boolean;
  dependsOn: string[];
  /** Arguments whose values derive from sensitive values (see configMarks). */
  configMarks?: Attrs;
}

function schemaFor(ctx: OperationContext, mode: "managed" | "data", type: string) {
  return (mode === "data" ? ctx.providers.forData(type) : ctx.providers.forType(type))?.resource;
}

function toResourceChange(ctx: OperationContext, p: Pending): ResourceChange {
  const schema = schemaFor(ctx, p.mode, p.type);
  // The schema's sensitive attributes are sensitive whole; other arguments as far as they derive from sensitive values.
  const mask = { ...p.configMarks, ...(schema ? sensitiveMask(schema) : {}) };
  const after = p.after === null ? { known: null, unknown: false as Value } : splitUnknowns(p.after);
  const moduleAddress = parseInstanceAddress(p.address).module;
  return {
    address: p.address,
    ...(p.previous ? { previous_address: p.previous } : {}),
    ...(moduleAddress ? { module_address: moduleAddress } : {}),
    mode: p.mode,
    type: p.type,
    name: p.name,
    ...(p.index !== undefined ? { index: p.index } : {}),
    provider_name: p.provider.replace(/^provider\["(.*)"\]$/, "$1"),
    action: p.action,
    ...(p.reason ? { action_reason: p.reason } : {}),
    change: {
      actions: p.action === "replace" && p.createFirst ? ["create", "delete"] : TF_ACTIONS[p.action],
      before: p.before,
      after: after.known,
      after_unknown: p.after === null ? false : after.unknown === false ? {} : after.unknown,
      before_sensitive: p.before === null ? false : mask,
      after_sensitive: p.after === null ? false : mask,
      ...(p.replacePaths?.length ? { replace_paths: p.replacePaths.map((a) => [a]) } : {}),
      ...(p.importId !== undefined ? { importing: { id: p.importId } } : {}),
    },
    depends_on: p.dependsOn,
  };
}

/** plan: refreshes (unless told not to), diffs config against state, and returns a saved plan with its checksum. */
export async function plan(opts: EngineOptions, req: PlanRequest = {}): Promise<PlanResult> {
  const ui = new Ui(opts.emit);
  ui.version();
  try {
    const mod = await loadModule(opts.moduleDir);
    const ctx = await prepare(mod, opts, ui);
    return await planWith(ctx, opts, req);
  } catch (err) {
    throw reportFailure(ui, err);
  }
}

/** `rest` continues an address whose start matched: nothing, an instance key, or (for a module) the rest of the path. */
const continues = (addr: string, from: string) => addr === from || addr.startsWith(`${from}[`) || addr.startsWith(`${from}.`);

async function planWith(ctx: OperationContext, opts: EngineOptions, req: PlanRequest): Promise<PlanResult> {
  const { mod, ui } = ctx;
  // A called module's variable that its type or validation refuses stops the plan before anything is read.
  if (!req.destroy) checkModuleInstances(ctx, () => undefined, { outputs: false, early: true });
  const prior = opts.state;
  const refreshed = prior ? cloneState(prior) : emptyState();
  const doRefresh = req.refresh !== false;
  const drift = prior && doRefresh ? await refreshInPlace(ctx, refreshed) : [];
  const driftChanges = drift;
  // Data sources are read again below (a destroy reads none and leaves none in state).
  for (const it of listInstances(refreshed)) if (it.resource.mode === "data") setInstance(refreshed, it.address, it.resource.provider, null);

  // Working copy the plan reasons about: refreshed state with moved blocks applied.
  const working = cloneState(refreshed);
  const movedFrom = new Map<string, string>();
  for (const m of mod.moved) {
    for (const it of listInstances(working)) {
      if (!continues(it.address, m.from)) continue;
      const to = m.to + it.address.slice(m.from.length);
      if (listInstances(working).some((x) => x.address === to)) continue;
      setInstance(working, it.address, it.resource.provider, null);
      const { index_key: _ignored, ...rest } = it.instance;
      setInstance(working, to, it.resource.provider, rest);
      movedFrom.set(to, it.address);
    }
  }

  const pending: Pending[] = [];
  const forgotten = new Set<string>();
  if (!req.destroy) {
    for (const r of mod.removed) {
      for (const it of listInstances(working)) {
        if (!continues(it.address, r.from)) continue;
        if (ctx.resources.has(configAddressOf(r.from))) {
          throw new EngineError(`${r.from}: a removed block names a resource that is still in the configuration; remove the resource block or the removed block`);
        }
        if (r.destroy) continue; // planned as an ordinary delete below
        forgotten.add(it.address);
        pending.push({
          address: it.address,
          mode: "managed",
          type: it.resource.type,
          name: it.resource.name,
          index: it.instance.index_key,
          provider: it.resource.provider,
          action: "forget",
          before: it.instance.attributes,
          after: null,
          dependsOn: [],
        });
      }
    }
  }

  const baseScope = makeScope(ctx, () => undefined);
  const imports = new Map<string, { id: string; attrs: Attrs }>();
  if (!req.destroy) {
    for (const imp of mod.imports) {
      if (listInstances(working).some((x) => x.address === imp.to)) continue; // already managed: the import block is a no-op
      const entry = ctx.resources.get(configAddressOf(imp.to));
      if (!entry || entry.r.mode !== "managed") {
        const { type, name } = parseInstanceAddress(imp.to);
        throw new EngineError(`${imp.to}: an import block targets a resource that is not in the configuration; add a resource "${type}" "${name}" block`);
      }
      const id = evaluate(imp.id, baseScope);
      if (typeof id !== "string") throw new EngineError(`${imp.to}: the import id must be a string known at plan time`);
      const p = ctx.providers.forType(entry.r.type)!;
      const { state } = await p.provider.importState({ address: imp.to, type: entry.r.type, id });
      imports.set(imp.to, { id, attrs: state });
    }
  }

  const planned = new Map<string, Attrs>();
  const changeOf = new Map<string, Pending>();
  const configured = new Set<string>();
  const expandedModules = new Set<string>([""]);
  if (!req.destroy) {
    const g = new Graph();
    for (const addr of ctx.resources.keys()) {
      g.add(addr);
      for (const d of ctx.resourceDeps.get(addr)!) g.connect(addr, d);
    }
    const values = (a: string) => planned.get(a);
    const walked = await walk(
      g,
      async (addr) => {
        const entry = ctx.resources.get(addr)!;
        for (const mi of moduleInstancesAt(ctx, entry.path, values)) {
          expandedModules.add(mi.address);
          for (const inst of resourceInstances(ctx, mi, entry.r, values)) {
            configured.add(inst.address);
            const scope = makeScope(ctx, values, mi, inst.rep);
            if (entry.r.mode === "data") {
              const read = await planDataRead(ctx, entry, inst, scope, refreshed, planned, changeOf);
              if (read) pending.push(read);
              continue;
            }
            const p = await planInstance(ctx, entry, inst, scope, working, imports, movedFrom, planned, changeOf, mi);
            changeOf.set(inst.address, p);
            pending.push(p);
          }
        }
      },
      { parallelism: ctx.parallelism },
    );
    if (walked.failed.size) {
      const [first] = [...walked.failed.values()];
      throw first;
    }
  }

  // Everything in state that the configuration no longer has (or all of it, for destroy) is deleted.
  for (const it of listInstances(working)) {
    if (it.resource.mode === "data" || configured.has(it.address) || forgotten.has(it.address)) continue;
    pending.push({
      address: it.address,
      mode: "managed",
      type: it.resource.type,
      name: it.resource.name,
      index: it.instance.index_key,
      provider: it.resource.provider,
      action: "delete",
      reason: req.destroy ? undefined : deleteReason(ctx, it.address, expandedModules),
      before: it.instance.attributes,
      after: null,
      previous: movedFrom.get(it.address),
      dependsOn: it.instance.dependencies,
    });
  }
  for (const p of pending) if (p.action === "delete" || p.action === "replace") refuseProtectedDestroy(ctx, p.address);

  const protectDeletes = !!req.protectDeletes && !req.destroy;
  const changes = orderChanges(pending)
    .map((p) => toResourceChange(ctx, p))
    .map((c) => (protectDeletes ? protect(c) : c));

  // Called modules' variables are converted and validated, and their outputs checked, even where nothing refers to them.
  if (!req.destroy) checkModuleInstances(ctx, (a) => planned.get(a), { outputs: true });
  const outputChanges: Record<string, OutputChange> = {};
  const valueScope = makeScope(ctx, (a) => planned.get(a));
  for (const o of [...mod.outputs.values()].sort((a, b) => a.name.localeCompare(b.name))) {
    const before = working.outputs[o.name]?.value ?? null;
    const had = o.name in working.outputs;
    if (req.destroy) {
      if (had) outputChanges[o.name] = { actions: ["delete"], before, after: null, after_unknown: false, sensitive: o.sensitive };
      continue;
    }
    const { value: v } = outputMarked(o, valueScope);
    const unknown = containsUnknown(v);
    const after = unknown ? null : v;
    const action = !had ? "create" : unknown || !deepEqual(before, after) ? "update" : "no-op";
    outputChanges[o.name] = { actions: [action], before: had ? before : null, after, after_unknown: unknown, sensitive: o.sensitive };
  }
  if (!req.destroy) {
    for (const name of Object.keys(working.outputs)) {
      if (!mod.outputs.has(name)) outputChanges[name] = { actions: ["delete"], before: working.outputs[name]!.value, after: null, after_unknown: false, sensitive: !!working.outputs[name]!.sensitive };
    }
  }

  for (const c of changes) {
    if (c.action === "noop") continue;
    ui.plannedChange(c.address, c.action, {
      reason: uiReason(c.action_reason),
      previous: c.previous_address,
      importId: c.change.importing?.id,
      notExecuted: c.not_executed,
    });
  }
  const summary = summarize(changes);
  ui.summary(summary, "plan");
  ui.plannedOutputs(
    Object.fromEntries(
      Object.entries(outputChanges).map(([n, c]) => [n, { action: c.actions[0] === "no-op" ? "noop" : (c.actions[0] as "create" | "update" | "delete"), sensitive: c.sensitive }]),
    ),
  );

  const saved: SavedPlan = {
    format_version: "1.0",
    planton_plan_format: 1,
    engine_version: ENGINE_VERSION,
    timestamp: new Date().toISOString(),
    operation: req.destroy ? "destroy" : "plan",
    state_lineage: prior ? prior.lineage : null,
    state_serial: prior ? prior.serial : null,
    variables: Object.fromEntries(Object.entries(ctx.variables).map(([k, v]) => [k, mod.variables.get(k)?.sensitive ? { value: v, sensitive: true } : { value: v }])),
    resource_drift: driftChanges,
    resource_changes: changes,
    output_changes: outputChanges,
    prior_state: refreshed,
    configuration: { files: mod.files },
    delete_operations_computed: doRefresh || !prior,
    provider_schema_hash: planSchemaHash(ctx, [...changes, ...driftChanges]),
    applyable: changes.some((c) => c.action !== "noop" && !c.not_executed) || Object.values(outputChanges).some((o) => o.actions[0] !== "no-op"),
    summary,
  };
  const bytes = encodePlan(saved);
  return { plan: saved, bytes, checksum: planChecksum(bytes), state: refreshed };
}

/** OpenTofu's UI names a replace's reason "cannot_update"; the other reasons keep their plan names. */
function uiReason(reason: ResourceChange["action_reason"]): string | undefined {
  if (reason === "replace_because_cannot_update") return "cannot_update";
  return reason;
}

/** Why an instance in state but not in the configuration is deleted, in OpenTofu's words. */
function deleteReason(ctx: OperationContext, address: string, expandedModules: Set<string>): ResourceChange["action_reason"] {
  const a = parseAddress(address);
  if (!expandedModules.has(formatModule(a.module))) return "delete_because_no_module";
  const entry = ctx.resources.get(configAddress(a));
  if (!entry) return "delete_because_no_resource_config";
  if (entry.r.count && typeof a.key === "number") return "delete_because_count_index";
  if (entry.r.forEach && typeof a.key === "string") return "delete_because_each_key";
  return "delete_because_wrong_repetition";
}

/** Reads a data source during the plan when its arguments are known; otherwise plans the read for apply. */
async function planDataRead(
  ctx: OperationContext,
  entry: ResourceEntry,
  inst: { address: string; key?: InstanceKey },
  scope: EvalScope,
  refreshed: StateV4,
  planned: Map<string, Attrs>,
  changeOf: Map<string, Pending>,
): Promise<Pending | null> {
  const r = entry.r;
  const p = ctx.providers.forData(r.type)!;
  const config = evaluateResourceConfig(ctx, r, p.resource, scope);
  const provider = providerAddress(p.schema);
  const deps = new Set(ctx.resourceDeps.get(entry.prefix + r.address)!);
  // As OpenTofu: a data source waits for apply when its arguments are unknown or a resource it depends on will change.
  const pendingDep = [...changeOf.values()].some((c) => c.action !== "noop" && c.action !== "move" && deps.has(configAddressOf(c.address)));
  if (containsUnknown(config) || pendingDep) {
    const after: Attrs = { ...config };
    for (const [name, a] of Object.entries(p.resource.attributes)) if (!a.required && !a.optional) after[name] = UNKNOWN as unknown as Value;
    planned.set(inst.address, after);
    return {
      address: inst.address,
      mode: "data",
      type: r.type,
      name: r.name,
      index: inst.key,
      provider,
      action: "read",
      reason: containsUnknown(config) ? "read_because_config_unknown" : "read_because_dependency_pending",
      before: null,
      after,
      dependsOn: ctx.resourceDeps.get(entry.prefix + r.address)!,
    };
  }
  const state = await readData(ctx, inst.address, r.type, config);
  planned.set(inst.address, state);
  setInstance(refreshed, inst.address, provider, { schema_version: p.resource.version, attributes: state, sensitive_attributes: sensitivePaths(p.resource), dependencies: [] });
  return null;
}

async function planInstance(
  ctx: OperationContext,
  entry: ResourceEntry,
  inst: { address: string; key?: InstanceKey; rep: Repetition },
  scope: EvalScope,
  working: StateV4,
  imports: Map<string, { id: string; attrs: Attrs }>,
  movedFrom: Map<string, string>,
  planned: Map<string, Attrs>,
  changeOf: Map<string, Pending>,
  mi: ModuleInstance,
): Promise<Pending> {
  const r = entry.r;
  const p = ctx.providers.forType(r.type)!;
  const existing = listInstances(working).find((x) => x.address === inst.address);
  const imported = imports.get(inst.address);
  const prior = existing?.instance.attributes ?? imported?.attrs ?? null;
  const config = configWithIgnores(ctx, r, p.resource, scope, prior);
  const marks = configMarks(r, p.resource, scope);
  let resp = await p.provider.plan({ address: inst.address, type: r.type, prior, config });
  let action: ChangeAction;
  let reason: ResourceChange["action_reason"];
  if (!prior) action = "create";
  else if (resp.requiresReplace.length) (action = "replace"), (reason = "replace_because_cannot_update");
  else if (triggered(r, scope, mi, changeOf)) {
    action = "replace";
    reason = "replace_by_triggers";
    resp = { ...(await p.provider.plan({ address: inst.address, type: r.type, prior: null, config })), requiresReplace: [] };
  } else if (deepEqual(resp.planned, prior)) action = imported ? "import" : movedFrom.has(inst.address) ? "move" : "noop";
  else action = "update";
  // What later expressions see: the planned value (with unknowns), or the unchanged prior state.
  planned.set(inst.address, action === "noop" || action === "import" || action === "move" ? prior! : resp.planned);
  return {
    address: inst.address,
    mode: "managed",
    type: r.type,
    name: r.name,
    index: inst.key,
    provider: providerAddress(p.schema),
    action,
    reason,
    before: prior,
    after: resp.planned,
    replacePaths: action === "replace" && resp.requiresReplace.length ? resp.requiresReplace : undefined,
    previous: movedFrom.get(inst.address),
    importId: imported?.id,
    createFirst: r.lifecycle.createBeforeDestroy || undefined,
    dependsOn: ctx.resourceDeps.get(entry.prefix + r.address)!,
    configMarks: marks,
  };
}

/** Non-deletes in dependency order, then deletes in reverse dependency order; names break ties. */
function orderChanges(pending: Pending[]): Pending[] {
  const rank = (list: Pending[], reverse: boolean): Pending[] => {
    const g = new Graph();
    // Each change's configuration address once, and the changes under each: an edge per dependency, not a look at every pair.
    const under = new Map<string, string[]>();
    for (const p of list) {
      g.add(p.address);
      const base = configAddressOf(p.address);
      const same = under.get(base);
      if (same) same.push(p.address);
      else under.set(base, [p.address]);
    }
    for (const p of list) for (const d of new Set(p.dependsOn)) for (const q of under.get(d) ?? []) if (q !== p.address) g.connect(p.address, q);
    const order = g.topologicalOrder();
    const byAddr = new Map(list.map((p) => [p.address, p]));
    return (reverse ? order.reverse() : order).map((a) => byAddr.get(a)!);
  };
  const deletes = pending.filter((p) => p.action === "delete");
  const forgets = pending.filter((p) => p.action === "forget").sort((a, b) => a.address.localeCompare(b.address));
  const others = pending.filter((p) => p.action !== "delete" && p.action !== "forget");
  return [...forgets, ...rank(others, false), ...rank(deletes, true)];
}
