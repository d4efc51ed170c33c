import type { Attribute, Block, Expr, SourceRange } from "../config/ast";
import { evaluate, references, type EvalScope } from "../config/evaluate";
import { convertToType, loadModule, type Module, type ModuleCallConfig, type ResourceConfig } from "../config/module";
import { ConfigError, EngineError } from "../errors";
import { Graph } from "../graph/graph";
import type { AttributeSchema, BlockSchema, ResourceSchema } from "../providers/provider";
import { configAddress, formatAddress, formatModule, parseAddress, type InstanceKey, type ModuleStep } from "../state/address";
import { createProviders, type ProviderSet } from "../providers/registry";
import type { Diagnostic, EngineOptions, ProviderConfig, SensitivePath, StateV4 } from "../types";
import { Ui } from "../ui-messages";
import { containsUnknown, isObject, isUnknown, typeName, UNKNOWN, type Attrs, type Value } from "../values";
import { listInstances } from "../state/state";

/** A resource or data block anywhere in the module tree. */
export interface ResourceEntry {
  r: ResourceConfig;
  /** Names of the module calls leading to it (empty in the root module). */
  path: string[];
  /** Its module's configuration address prefix: "" or "module.site." */
  prefix: string;
}

/** Everything an operation needs once the module is read and checked. */
export interface OperationContext {
  mod: Module;
  variables: Record<string, Value>;
  providers: ProviderSet;
  graph: Graph;
  /** Every resource and data block of the tree by configuration address (`module.site.local_file.page`). */
  resources: Map<string, ResourceEntry>;
  /** For each resource (by configuration address), the resources it needs (directly or through locals, variables, modules), for ordering and state dependencies. */
  resourceDeps: Map<string, string[]>;
  ui: Ui;
  parallelism: number;
  warnings: Diagnostic[];
}

/** A module instance: the root, or one expansion of a module call (`module.site["a"]`). */
export interface ModuleInstance {
  address: string;
  steps: ModuleStep[];
  config: Module;
  parent?: ModuleInstance;
  call?: ModuleCallConfig;
  /** count.index / each of the call instance, seen by the call's arguments. */
  rep: Repetition;
}

export interface Repetition {
  countIndex?: number;
  each?: { key: Value; value: Value };
}

/** Instance attributes by instance address; undefined: not known (yet). */
export type Values = (addr: string) => Attrs | undefined;

export async function prepare(
  mod: Module,
  opts: { variables?: Record<string, Value>; providerConfig?: ProviderConfig; parallelism?: number; emit?: EngineOptions["emit"] },
  ui: Ui,
): Promise<OperationContext> {
  const providers = await createProviders(opts.providerConfig);
  const warnings: Diagnostic[] = [];
  const variables = checkVariables(mod, opts.variables ?? {}, warnings);
  const resources = new Map<string, ResourceEntry>();
  collectResources(mod, [], "", resources);
  for (const { r } of resources.values()) checkResource(r, providers);
  checkModuleCalls(mod);
  const graph = buildGraph(mod, resources);
  graph.assertAcyclic();
  checkSensitiveOutputs(mod, providers);
  const resourceDeps = new Map<string, string[]>();
  for (const addr of resources.keys()) {
    resourceDeps.set(addr, [...graph.ancestors(addr)].filter((n) => resources.has(n)).sort());
  }
  for (const w of warnings) ui.diagnostic(w);
  return { mod, variables, providers, graph, resources, resourceDeps, ui, parallelism: Math.max(1, opts.parallelism ?? 10), warnings };
}

function collectResources(mod: Module, path: string[], prefix: string, out: Map<string, ResourceEntry>): void {
  for (const r of mod.resources.values()) out.set(prefix + r.address, { r, path, prefix });
  for (const call of mod.modules.values()) collectResources(call.module, [...path, call.name], `${prefix}module.${call.name}.`, out);
}

