import { createHash } from "node:crypto";
import { DELETE_PROTECTION, protectedDeleteMessage, protectedReplaceMessage } from "../../lib/delete-protection";
import { evaluate, evaluateMarked } from "../config/evaluate";
import { loadModule, type ResourceConfig } from "../config/module";
import { ConfigError, EngineError } from "../errors";
import { Graph, walk } from "../graph/graph";
import { providerAddress } from "../providers/provider";
import { cloneState, emptyState, listInstances, parseInstanceAddress, setInstance } from "../state/state";
import type { ChangeAction, ChangeSummary, EngineOptions, OutputChange, PlanRequest, PlanResult, ResourceChange, SavedPlan, StateV4 } from "../types";
import { Ui } from "../ui-messages";
import { canonicalJson, containsUnknown, deepEqual, splitUnknowns, type Attrs, type Value } from "../values";
import { ENGINE_VERSION } from "../version";
import { configMarks, evaluateResourceConfig, instanceAddresses, makeScope, prepare, reportFailure, sensitiveMask, type OperationContext } from "./context";
import { refreshInPlace } from "./refresh";

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
  type: string;
  name: string;
  index?: number;
  provider: string;
  action: ChangeAction;
  reason?: ResourceChange["action_reason"];
  before: Attrs | null;
  after: Attrs | null;
  replacePaths?: string[];
  previous?: string;
  importId?: string;
  dependsOn: string[];
  /** Arguments whose values derive from sensitive values (see configMarks). */
  configMarks?: Attrs;
}

