// Data sources: read with their evaluated arguments, during refresh, plan or (when the plan could not) apply.
import { Graph, walk } from "../graph/graph";
import { providerAddress } from "../providers/provider";
import { listInstances, setInstance } from "../state/state";
import type { StateV4 } from "../types";
import { containsUnknown, type Attrs } from "../values";
import { idOf, sensitivePaths, stateValues, type OperationContext } from "./context";
import { evaluateResourceConfig, makeScope, moduleInstancesAt, resourceInstances } from "./expand";

/** One data source read, with OpenTofu's "Reading..." / "Read complete" lines. */
export async function readData(ctx: OperationContext, address: string, type: string, config: Attrs): Promise<Attrs> {
  const p = ctx.providers.forData(type)!;
  const started = Date.now();
  ctx.ui.applyStart(address, "read");
  try {
    const { state } = await p.provider.readData!({ address, type, config });
    ctx.ui.applyComplete(address, "read", Math.round((Date.now() - started) / 1000), idOf(ctx, type, state, "data"));
    return state;
  } catch (err) {
    ctx.ui.applyErrored(address, "read", Math.round((Date.now() - started) / 1000));
    throw err;
  }
}


/**
 * Reads every data source again, in dependency order, with arguments evaluated against `state`;
 * one whose arguments are not known from the state keeps its old value. Data sources no longer
 * in the configuration leave the state.
 */
export async function readDataSources(ctx: OperationContext, state: StateV4): Promise<void> {
  const values = stateValues(state);
  const g = new Graph();
  const data = [...ctx.resources.entries()].filter(([, e]) => e.r.mode === "data");
  for (const [addr] of data) {
    g.add(addr);
    for (const d of ctx.resourceDeps.get(addr)!) if (ctx.resources.get(d)!.r.mode === "data") g.connect(addr, d);
  }
  const configured = new Set<string>();
  const result = await walk(
    g,
    async (addr) => {
      const entry = ctx.resources.get(addr)!;
      const p = ctx.providers.forData(entry.r.type)!;
      for (const mi of moduleInstancesAt(ctx, entry.path, values)) {
        for (const inst of resourceInstances(ctx, mi, entry.r, values)) {
          configured.add(inst.address);
          const config = evaluateResourceConfig(ctx, entry.r, p.resource, makeScope(ctx, values, mi, inst.rep));
          if (containsUnknown(config)) continue;
          const { state: read } = await p.provider.readData!({ address: inst.address, type: entry.r.type, config });
          setInstance(state, inst.address, providerAddress(p.schema), { schema_version: p.resource.version, attributes: read, sensitive_attributes: sensitivePaths(p.resource), dependencies: [] });
        }
      }
    },
    { parallelism: ctx.parallelism },
  );
  if (result.failed.size) throw [...result.failed.values()][0];
  for (const it of listInstances(state)) if (it.resource.mode === "data" && !configured.has(it.address)) setInstance(state, it.address, it.resource.provider, null);
}

