// Module instances, count/for_each expansion, and the scopes expressions are evaluated in.
import type { Attribute, Block, Expr, SourceRange } from "../config/ast";
import { evaluate, type EvalScope } from "../config/evaluate";
import { convertToType, type Module, type ModuleCallConfig, type ResourceConfig } from "../config/module";
import { ConfigError } from "../errors";
import type { AttributeSchema, BlockSchema, ResourceSchema } from "../providers/provider";
import { configAddress, formatAddress, formatModule, parseAddress, type InstanceKey, type ModuleStep } from "../state/address";
import { containsUnknown, isObject, isUnknown, typeName, UNKNOWN, type Attrs, type Value } from "../values";
import type { OperationContext, ResourceEntry } from "./context";

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
  if (given === null) return null; // a variable is nullable unless it says otherwise, so null stays null
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

