// The lifecycle meta-argument: ignore_changes, replace_triggered_by and prevent_destroy, as OpenTofu applies them.
import type { EvalScope } from "../config/evaluate";
import { evaluate } from "../config/evaluate";
import type { ResourceConfig } from "../config/module";
import { ConfigError } from "../errors";
import type { ResourceSchema } from "../providers/provider";
import { configAddressOf, formatKey, formatModule, type InstanceKey } from "../state/address";
import type { ChangeAction } from "../types";
import { deepEqual, isUnknown, type Attrs } from "../values";
import type { OperationContext } from "./context";
import { evaluateResourceConfig, type ModuleInstance } from "./expand";

/** What replace_triggered_by looks at in a planned change. */
export interface PlannedChange {
  address: string;
  action: ChangeAction;
  before: Attrs | null;
  after: Attrs | null;
}

/** The configuration an instance is planned with: evaluated arguments, with lifecycle.ignore_changes keeping prior values. */
export function configWithIgnores(ctx: OperationContext, r: ResourceConfig, schema: ResourceSchema, scope: EvalScope, prior: Attrs | null): Attrs {
  const config = evaluateResourceConfig(ctx, r, schema, scope);
  if (!prior) return config;
  const ignored = r.lifecycle.ignoreChanges;
  const names = ignored === "all" ? Object.keys(config) : ignored;
  for (const name of names) if (name in config && name in prior) config[name] = prior[name]!;
  return config;
}


/** lifecycle.prevent_destroy: a plan that would destroy the object is refused, in OpenTofu's words. */
export function refuseProtectedDestroy(ctx: OperationContext, address: string): void {
  const entry = ctx.resources.get(configAddressOf(address));
  if (!entry?.r.lifecycle.preventDestroy) return;
  throw new ConfigError(
    "Instance cannot be destroyed",
    entry.r.range,
    `Resource ${address} has lifecycle.prevent_destroy set, but the plan calls for this resource to be destroyed. To avoid this error and continue with the plan, either disable lifecycle.prevent_destroy or reduce the scope of the plan using the -target option.`,
  );
}


/**
 * lifecycle.replace_triggered_by: a reference to a resource (or one of its instances) triggers when
 * that instance is planned to change; a reference to an attribute, when that attribute's value changes.
 */
export function triggered(r: ResourceConfig, scope: EvalScope, mi: ModuleInstance, changeOf: Map<string, PlannedChange>): boolean {
  for (const expr of r.lifecycle.replaceTriggeredBy) {
    if (expr.kind !== "scope") continue;
    const [first, ...rest] = expr.steps;
    if (first?.kind !== "attr") continue;
    const target = mi.config.resources.get(`${expr.root}.${first.name}`);
    if (!target) throw new ConfigError(`Invalid replace_triggered_by expression: ${expr.root}.${first.name} is not a managed resource of this module`, expr.range);
    let key: InstanceKey | undefined;
    let steps = rest;
    if (steps[0]?.kind === "index") {
      const k = evaluate(steps[0].key, scope);
      if (typeof k !== "number" && typeof k !== "string") throw new ConfigError("Invalid replace_triggered_by expression: an instance key must be a number or string known at plan time", expr.range);
      key = k;
      steps = steps.slice(1);
    }
    const prefix = formatModule(mi.steps);
    const base = `${prefix ? `${prefix}.` : ""}${target.type}.${target.name}`;
    const candidates = [...changeOf.values()].filter((c) => (key === undefined ? c.address === base || c.address.startsWith(`${base}[`) : c.address === `${base}${formatKey(key)}`));
    const attrStep = steps[0];
    for (const c of candidates) {
      if (attrStep?.kind === "attr") {
        const before = c.before?.[attrStep.name] ?? null;
        const after = c.after?.[attrStep.name] ?? null;
        if (c.action !== "noop" && c.action !== "move" && c.action !== "import" && (isUnknown(after) || !deepEqual(before, after))) return true;
      } else if (["create", "update", "replace"].includes(c.action)) return true;
    }
  }
  return false;
}

