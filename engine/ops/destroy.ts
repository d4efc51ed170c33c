import type { ApplyOptions, ApplyResult, EngineOptions } from "../types";
import { apply } from "./apply";
import { plan } from "./plan";

/** destroy: plans the removal of everything in state, then applies it in reverse dependency order. */
export async function destroy(opts: EngineOptions & Pick<ApplyOptions, "persistState" | "signal">): Promise<ApplyResult> {
  const { plan: saved } = await plan(opts, { destroy: true });
  return apply(opts, saved);
}