function toResourceChange(ctx: OperationContext, p: Pending): ResourceChange {
  const schema = ctx.providers.forType(p.type)?.resource;
  const mask = { ...(schema ? sensitiveMask(schema) : {}), ...p.configMarks };
  const after = p.after === null ? { known: null, unknown: false as Value } : splitUnknowns(p.after);
  return {
    address: p.address,
    ...(p.previous ? { previous_address: p.previous } : {}),
    mode: "managed",
    type: p.type,
    name: p.name,
    ...(p.index !== undefined ? { index: p.index } : {}),
    provider_name: p.provider.replace(/^provider\["(.*)"\]$/, "$1"),
    action: p.action,
    ...(p.reason ? { action_reason: p.reason } : {}),
    change: {
      actions: TF_ACTIONS[p.action],
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

async function planWith(ctx: OperationContext, opts: EngineOptions, req: PlanRequest): Promise<PlanResult> {
  const { mod, ui } = ctx;
  const prior = opts.state;
  const refreshed = prior ? cloneState(prior) : emptyState();
  const doRefresh = req.refresh !== false;
  const drift = prior && doRefresh ? await refreshInPlace(ctx, refreshed) : [];
  const driftChanges = drift;

  // Working copy the plan reasons about: refreshed state with moved blocks applied.
  const working = cloneState(refreshed);
  const movedFrom = new Map<string, string>();
  for (const m of mod.moved) {
    for (const it of listInstances(working)) {
      const matches = it.address === m.from || it.address.startsWith(`${m.from}[`);
      if (!matches) continue;
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
        if (it.address !== r.from && !it.address.startsWith(`${r.from}[`)) continue;
        if (mod.resources.has(r.from.replace(/\[\d+\]$/, ""))) {
          throw new EngineError(`${r.from}: a removed block names a resource that is still in the configuration; remove the resource block or the removed block`);
        }
        if (r.destroy) continue; // planned as an ordinary delete below
        forgotten.add(it.address);
        pending.push({
          address: it.address,
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
      const base = imp.to.replace(/\[\d+\]$/, "");
      const r = mod.resources.get(base);
      if (!r) throw new EngineError(`${imp.to}: an import block targets a resource that is not in the configuration; add a resource "${parseInstanceAddress(imp.to).type}" "${parseInstanceAddress(imp.to).name}" block`);
      const id = evaluate(imp.id, baseScope);
      if (typeof id !== "string") throw new EngineError(`${imp.to}: the import id must be a string known at plan time`);
      const p = ctx.providers.forType(r.type)!;
      const { state } = await p.provider.importState({ address: imp.to, type: r.type, id });
      imports.set(imp.to, { id, attrs: state });
    }
  }

  const planned = new Map<string, Attrs>();
  const configured = new Set<string>();
  if (!req.destroy) {
    const g = new Graph();
    for (const r of mod.resources.values()) {
      g.add(r.address);
      for (const d of ctx.resourceDeps.get(r.address)!) g.connect(r.address, d);
    }
    const walked = await walk(
      g,
      async (addr) => {
        const r = mod.resources.get(addr)!;
        const scopeBase = makeScope(ctx, (a) => planned.get(a));
        for (const inst of instanceAddresses(ctx, r, scopeBase)) {
          configured.add(inst.address);
          pending.push(await planInstance(ctx, r, inst, makeScope(ctx, (a) => planned.get(a), inst.index), working, imports, movedFrom, planned));
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
    if (configured.has(it.address) || forgotten.has(it.address)) continue;
    const base = it.address.replace(/\[\d+\]$/, "");
    pending.push({
      address: it.address,
      type: it.resource.type,
      name: it.resource.name,
      index: it.instance.index_key,
      provider: it.resource.provider,
      action: "delete",
      reason: req.destroy ? undefined : mod.resources.has(base) ? "delete_because_count_index" : "delete_because_no_resource_config",
      before: it.instance.attributes,
      after: null,
      previous: movedFrom.get(it.address),
      dependsOn: it.instance.dependencies,
    });
  }

  const protectDeletes = !!req.protectDeletes && !req.destroy;
  const changes = orderChanges(pending)
    .map((p) => toResourceChange(ctx, p))
    .map((c) => (protectDeletes ? protect(c) : c));

  const outputChanges: Record<string, OutputChange> = {};
  const valueScope = makeScope(ctx, (a) => planned.get(a));
  for (const o of [...mod.outputs.values()].sort((a, b) => a.name.localeCompare(b.name))) {
    const before = working.outputs[o.name]?.value ?? null;
    const had = o.name in working.outputs;
    if (req.destroy) {
      if (had) outputChanges[o.name] = { actions: ["delete"], before, after: null, after_unknown: false, sensitive: o.sensitive };
      continue;
    }
    const { value: v, marks } = evaluateMarked(o.expr, valueScope);
    if (marks !== false && !o.sensitive) {
      throw new ConfigError(
        `Output refers to sensitive values: output "${o.name}" shows a value derived from a sensitive value`,
        o.range,
        `Add sensitive = true to output "${o.name}" so its value is redacted in logs and the console, or wrap the value in nonsensitive() if it reveals nothing secret.`,
      );
    }
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
      // OpenTofu's UI names a replace's reason "cannot_update"; delete reasons keep their plan names.
      reason: c.action_reason === "replace_because_cannot_update" ? "cannot_update" : c.action_reason,
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
    applyable: changes.some((c) => c.action !== "noop" && !c.not_executed) || Object.values(outputChanges).some((o) => o.actions[0] !== "no-op"),
    summary,
  };
  const bytes = encodePlan(saved);
  return { plan: saved, bytes, checksum: planChecksum(bytes), state: refreshed };
}

async function planInstance(
  ctx: OperationContext,
  r: ResourceConfig,
  inst: { address: string; index?: number },
  scope: ReturnType<typeof makeScope>,
  working: StateV4,
  imports: Map<string, { id: string; attrs: Attrs }>,
  movedFrom: Map<string, string>,
  planned: Map<string, Attrs>,
): Promise<Pending> {
  const p = ctx.providers.forType(r.type)!;
  const existing = listInstances(working).find((x) => x.address === inst.address);
  const imported = imports.get(inst.address);
  const prior = existing?.instance.attributes ?? imported?.attrs ?? null;
  const config = evaluateResourceConfig(ctx, r, p.resource, scope);
  const marks = configMarks(r, scope);
  const resp = await p.provider.plan({ address: inst.address, type: r.type, prior, config });
  let action: ChangeAction;
  if (!prior) action = "create";
  else if (resp.requiresReplace.length) action = "replace";
  else if (deepEqual(resp.planned, prior)) action = imported ? "import" : movedFrom.has(inst.address) ? "move" : "noop";
  else action = "update";
  // What later expressions see: the planned value (with unknowns), or the unchanged prior state.
  planned.set(inst.address, action === "noop" || action === "import" || action === "move" ? prior! : resp.planned);
  return {
    address: inst.address,
    type: r.type,
    name: r.name,
    index: inst.index,
    provider: providerAddress(p.schema),
    action,
    reason: action === "replace" ? "replace_because_cannot_update" : undefined,
    before: prior,
    after: resp.planned,
    replacePaths: action === "replace" ? resp.requiresReplace : undefined,
    previous: movedFrom.get(inst.address),
    importId: imported?.id,
    dependsOn: ctx.resourceDeps.get(r.address)!,
    configMarks: marks,
  };
}

/** Non-deletes in dependency order, then deletes in reverse dependency order; names break ties. */
function orderChanges(pending: Pending[]): Pending[] {
  const base = (a: string) => a.replace(/\[\d+\]$/, "");
  const rank = (list: Pending[], reverse: boolean): Pending[] => {
    const g = new Graph();
    for (const p of list) g.add(p.address);
    for (const p of list) for (const q of list) if (p !== q && p.dependsOn.includes(base(q.address))) g.connect(p.address, q.address);
    const order = g.topologicalOrder();
    const byAddr = new Map(list.map((p) => [p.address, p]));
    return (reverse ? order.reverse() : order).map((a) => byAddr.get(a)!);
  };
  const deletes = pending.filter((p) => p.action === "delete");
  const forgets = pending.filter((p) => p.action === "forget").sort((a, b) => a.address.localeCompare(b.address));
  const others = pending.filter((p) => p.action !== "delete" && p.action !== "forget");
  return [...forgets, ...rank(others, false), ...rank(deletes, true)];
}
