import { loadModule } from "../config/module";
import { EngineError } from "../errors";
import { UNKNOWN, type Value } from "../values";
import type { EngineOptions, ValidateResult } from "../types";
import { Ui } from "../ui-messages";
import { prepare } from "./context";

/**
 * validate: parses the module, checks resource arguments against provider schemas and the
 * graph for cycles. Variables are not required (as `tofu validate`); nothing is evaluated.
 */
export async function validate(moduleDir: string, opts: Pick<EngineOptions, "emit" | "providerConfig"> = {}): Promise<ValidateResult> {
  const ui = new Ui(opts.emit);
  try {
    const mod = await loadModule(moduleDir);
    // Every variable is unknown here, as `tofu validate` has it: a missing value is not reported, and a
    // validation block (which needs the value) is left to the plan.
    const variables = Object.fromEntries([...mod.variables.keys()].map((k) => [k, UNKNOWN as unknown as Value]));
    await prepare(mod, { variables, providerConfig: opts.providerConfig }, ui);
    return { valid: true, diagnostics: [] };
  } catch (err) {
    const e = err instanceof EngineError ? err : new EngineError(err instanceof Error ? err.message : String(err));
    for (const d of e.diagnostics) ui.diagnostic(d);
    return { valid: false, diagnostics: e.diagnostics };
  }
}
