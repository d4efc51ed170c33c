import { evaluate } from "../config/evaluate";
import { Graph, walk } from "../graph/graph";
import { cloneState, emptyState, listInstances, parseInstanceAddress, sameContent, setInstance } from "../state/state";
import type { InstanceKey } from "../state/address";
import type { EngineOptions, RefreshResult, ResourceChange, StateOutput, StateV4 } from "../types";
import { Ui } from "../ui-messages";
import { containsUnknown, ctyType, deepEqual, type Attrs } from "../values";
import { idOf, loadAndPrepare, reportFailure, sensitiveMask, stateValues, type OperationContext } from "./context";
import { readDataSources } from "./data-sources";
import { makeScope } from "./expand";
import { EngineError } from "../errors";

/**
 * Reads every resource in `state` through its provider and updates `state` in place.
 * Returns the drift found: "delete" when the object is gone, "update" when it changed.
 */
export async function refreshInPlace(ctx: OperationContext, state: StateV4): Promise<ResourceChange[]> {
  const drift: ResourceChange[] = [];
  // Data sources are read from their configuration, not refreshed from state (readDataSources, plan).
  const items = listInstances(state).filter((it) => it.resource.mode !== "data");
  const g = new Graph();
  for (const it of items) g.add(it.address);
  const byAddr = new Map(items.map((it) => [it.address, it]));
  const errors: string[] = [];
  const result = await walk(
    g,
    async (addr) => {
      const { resource, instance } = byAddr.get(addr)!;
      const p = ctx.providers.forType(resource.type);
      if (!p) throw new EngineError(`${addr}: the builtin engine has no provider for "${resource.type}", so it cannot be refreshed`);
      const id = idOf(ctx, resource.type, instance.attributes) ?? { key: "id", value: "" };
      ctx.ui.refreshStart(addr, id);
      const { state: now } = await p.provider.read({ address: addr, type: resource.type, state: instance.attributes });
      if (now === null) {
        drift.push(driftChange(ctx, addr, resource.type, resource.name, resource.provider, instance.attributes, null, instance.index_key));
        setInstance(state, addr, resource.provider, null);
        ctx.ui.drift(addr, "delete");
      } else if (!deepEqual(now, instance.attributes)) {
        drift.push(driftChange(ctx, addr, resource.type, resource.name, resource.provider, instance.attributes, now, instance.index_key));
        setInstance(state, addr, resource.provider, { ...instance, attributes: now });
        ctx.ui.drift(addr, "update");
      }
      ctx.ui.refreshComplete(addr, id);
    },
    { parallelism: ctx.parallelism },
  );
  for (const [addr, err] of result.failed) errors.push(`${addr}: ${(err as Error).message.replace(`${addr}: `, "")}`);
  if (errors.length) throw new EngineError(`Refresh failed:\n${errors.join("\n")}`);
  drift.sort((a, b) => a.address.localeCompare(b.address));
  return drift;
}

function driftChange(ctx: OperationContext, address: string, type: string, name: string, provider: string, before: Attrs, after: Attrs | null, index?: InstanceKey): ResourceChange {
  const schema = ctx.providers.forType(type)?.resource;
  const mask = schema ? sensitiveMask(schema) : {};
  const moduleAddress = parseInstanceAddress(address).module;
  return {
    address,
    ...(moduleAddress ? { module_address: moduleAddress } : {}),
    mode: "managed",
    type,
    name,
    ...(index !== undefined ? { index } : {}),
    provider_name: provider.replace(/^provider\["(.*)"\]$/, "$1"),
    action: after === null ? "delete" : "update",
    change: {
      actions: [after === null ? "delete" : "update"],
      before,
      after,
      after_unknown: {},
      before_sensitive: mask,
      after_sensitive: after === null ? false : mask,
    },
    depends_on: [],
  };
}

/** Outputs as the state should record them, evaluated against the state's resources. Unknown or failing outputs keep their old value. */
export function evaluateOutputs(ctx: OperationContext, state: StateV4): Record<string, StateOutput> {
  const scope = makeScope(ctx, stateValues(state));
  const out: Record<string, StateOutput> = {};
  for (const o of [...ctx.mod.outputs.values()].sort((a, b) => a.name.localeCompare(b.name))) {
    try {
      const value = evaluate(o.expr, scope);
      if (containsUnknown(value)) continue;
      out[o.name] = { value, type: ctyType(value), ...(o.sensitive ? { sensitive: true } : {}) };
    } catch {
      if (state.outputs[o.name]) out[o.name] = state.outputs[o.name]!;
    }
  }
  return out;
}

/** refresh: reads real objects, reports drift, returns the new state (serial bumped only on change). */
export async function refresh(opts: EngineOptions): Promise<RefreshResult> {
  const ui = new Ui(opts.emit);
  ui.version();
  try {
    const ctx = await loadAndPrepare(opts, ui);
    if (!opts.state) {
      ui.log("No state yet: nothing to refresh.");
      return { state: emptyState(), drift: [], changed: false };
    }
    const next = cloneState(opts.state);
    const drift = await refreshInPlace(ctx, next);
    await readDataSources(ctx, next);
    next.outputs = evaluateOutputs(ctx, next);
    const changed = !sameContent(next, opts.state);
    if (changed) next.serial = opts.state.serial + 1;
    ui.summary({ add: 0, change: 0, import: 0, remove: 0, forget: 0 }, "apply");
    ui.outputs(next.outputs);
    return { state: next, drift, changed };
  } catch (err) {
    throw reportFailure(ui, err);
  }
}