/** A call's arguments must be the child's variables, and every variable without a default must be given. */
function checkModuleCalls(mod: Module): void {
  for (const call of mod.modules.values()) {
    const child = call.module;
    for (const a of call.inputs) {
      if (!child.variables.has(a.name)) {
        throw new ConfigError(
          `Unsupported argument: an argument named "${a.name}" is not expected in module "${call.name}"`,
          a.range,
          `The module at ${call.source} declares no variable "${a.name}"${child.variables.size ? `; its variables are ${[...child.variables.keys()].join(", ")}` : ""}.`,
        );
      }
    }
    for (const v of child.variables.values()) {
      if (!v.hasDefault && !call.inputs.some((a) => a.name === v.name)) {
        throw new ConfigError(`Missing required argument: module "${call.name}" needs the argument "${v.name}", which has no default`, call.range, `Set ${v.name} = … in the module block.`);
      }
    }
    checkModuleCalls(child);
  }
}

export async function loadAndPrepare(opts: EngineOptions, ui: Ui): Promise<OperationContext> {
  return prepare(await loadModule(opts.moduleDir), opts, ui);
}

function checkVariables(mod: Module, given: Record<string, Value>, warnings: Diagnostic[]): Record<string, Value> {
  const out: Record<string, Value> = {};
  const missing: string[] = [];
  for (const v of mod.variables.values()) {
    if (given[v.name] !== undefined) {
      try {
        out[v.name] = convertToType(given[v.name]!, v.type, `var.${v.name}`);
      } catch (e) {
        throw new ConfigError((e as Error).message, v.range, `Set spec.${v.name} on the component to a value of the declared type, then run the job again.`);
      }
    } else if (v.hasDefault) out[v.name] = v.default ?? null;
    else missing.push(v.name);
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

function checkResource(r: ResourceConfig, providers: ProviderSet): void {
  const data = r.mode === "data";
  const p = data ? providers.forData(r.type) : providers.forType(r.type);
  if (!p) {
    const what = data ? "data source" : "resource type";
    const list = data ? providers.dataSourceTypes() : providers.resourceTypes();
    throw new ConfigError(
      `Unsupported ${what}: the builtin engine has no provider for ${data ? "data source " : ""}"${r.type}"`,
      r.range,
      `Available ${data ? "data sources" : "types"}: ${list.join(", ")}. Use one of them, or run this module with the tofu engine.`,
    );
  }
  const where = data ? `data.${r.type}` : r.type;
  const ignored = r.lifecycle.ignoreChanges;
  for (const name of ignored === "all" ? [] : ignored) {
    if (!(name in p.resource.attributes) && !(name in (p.resource.blocks ?? {}))) {
      throw new ConfigError(`Unsupported attribute: ignore_changes names "${name}", which ${r.type} does not have`, r.range, `Its attributes: ${Object.keys(p.resource.attributes).join(", ")}.`);
    }
  }
  checkBody(r.attributes, r.blocks, p.resource.attributes, p.resource.blocks ?? {}, where, r.address, r.range);
}

function checkBody(
  attributes: Attribute[],
  blocks: Block[],
  schema: Record<string, AttributeSchema>,
  blockSchemas: Record<string, BlockSchema>,
  where: string,
  address: string,
  range: SourceRange,
): void {
  for (const a of attributes) {
    const s = schema[a.name];
    if (!s) throw new ConfigError(`Unsupported argument: an argument named "${a.name}" is not expected in ${where}`, a.range);
    if (!s.required && !s.optional) throw new ConfigError(`Invalid argument: "${a.name}" is computed by the provider and cannot be set in ${address}`, a.range);
  }
  for (const [name, s] of Object.entries(schema)) {
    if (s.required && !attributes.some((a) => a.name === name)) {
      throw new ConfigError(`Missing required argument: the argument "${name}" is required in ${address}, but no definition was found`, range);
    }
  }
  for (const b of blocks) {
    const dynamic = b.type === "dynamic";
    const name = dynamic ? b.labels[0] : b.type;
    if (dynamic && b.labels.length !== 1) throw new ConfigError(`Wrong number of labels: a dynamic block needs 1 label, the block type it generates, like dynamic "source"`, b.range);
    const bs = name !== undefined ? blockSchemas[name] : undefined;
    if (!bs) {
      const known = Object.keys(blockSchemas);
      throw new ConfigError(
        `Unsupported block type: blocks of type "${name}" are not expected in ${where}`,
        b.range,
        known.length ? `${where} takes blocks of type ${known.join(", ")}.` : `${where} takes no nested blocks; set its arguments instead.`,
      );
    }
    if (dynamic) {
      for (const a of b.body.attributes) {
        if (!["for_each", "iterator", "labels"].includes(a.name)) throw new ConfigError(`Unsupported argument: an argument named "${a.name}" is not expected in a dynamic block`, a.range);
      }
      if (!b.body.attributes.some((a) => a.name === "for_each")) throw new ConfigError(`Missing required argument: a dynamic "${name}" block needs for_each`, b.range);
      const content = b.body.blocks.filter((x) => x.type === "content");
      const other = b.body.blocks.find((x) => x.type !== "content");
      if (other) throw new ConfigError(`Unsupported block type: a dynamic block holds only one content block, not "${other.type}"`, other.range);
      if (content.length !== 1) throw new ConfigError(`Missing content block: a dynamic "${name}" block needs exactly one content { … } block`, b.range);
      checkBody(content[0]!.body.attributes, content[0]!.body.blocks, bs.attributes, {}, `a ${name} block`, address, content[0]!.range);
    } else {
      if (b.labels.length) throw new ConfigError(`Extraneous label for ${name}: a ${name} block takes no labels`, b.range);
      checkBody(b.body.attributes, b.body.blocks, bs.attributes, {}, `a ${name} block`, address, b.range);
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
  for (const call of mod.modules.values()) checkSensitiveOutputs(call.module, providers);
}

function sensitiveReferences(expr: Expr, mod: Module, providers: ProviderSet): string[] {
  const found: string[] = [];
  const visit = (e: Expr): void => {
    if (e.kind === "scope") {
      const [first, ...rest] = e.steps;
      if (first?.kind !== "attr") return;
      if (e.root === "var" && mod.variables.get(first.name)?.sensitive) found.push(`var.${first.name}`);
      if (e.root === "module") {
        const outputs = mod.modules.get(first.name)?.module.outputs;
        const named = rest.find((s) => s.kind === "attr");
        const shown = named?.kind === "attr" ? [outputs?.get(named.name)] : [...(outputs?.values() ?? [])];
        for (const o of shown) if (o?.sensitive) found.push(`module.${first.name}.${o.name}`);
        return;
      }
      const isData = e.root === "data" && rest[0]?.kind === "attr";
      const r = isData ? mod.resources.get(`data.${first.name}.${(rest[0] as { name: string }).name}`) : mod.resources.get(`${e.root}.${first.name}`);
      if (r) {
        const schema = (isData ? providers.forData(r.type) : providers.forType(r.type))?.resource;
        const attrStep = rest.slice(isData ? 1 : 0).find((s) => s.kind === "attr");
        if (!attrStep) {
          if (schema && Object.values(schema.attributes).some((a) => a.sensitive)) found.push(r.address);
        } else if (attrStep.kind === "attr" && schema?.attributes[attrStep.name]?.sensitive) found.push(`${r.address}.${attrStep.name}`);
      }
      return;
    }
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
    default:
      return [];
  }
}

/** References in a block body (nested and dynamic blocks included), leaving out a dynamic block's iterator. */
function blockReferences(blocks: Block[], iterators: string[] = []): { addr: string; range: SourceRange }[] {
  const out: { addr: string; range: SourceRange }[] = [];
  const keep = (refs: { addr: string; range: SourceRange }[], its: string[]) => refs.filter((x) => !its.includes(x.addr.split(".")[0]!));
  for (const b of blocks) {
    if (b.type === "dynamic") {
      const forEach = b.body.attributes.find((a) => a.name === "for_each");
      if (forEach) out.push(...keep(references(forEach.expr), iterators));
      const itAttr = b.body.attributes.find((a) => a.name === "iterator");
      const it = itAttr?.expr.kind === "scope" ? itAttr.expr.root : b.labels[0]!;
      const its = [...iterators, it];
      for (const c of b.body.blocks) {
        out.push(...keep(c.body.attributes.flatMap((a) => references(a.expr)), its));
        out.push(...blockReferences(c.body.blocks, its));
      }
    } else {
      out.push(...keep(b.body.attributes.flatMap((a) => references(a.expr)), iterators));
      out.push(...blockReferences(b.body.blocks, iterators));
    }
  }
  return out;
}

/**
 * The configuration graph over the whole module tree. Nodes are configuration addresses:
 * `var.x`, `local.x`, `local_file.page`, `data.local_file.seed`, `output.url`, a module call
 * `module.site`, and the same inside modules (`module.site.var.x`, `module.site.output.url`…).
 * Everything inside a module waits for its call node, which waits for the call's count,
 * for_each and depends_on.
 */
function buildGraph(root: Module, resources: Map<string, ResourceEntry>): Graph {
  const g = new Graph();
  const moduleDeps: { node: string; prefix: string }[] = [];
  const visit = (mod: Module, prefix: string, callNode: string | null): void => {
    const resolve = (ref: { addr: string; range: SourceRange }): string[] => {
      const parts = ref.addr.split(".");
      const [root, name] = parts as [string, string];
      if (root === "var") {
        if (!mod.variables.has(name)) {
          throw new ConfigError(`Reference to undeclared input variable: no variable named "${name}" is declared`, ref.range, `Declare it with a variable "${name}" block, or fix the reference.`);
        }
        return [`${prefix}var.${name}`];
      }
      if (root === "local") {
        if (!mod.locals.has(name)) throw new ConfigError(`Reference to undeclared local value: no local value named "${name}" is defined`, ref.range);
        return [`${prefix}local.${name}`];
      }
      if (root === "module") {
        const call = mod.modules.get(name);
        if (!call) throw new ConfigError(`Reference to undeclared module: no module call named "${name}" is declared in this module`, ref.range, `Add a module "${name}" block, or fix the reference.`);
        const output = parts[2];
        if (output !== undefined) {
          if (!call.module.outputs.has(output)) {
            throw new ConfigError(`Unsupported attribute: module "${name}" has no output named "${output}"`, ref.range, `Its outputs: ${[...call.module.outputs.keys()].join(", ") || "(none)"}.`);
          }
          return [`${prefix}module.${name}.output.${output}`];
        }
        const all = [...call.module.outputs.keys()].map((o) => `${prefix}module.${name}.output.${o}`);
        return all.length ? all : [`${prefix}module.${name}`];
      }
      if (root === "data") {
        if (!mod.resources.has(ref.addr)) throw new ConfigError(`Reference to undeclared data source: a data "${parts[1]}" "${parts[2]}" block has not been declared in the module`, ref.range);
        return [prefix + ref.addr];
      }
      if (!mod.resources.has(ref.addr)) {
        throw new ConfigError(`Reference to undeclared resource: a managed resource "${root}" "${name}" has not been declared in the module`, ref.range);
      }
      return [prefix + ref.addr];
    };
    const link = (node: string, refs: { addr: string; range: SourceRange }[]) => {
      g.add(node);
      if (callNode) g.connect(node, callNode);
      for (const ref of refs) for (const target of resolve(ref)) g.connect(node, target);
    };
    const dependsOn = (node: string, deps: { addr: string; range: SourceRange }[]) => {
      for (const d of deps) {
        if (d.addr.startsWith("module.")) {
          if (!mod.modules.has(d.addr.slice("module.".length))) throw new ConfigError(`Invalid depends_on: no module call named "${d.addr.slice(7)}" is declared in this module`, d.range);
          moduleDeps.push({ node, prefix: `${prefix}${d.addr}.` });
          g.connect(node, prefix + d.addr);
        } else link(node, [d]);
      }
    };
    if (!callNode) for (const v of mod.variables.keys()) g.add(`var.${v}`);
    for (const l of mod.locals.values()) link(`${prefix}local.${l.name}`, references(l.expr));
    for (const r of mod.resources.values()) {
      const node = prefix + r.address;
      const refs = [...r.attributes.flatMap((a) => references(a.expr)), ...blockReferences(r.blocks)];
      if (r.count) refs.push(...references(r.count));
      if (r.forEach) refs.push(...references(r.forEach));
      for (const t of r.lifecycle.replaceTriggeredBy) refs.push(...references(t));
      link(node, refs);
      dependsOn(node, r.dependsOn);
    }
    for (const o of mod.outputs.values()) link(`${prefix}output.${o.name}`, references(o.expr));
    for (const call of mod.modules.values()) {
      const node = `${prefix}module.${call.name}`;
      const refs = [...(call.count ? references(call.count) : []), ...(call.forEach ? references(call.forEach) : [])];
      link(node, refs);
      dependsOn(node, call.dependsOn);
      for (const v of call.module.variables.keys()) {
        const input = call.inputs.find((a) => a.name === v);
        link(`${node}.var.${v}`, input ? references(input.expr) : []);
        g.connect(`${node}.var.${v}`, node);
      }
      visit(call.module, `${node}.`, node);
    }
  };
  visit(root, "", null);
  // depends_on = [module.x]: wait for every resource inside it.
  for (const { node, prefix } of moduleDeps) {
    for (const addr of resources.keys()) if (addr.startsWith(prefix)) g.connect(node, addr);
  }
  return g;
}

const U = UNKNOWN as unknown as Value;

export function rootInstance(ctx: OperationContext): ModuleInstance {
  return { address: "", steps: [], config: ctx.mod, rep: {} };
}

/** The instances of a module call in `parent`, from its count or for_each. */
export function childInstances(ctx: OperationContext, parent: ModuleInstance, call: ModuleCallConfig, values: Values): ModuleInstance[] {
  const scope = makeScope(ctx, values, parent);
  return repetitions(call, scope, `module "${call.name}"`).map(({ key, rep }) => {
    const steps = [...parent.steps, key === undefined ? { name: call.name } : { name: call.name, key }];
    return { address: formatModule(steps), steps, config: call.module, parent, call, rep };
  });
}

/** Every instance of the module at the end of a path of call names. */
export function moduleInstancesAt(ctx: OperationContext, path: string[], values: Values): ModuleInstance[] {
  let level = [rootInstance(ctx)];
  for (const name of path) level = level.flatMap((mi) => childInstances(ctx, mi, mi.config.modules.get(name)!, values));
  return level;
}

/** The module instance a module address names, or undefined when the configuration does not have it. */
export function moduleInstanceFor(ctx: OperationContext, steps: ModuleStep[], values: Values): ModuleInstance | undefined {
  let mi: ModuleInstance | undefined = rootInstance(ctx);
  for (const st of steps) {
    const call: ModuleCallConfig | undefined = mi.config.modules.get(st.name);
    if (!call) return undefined;
    mi = childInstances(ctx, mi, call, values).find((c) => c.steps[c.steps.length - 1]!.key === st.key);
    if (!mi) return undefined;
  }
  return mi;
}

/** Expands count or for_each: one entry per instance with its key, or one entry without a key. */
export function repetitions(block: { count?: Expr; forEach?: Expr }, scope: EvalScope, what: string): { key?: InstanceKey; rep: Repetition }[] {
  const base = { ...scope, countIndex: undefined, each: undefined };
  if (block.count) {
    const v = evaluate(block.count, base);
    if (isUnknown(v)) {
      throw new ConfigError(
        "Invalid count argument: the count value depends on values that cannot be determined until apply",
        block.count.range,
        "Make count depend only on variables and locals known at plan time.",
      );
    }
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0) throw new ConfigError(`Invalid count argument: count must be a whole number, got ${JSON.stringify(v)}`, block.count.range);
    return Array.from({ length: v }, (_, i) => ({ key: i, rep: { countIndex: i } }));
  }
  if (block.forEach) {
    const range = block.forEach.range;
    const v = evaluate(block.forEach, base);
    if (containsUnknown(isObject(v) ? Object.keys(v) : v)) {
      throw new ConfigError(
        `Invalid for_each argument: the keys of ${what}'s for_each depend on values that cannot be determined until apply`,
        range,
        "Use keys known at plan time (variables, locals, literal maps or sets of strings); values may be unknown.",
      );
    }
    if (Array.isArray(v)) {
      const keys = new Set<string>();
      for (const item of v) {
        if (typeof item !== "string") {
          throw new ConfigError(`Invalid for_each argument: a set given to for_each must hold strings only, not ${typeName(item)}`, range, "Use a map, or toset([...]) of strings.");
        }
        keys.add(item);
      }
      return [...keys].sort().map((k) => ({ key: k, rep: { each: { key: k, value: k } } }));
    }
    if (isObject(v)) return Object.keys(v).sort().map((k) => ({ key: k, rep: { each: { key: k, value: v[k]! } } }));
    throw new ConfigError(
      `Invalid for_each argument: the given "for_each" argument value is unsuitable: the "for_each" argument must be a map, or set of strings, and you have provided a value of type ${typeName(v)}`,
      range,
    );
  }
  return [{ rep: {} }];
}

/** Instance addresses (with their count.index or each) of a resource block in a module instance. */
export function resourceInstances(ctx: OperationContext, mi: ModuleInstance, r: ResourceConfig, values: Values): { address: string; key?: InstanceKey; rep: Repetition }[] {
  const scope = makeScope(ctx, values, mi);
  return repetitions(r, scope, r.address).map(({ key, rep }) => ({
    address: formatAddress({ module: mi.steps, mode: r.mode, type: r.type, name: r.name, ...(key !== undefined ? { key } : {}) }),
    key,
    rep,
  }));
}

/** The value a reference to a resource block gives: one object, a list (count) or a map (for_each). */
function blockValue(ctx: OperationContext, mi: ModuleInstance, r: ResourceConfig, values: Values): Value {
  const insts = resourceInstances(ctx, mi, r, values);
  if (r.count) return insts.map((i) => values(i.address) ?? U);
  if (r.forEach) return Object.fromEntries(insts.map((i) => [String(i.key), values(i.address) ?? U]));
  return values(insts[0]!.address) ?? U;
}

/** `module.NAME`: an object of the call's outputs (a list of them with count, a map with for_each). */
function moduleValue(ctx: OperationContext, mi: ModuleInstance, name: string, values: Values, range: SourceRange): Value {
  const call = mi.config.modules.get(name);
  if (!call) throw new ConfigError(`Reference to undeclared module: no module call named "${name}" is declared in this module`, range);
  const outputsOf = (child: ModuleInstance): Value => {
    const scope = makeScope(ctx, values, child);
    return Object.fromEntries([...child.config.outputs.values()].map((o) => [o.name, evaluate(o.expr, scope)]));
  };
  const children = childInstances(ctx, mi, call, values);
  if (call.count) return children.map(outputsOf);
  if (call.forEach) return Object.fromEntries(children.map((c) => [String(c.steps[c.steps.length - 1]!.key), outputsOf(c)]));
  return outputsOf(children[0]!);
}

/** A variable's value in a module instance: the root's from the component, a child's from its call's argument. */
function variableValue(ctx: OperationContext, mi: ModuleInstance, name: string, values: Values): Value {
  if (!mi.parent || !mi.call) return ctx.variables[name] ?? null;
  const v = mi.config.variables.get(name);
  const input = mi.call.inputs.find((a) => a.name === name);
  if (!input) return v?.default ?? null;
  const given = evaluate(input.expr, makeScope(ctx, values, mi.parent, mi.rep));
  if (given === null) return v?.hasDefault ? (v.default ?? null) : null;
  if (!v || containsUnknown(given)) return given;
  try {
    return convertToType(given, v.type, `module.${mi.call.name}: var.${name}`);
  } catch (e) {
    throw new ConfigError((e as Error).message, input.range, `Give module "${mi.call.name}" a value of the variable's declared type.`);
  }
}

/** Resolves references in a module instance; `values` supplies instance attributes by address. */
export function makeScope(ctx: OperationContext, values: Values, mi: ModuleInstance = rootInstance(ctx), rep: Repetition = {}): EvalScope {
  const scope: EvalScope = {
    variable: (name) => variableValue(ctx, mi, name, values),
    local: (name, range) => {
      const l = mi.config.locals.get(name);
      if (!l) throw new ConfigError(`Reference to undeclared local value: no local value named "${name}" is defined`, range);
      return evaluate(l.expr, makeScope(ctx, values, mi));
    },
    resource: (type, name, range) => {
      const r = mi.config.resources.get(`${type}.${name}`);
      if (!r) throw new ConfigError(`Reference to undeclared resource: a managed resource "${type}" "${name}" has not been declared in the module`, range);
      return blockValue(ctx, mi, r, values);
    },
    data: (type, name, range) => {
      const r = mi.config.resources.get(`data.${type}.${name}`);
      if (!r) throw new ConfigError(`Reference to undeclared data source: a data "${type}" "${name}" block has not been declared in the module`, range);
      return blockValue(ctx, mi, r, values);
    },
    module: (name, range) => moduleValue(ctx, mi, name, values, range),
    countIndex: rep.countIndex,
    each: rep.each,
  };
  return scope;
}

/** The scope of one resource instance, rebuilt from its address (apply and import, which do not walk the expansion). */
export function instanceScope(ctx: OperationContext, address: string, values: Values): { scope: EvalScope; entry: ResourceEntry; mi: ModuleInstance } | undefined {
  const a = parseAddress(address);
  const entry = ctx.resources.get(configAddress(a));
  if (!entry) return undefined;
  const mi = moduleInstanceFor(ctx, a.module, values);
  if (!mi) return undefined;
  const inst = resourceInstances(ctx, mi, entry.r, values).find((i) => i.address === address);
  if (!inst) return undefined;
  return { scope: makeScope(ctx, values, mi, inst.rep), entry, mi };
}

/** Evaluates a resource instance's arguments and nested blocks and fills schema defaults, converting to attribute types. */
export function evaluateResourceConfig(ctx: OperationContext, r: ResourceConfig, schema: ResourceSchema, scope: EvalScope): Attrs {
  const out = evaluateAttributes(r.attributes, schema.attributes, scope, r.address);
  for (const [name, bs] of Object.entries(schema.blocks ?? {})) {
    const items = expandBlocks(r.blocks, name, bs, scope, r.address);
    out[name] = bs.nesting === "single" ? (items[0] ?? null) : items;
  }
  return out;
}

function evaluateAttributes(attributes: Attribute[], schema: Record<string, AttributeSchema>, scope: EvalScope, where: string): Attrs {
  const out: Attrs = {};
  for (const [name, s] of Object.entries(schema)) {
    if (s.required || s.optional) out[name] = s.default ?? null;
  }
  for (const a of attributes) {
    let v = evaluate(a.expr, scope);
    const s = schema[a.name]!;
    if (v === null) v = s.default ?? null;
    else v = coerce(v, s.type, `${where}.${a.name}`, a.range);
    out[a.name] = v;
  }
  return out;
}

/** The objects a resource's `name` blocks make: written blocks as they are, dynamic blocks once per for_each element. */
function expandBlocks(blocks: Block[], name: string, bs: BlockSchema, scope: EvalScope, where: string): Value[] {
  const out: Value[] = [];
  for (const b of blocks) {
    if (b.type === name) {
      out.push(evaluateAttributes(b.body.attributes, bs.attributes, scope, `${where}.${name}`));
      continue;
    }
    if (b.type !== "dynamic" || b.labels[0] !== name) continue;
    const forEach = b.body.attributes.find((a) => a.name === "for_each")!;
    const itAttr = b.body.attributes.find((a) => a.name === "iterator");
    if (itAttr && (itAttr.expr.kind !== "scope" || itAttr.expr.steps.length)) throw new ConfigError("Invalid dynamic iterator name: iterator must be a bare name, like iterator = item", itAttr.range);
    const it = itAttr?.expr.kind === "scope" ? itAttr.expr.root : name;
    const content = b.body.blocks.find((x) => x.type === "content")!;
    const coll = evaluate(forEach.expr, scope);
    if (isUnknown(coll)) {
      throw new ConfigError(`Invalid dynamic for_each value: the for_each of dynamic "${name}" cannot be determined until apply`, forEach.range, "Use a value known at plan time.");
    }
    let entries: [Value, Value][];
    if (Array.isArray(coll)) entries = coll.map((v, i) => [i, v]);
    else if (isObject(coll)) entries = Object.keys(coll).sort().map((k) => [k, coll[k]!]);
    else if (coll === null) entries = [];
    else throw new ConfigError(`Invalid dynamic for_each value: dynamic "${name}" needs a list, set or map, not ${typeName(coll)}`, forEach.range);
    for (const [key, value] of entries) {
      // The iterator is a name of its own in the content: `${it}.key`, `${it}.value`.
      const inner: EvalScope = {
        ...scope,
        resource: (type, attrName, range) => {
          if (type !== it) return scope.resource(type, attrName, range);
          if (attrName === "key") return key;
          if (attrName === "value") return value;
          throw new ConfigError(`Invalid reference: the iterator ${it} has only key and value, not "${attrName}"`, range);
        },
      };
      out.push(evaluateAttributes(content.body.attributes, bs.attributes, inner, `${where}.${name}`));
    }
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
