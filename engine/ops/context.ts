import type { Expr, SourceRange } from "../config/ast";
import { evaluate, evaluateMarked, references, type EvalScope } from "../config/evaluate";
import { loadModule, type Module, type ResourceConfig } from "../config/module";
import { variableValue } from "../config/variables";
import { ConfigError, EngineError } from "../errors";
import { Graph } from "../graph/graph";
import type { ResourceSchema } from "../providers/provider";
import { createProviders, type ProviderSet } from "../providers/registry";
import type { Diagnostic, EngineOptions, ProviderConfig, SensitivePath, StateV4 } from "../types";
import { Ui } from "../ui-messages";
import { isObject, isUnknown, typeName, UNKNOWN, type Attrs, type Value } from "../values";
import { listInstances } from "../state/state";

/** Everything an operation needs once the module is read and checked. */
export interface OperationContext {
  mod: Module;
  variables: Record<string, Value>;
  providers: ProviderSet;
  graph: Graph;
  /** For each resource, the resources it needs (directly or through locals), for ordering and state dependencies. */
  resourceDeps: Map<string, string[]>;
  ui: Ui;
  parallelism: number;
  warnings: Diagnostic[];
}

export async function prepare(
  mod: Module,
  opts: { variables?: Record<string, Value>; providerConfig?: ProviderConfig; parallelism?: number; emit?: EngineOptions["emit"] },
  ui: Ui,
): Promise<OperationContext> {
  const providers = await createProviders(opts.providerConfig);
  const warnings: Diagnostic[] = [];
  const variables = checkVariables(mod, opts.variables ?? {}, warnings);
  checkResources(mod, providers);
  const graph = buildGraph(mod);
  graph.assertAcyclic();
  checkSensitiveOutputs(mod, providers);
  const resourceDeps = new Map<string, string[]>();
  for (const addr of mod.resources.keys()) {
    resourceDeps.set(addr, [...graph.ancestors(addr)].filter((n) => mod.resources.has(n)).sort());
  }
  for (const w of warnings) ui.diagnostic(w);
  return { mod, variables, providers, graph, resourceDeps, ui, parallelism: Math.max(1, opts.parallelism ?? 10), warnings };
}

export async function loadAndPrepare(opts: EngineOptions, ui: Ui): Promise<OperationContext> {
  return prepare(await loadModule(opts.moduleDir), opts, ui);
}

function checkVariables(mod: Module, given: Record<string, Value>, warnings: Diagnostic[]): Record<string, Value> {
  const out: Record<string, Value> = {};
  const missing: string[] = [];
  for (const v of mod.variables.values()) {
    if (given[v.name] === undefined && !v.hasDefault) missing.push(v.name);
    else out[v.name] = variableValue(v, given[v.name], mod.files);
  }
  if (missing.length) {
    const v = mod.variables.get(missing[0]!)!;
    const names = missing.map((m) => `"${m}"`).join(", ");
    throw new ConfigError(
      `No value for required variable: the module's input variable${missing.length > 1 ? "s" : ""} ${names} ${missing.length > 1 ? "are" : "is"} not set and ${missing.length > 1 ? "have" : "has"} no default`,
      v.range,
      `Nothing ran. Set ${missing.map((m) => `spec.${m}`).join(", ")} on the component (or give the variable a default in the module), then run the job again.`,
    );
  }
  for (const name of Object.keys(given)) {
    if (!mod.variables.has(name)) {
      warnings.push({
        severity: "warning",
        summary: "Value for undeclared variable",
        detail: `The component sets "${name}", but the module declares no variable "${name}"; the value is ignored. Remove it from the spec or declare it in the module.`,
      });
    }
  }
  return out;
}

function checkResources(mod: Module, providers: ProviderSet): void {
  for (const r of mod.resources.values()) {
    const p = providers.forType(r.type);
    if (!p) {
      throw new ConfigError(
        `Unsupported resource type: the builtin engine has no provider for "${r.type}"`,
        r.range,
        `Available types: ${providers.resourceTypes().join(", ")}. Use one of them, or run this module with the tofu engine.`,
      );
    }
    const schema = p.resource.attributes;
    for (const a of r.attributes) {
      const s = schema[a.name];
      if (!s) throw new ConfigError(`Unsupported argument: an argument named "${a.name}" is not expected in ${r.type}`, a.range);
      if (!s.required && !s.optional) throw new ConfigError(`Invalid argument: "${a.name}" is computed by the provider and cannot be set in ${r.address}`, a.range);
    }
    for (const [name, s] of Object.entries(schema)) {
      if (s.required && !r.attributes.some((a) => a.name === name)) {
        throw new ConfigError(`Missing required argument: the argument "${name}" is required in ${r.address}, but no definition was found`, r.range);
      }
    }
  }
}

