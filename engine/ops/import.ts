import { EngineError } from "../errors";
import { providerAddress } from "../providers/provider";
import { cloneState, emptyState, findInstance, setInstance } from "../state/state";
import { configAddress, parseAddress } from "../state/address";
import type { EngineOptions, StateV4 } from "../types";
import { Ui } from "../ui-messages";
import { idOf, loadAndPrepare, reportFailure, sensitivePaths, stateValues } from "./context";
import { moduleInstancesAt, resourceInstances } from "./expand";
import { evaluateOutputs } from "./refresh";

/**
 * importResource: reads an existing object into state at `address` without changing it.
 * The address must be declared in the module; returns the new state (serial bumped).
 */
export async function importResource(opts: EngineOptions, address: string, id: string): Promise<{ state: StateV4 }> {
  const ui = new Ui(opts.emit);
  ui.version();
  try {
    const ctx = await loadAndPrepare(opts, ui);
    let parsed;
    try {
      parsed = parseAddress(address);
    } catch (e) {
      throw new EngineError((e as Error).message);
    }
    const { type, name } = parsed;
    const entry = parsed.mode === "managed" ? ctx.resources.get(configAddress(parsed)) : undefined;
    if (!entry) {
      throw new EngineError(
        `Import to non-existent resource: ${address} is not declared in the module. Add a resource "${type}" "${name}" block first, then run the import again.`,
      );
    }
    const r = entry.r;
    const values = opts.state ? stateValues(opts.state) : () => undefined;
    const valid = moduleInstancesAt(ctx, entry.path, values).flatMap((mi) => resourceInstances(ctx, mi, r, values).map((i) => i.address));
    if (!valid.includes(address)) throw new EngineError(`Invalid import address: ${address} does not match the module; use ${valid.join(" or ") || "(none: count is 0)"}`);
    const state = opts.state ? cloneState(opts.state) : emptyState();
    if (findInstance(state, address)) {
      throw new EngineError(`Resource already managed: ${address} is already in the state. Remove it from the state first if you mean to import a different object.`);
    }
    const p = ctx.providers.forType(type)!;
    const started = Date.now();
    ui.applyStart(address, "import", { key: "id", value: id });
    const { state: imported } = await p.provider.importState({ address, type, id });
    const { state: read } = await p.provider.read({ address, type, state: imported });
    if (!read) throw new EngineError(`${address}: cannot import: the object with id ${id} does not exist`);
    setInstance(state, address, providerAddress(p.schema), {
      schema_version: p.resource.version,
      attributes: read,
      sensitive_attributes: sensitivePaths(p.resource),
      dependencies: ctx.resourceDeps.get(configAddress(parsed)) ?? [],
    });
    state.outputs = evaluateOutputs(ctx, state);
    state.serial = opts.state ? opts.state.serial + 1 : 1;
    ui.applyComplete(address, "import", Math.round((Date.now() - started) / 1000), idOf(ctx, type, read));
    ui.summary({ add: 0, change: 0, import: 1, remove: 0, forget: 0 }, "apply");
    return { state };
  } catch (err) {
    throw reportFailure(ui, err);
  }
}