/** Like OpenTofu, an output that shows a sensitive value must itself be marked sensitive. */
function checkSensitiveOutputs(mod: Module, providers: ProviderSet): void {
  for (const o of mod.outputs.values()) {
    if (o.sensitive) continue;
    for (const ref of sensitiveReferences(o.expr, mod, providers)) {
      throw new ConfigError(
        `Output refers to sensitive values: output "${o.name}" shows ${ref}, which is sensitive`,
        o.range,
        `Add sensitive = true to output "${o.name}" so its value is redacted in logs and the console.`,
      );
    }
  }
}

function sensitiveReferences(expr: Expr, mod: Module, providers: ProviderSet): string[] {
  const found: string[] = [];
  const visit = (e: Expr): void => {
    if (e.kind === "scope") {
      const [first, ...rest] = e.steps;
      if (first?.kind !== "attr") return;
      if (e.root === "var" && mod.variables.get(first.name)?.sensitive) found.push(`var.${first.name}`);
      const r = mod.resources.get(`${e.root}.${first.name}`);
      if (r) {
        const schema = providers.forType(r.type)?.resource;
        const attrStep = rest.find((s) => s.kind === "attr");
        if (!attrStep) {
          if (schema && Object.values(schema.attributes).some((a) => a.sensitive)) found.push(r.address);
        } else if (attrStep.kind === "attr" && schema?.attributes[attrStep.name]?.sensitive) found.push(`${r.address}.${attrStep.name}`);
      }
      return;
    }
    if (e.kind === "call" && e.name === "nonsensitive") return; // the module says the result reveals nothing
    for (const child of childExprs(e)) visit(child);
  };
  visit(expr);
  return found;
}

function childExprs(e: Expr): Expr[] {
  switch (e.kind) {
    case "template":
      return e.parts.filter((p): p is Expr => typeof p !== "string");
    case "tuple":
      return e.items;
    case "object":
      return e.items.flatMap((i) => [i.key, i.value]);
    case "postfix":
      return [e.target];
    case "call":
      return e.args;
    case "unary":
      return [e.operand];
    case "binary":
      return [e.left, e.right];
    case "conditional":
      return [e.cond, e.then, e.else];
    case "for":
      return [e.collection, e.key, e.value, e.cond].filter((x): x is Expr => x !== undefined);
    case "templateJoin":
      return [e.items];
    default:
      return [];
  }
}

function buildGraph(mod: Module): Graph {
  const g = new Graph();
  const link = (node: string, refs: { addr: string; range: SourceRange }[]) => {
    g.add(node);
    for (const ref of refs) {
      const [root, name] = ref.addr.split(".") as [string, string];
      if (root === "var" && !mod.variables.has(name)) {
        throw new ConfigError(`Reference to undeclared input variable: no variable named "${name}" is declared`, ref.range, `Declare it with a variable "${name}" block, or fix the reference.`);
      }
      if (root === "local" && !mod.locals.has(name)) {
        throw new ConfigError(`Reference to undeclared local value: no local value named "${name}" is defined`, ref.range);
      }
      if (root !== "var" && root !== "local" && !mod.resources.has(ref.addr)) {
        throw new ConfigError(`Reference to undeclared resource: a managed resource "${root}" "${name}" has not been declared in the module`, ref.range);
      }
      g.connect(node, ref.addr);
    }
  };
  for (const v of mod.variables.keys()) g.add(`var.${v}`);
  for (const l of mod.locals.values()) link(`local.${l.name}`, references(l.expr));
  for (const r of mod.resources.values()) {
    const refs = r.attributes.flatMap((a) => references(a.expr));
    if (r.count) refs.push(...references(r.count));
    refs.push(...r.dependsOn);
    link(r.address, refs);
  }
  for (const o of mod.outputs.values()) link(`output.${o.name}`, references(o.expr));
  return g;
}

/** Resolves var/local/resource references; `resourceValue` supplies instance attributes by address. */
export function makeScope(ctx: OperationContext, resourceValue: (addr: string) => Attrs | undefined, countIndex?: number): EvalScope {
  // A local is evaluated once per scope, with its sensitivity marks.
  const locals = new Map<string, { value: Value; marks: Value }>();
  const localMarked = (name: string) => {
    if (!locals.has(name)) locals.set(name, evaluateMarked(ctx.mod.locals.get(name)!.expr, { ...scope, countIndex: undefined }));
    return locals.get(name)!;
  };
  const scope: EvalScope = {
    variable: (name) => ctx.variables[name] ?? null,
    local: (name) => localMarked(name).value,
    marks: (addr) => referenceMarks(ctx, addr, localMarked, scope),
    files: ctx.mod.files,
    resource: (type, name) => {
      const r = ctx.mod.resources.get(`${type}.${name}`)!;
      if (r.count) {
        const n = evaluateCount(ctx, r, scope);
        const items: Value[] = [];
        for (let i = 0; i < n; i++) items.push(resourceValue(`${r.address}[${i}]`) ?? (UNKNOWN as unknown as Value));
        return items;
      }
      return resourceValue(r.address) ?? (UNKNOWN as unknown as Value);
    },
    countIndex,
  };
  return scope;
}

/** Which parts of a referenced object are sensitive: a sensitive variable, a local derived from one, a resource's sensitive attributes. */
function referenceMarks(ctx: OperationContext, addr: string, local: (name: string) => { marks: Value }, scope: EvalScope): Value {
  const [root, name] = addr.split(".") as [string, string];
  if (root === "var") return ctx.mod.variables.get(name)?.sensitive ?? false;
  if (root === "local") return ctx.mod.locals.has(name) ? local(name).marks : false;
  const r = ctx.mod.resources.get(addr);
  const schema = r && ctx.providers.forType(r.type)?.resource;
  if (!r || !schema) return false;
  const mask = sensitiveMask(schema);
  return r.count ? Array.from({ length: Math.max(0, evaluateCount(ctx, r, scope)) }, () => mask) : mask;
}

/** The resource arguments whose values derive from sensitive values, as `{ name: marks }` (empty when none). */
export function configMarks(r: ResourceConfig, scope: EvalScope): Attrs {
  const out: Attrs = {};
  for (const a of r.attributes) {
    const { marks } = evaluateMarked(a.expr, scope);
    if (marks !== false) out[a.name] = marks;
  }
  return out;
}

export function evaluateCount(ctx: OperationContext, r: ResourceConfig, scope: EvalScope): number {
  if (!r.count) return -1;
  const v = evaluate(r.count, { ...scope, countIndex: undefined });
  if (isUnknown(v)) {
    throw new ConfigError(
      "Invalid count argument: the count value depends on values that cannot be determined until apply",
      r.count.range,
      "Make count depend only on variables and locals known at plan time.",
    );
  }
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0) throw new ConfigError(`Invalid count argument: count must be a whole number, got ${JSON.stringify(v)}`, r.count.range);
  return v;
}

/** Instance addresses a resource block expands to. */
export function instanceAddresses(ctx: OperationContext, r: ResourceConfig, scope: EvalScope): { address: string; index?: number }[] {
  const n = evaluateCount(ctx, r, scope);
  if (n < 0) return [{ address: r.address }];
  return Array.from({ length: n }, (_, i) => ({ address: `${r.address}[${i}]`, index: i }));
}

/** Evaluates a resource instance's arguments and fills schema defaults, converting to attribute types. */
export function evaluateResourceConfig(ctx: OperationContext, r: ResourceConfig, schema: ResourceSchema, scope: EvalScope): Attrs {
  const out: Attrs = {};
  for (const [name, s] of Object.entries(schema.attributes)) {
    if (s.required || s.optional) out[name] = s.default ?? null;
  }
  for (const a of r.attributes) {
    let v = evaluate(a.expr, scope);
    const s = schema.attributes[a.name]!;
    if (v === null) v = s.default ?? null;
    else v = coerce(v, s.type, `${r.address}.${a.name}`, a.range);
    out[a.name] = v;
  }
  return out;
}

function coerce(v: Value, type: string, where: string, range: SourceRange): Value {
  if (isUnknown(v) || type === "any") return v;
  const bad = (): never => {
    throw new ConfigError(`Incorrect attribute value type: ${where} must be a ${type}, not ${typeName(v)}`, range);
  };
  switch (type) {
    case "string":
      if (typeof v === "string") return v;
      if (typeof v === "number" || typeof v === "boolean") return String(v);
      return bad();
    case "number":
      if (typeof v === "number") return v;
      if (typeof v === "string" && v.trim() !== "" && !Number.isNaN(Number(v))) return Number(v);
      return bad();
    case "bool":
      if (typeof v === "boolean") return v;
      if (v === "true" || v === "false") return v === "true";
      return bad();
    case "map":
      if (!isObject(v)) return bad();
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, isUnknown(x) ? x : typeof x === "object" && x !== null ? x : String(x)]));
    case "list":
      return Array.isArray(v) ? v : bad();
  }
  return v;
}

export function sensitivePaths(schema: ResourceSchema): SensitivePath[] {
  return Object.entries(schema.attributes)
    .filter(([, a]) => a.sensitive)
    .map(([name]) => [{ type: "get_attr" as const, value: name }]);
}

export function sensitiveMask(schema: ResourceSchema): Attrs {
  return Object.fromEntries(Object.entries(schema.attributes).filter(([, a]) => a.sensitive).map(([n]) => [n, true]));
}

/** Instance attributes from a state, keyed by address, for expression evaluation. */
export function stateValues(state: StateV4): (addr: string) => Attrs | undefined {
  return (addr) => listInstances(state).find((x) => x.address === addr)?.instance.attributes;
}

/** Turns any thrown value into an EngineError and emits its diagnostics. */
export function reportFailure(ui: Ui, err: unknown): EngineError {
  const e = err instanceof EngineError ? err : new EngineError(err instanceof Error ? err.message : String(err));
  for (const d of e.diagnostics) ui.diagnostic(d);
  return e;
}
