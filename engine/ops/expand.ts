// Module instances, count/for_each expansion, and the scopes expressions are evaluated in.
import type { Attribute, Block, Expr, SourceRange } from "../config/ast";
import { anyMark, evaluate, evaluateMarked, markAt, type EvalScope, type Marks } from "../config/evaluate";
import type { Module, ModuleCallConfig, OutputConfig, ResourceConfig, VariableConfig } from "../config/module";
import { convertVariable, validationErrors } from "../config/variables";
import { ConfigError } from "../errors";
import type { AttributeSchema, BlockSchema, ResourceSchema } from "../providers/provider";
import { configAddress, formatAddress, formatKey, formatModule, parseAddress, type InstanceKey, type ModuleStep } from "../state/address";
import { containsUnknown, isObject, isUnknown, typeName, UNKNOWN, type Attrs, type Value } from "../values";
import { sensitiveMask, type OperationContext, type ResourceEntry } from "./context";

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
  /** each.key / each.value, with the sensitivity marks of each.value. */
  each?: { key: Value; value: Value; marks?: Marks };
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
    const { value: v, marks } = evaluateMarked(block.forEach, base);
    if (marks === true || (Array.isArray(v) && anyMark(marks))) {
      throw new ConfigError(
        `Invalid for_each argument: ${what}'s for_each is sensitive; sensitive values, or values derived from sensitive values, cannot be used as for_each arguments, as the value would be exposed as an instance key`,
        range,
        "Use keys that are not sensitive: a map whose values (not keys) hold the secrets, or nonsensitive(...) on keys that reveal nothing.",
      );
    }
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
    if (isObject(v)) return Object.keys(v).sort().map((k) => ({ key: k, rep: { each: { key: k, value: v[k]!, marks: markAt(marks, k) } } }));
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
  // The block's address without a key, formatted once: a reference to a counted block lists every instance.
  const block = formatAddress({ module: mi.steps, mode: r.mode, type: r.type, name: r.name });
  return repetitions(r, scope, r.address).map(({ key, rep }) => ({ address: block + formatKey(key), key, rep }));
}

/** The value a reference to a resource block gives: one object, a list (count) or a map (for_each). */
function blockValue(ctx: OperationContext, mi: ModuleInstance, r: ResourceConfig, values: Values): Value {
  const insts = resourceInstances(ctx, mi, r, values);
  if (r.count) return insts.map((i) => values(i.address) ?? U);
  if (r.forEach) return Object.fromEntries(insts.map((i) => [String(i.key), values(i.address) ?? U]));
  return values(insts[0]!.address) ?? U;
}

interface Marked {
  value: Value;
  marks: Marks;
}

/** An output's value and marks; one that shows a sensitive value must say sensitive = true (unless nonsensitive() wraps it). */
export function outputMarked(o: OutputConfig, scope: EvalScope): Marked {
  const r = evaluateMarked(o.expr, scope);
  if (r.marks !== false && !o.sensitive) {
    throw new ConfigError(
      `Output refers to sensitive values: output "${o.name}" shows a value derived from a sensitive value`,
      o.range,
      `Add sensitive = true to output "${o.name}" so its value is redacted in logs and the console, or wrap the value in nonsensitive() if it reveals nothing secret.`,
    );
  }
  return { value: r.value, marks: o.sensitive ? true : false };
}

/** `module.NAME`: an object of the call's outputs (a list of them with count, a map with for_each), with the sensitive outputs marked. */
function moduleValue(ctx: OperationContext, mi: ModuleInstance, name: string, values: Values, range?: SourceRange): Marked {
  const call = mi.config.modules.get(name);
  if (!call) throw new ConfigError(`Reference to undeclared module: no module call named "${name}" is declared in this module`, range);
  const outputsOf = (child: ModuleInstance): Marked => {
    const scope = makeScope(ctx, values, child);
    const value: Record<string, Value> = {};
    const marks: Record<string, Marks> = {};
    for (const o of child.config.outputs.values()) {
      const r = outputMarked(o, scope);
      value[o.name] = r.value;
      marks[o.name] = r.marks;
    }
    return { value, marks: anyMark(marks) ? marks : false };
  };
  const children = childInstances(ctx, mi, call, values);
  const parts = children.map(outputsOf);
  const marksOf = (ms: Marks[] | Record<string, Marks>): Marks => ((Array.isArray(ms) ? ms : Object.values(ms)).some(anyMark) ? ms : false);
  if (call.count) return { value: parts.map((p) => p.value), marks: marksOf(parts.map((p) => p.marks)) };
  if (call.forEach) {
    const keys = children.map((c) => String(c.steps[c.steps.length - 1]!.key));
    return { value: Object.fromEntries(keys.map((k, i) => [k, parts[i]!.value])), marks: marksOf(Object.fromEntries(keys.map((k, i) => [k, parts[i]!.marks]))) };
  }
  return parts[0]!;
}

/**
 * A variable's value in a module instance, converted to its type and checked by its validation blocks:
 * the root's from the component (checked in prepare), a child's from its call's argument. Marked
 * sensitive when the variable says so, or when the argument's value is.
 */
function variableValue(ctx: OperationContext, mi: ModuleInstance, name: string, values: Values): Marked {
  const v = mi.config.variables.get(name);
  if (!mi.parent || !mi.call) return { value: ctx.variables[name] ?? null, marks: v?.sensitive ?? false };
  const input = mi.call.inputs.find((a) => a.name === name);
  let given: Value | undefined;
  let marks: Marks = false;
  if (input) ({ value: given, marks } = evaluateMarked(input.expr, makeScope(ctx, values, mi.parent, mi.rep)));
  if (!v) return { value: given ?? null, marks }; // prepare refuses arguments the child does not declare
  const raw = given === undefined || (given === null && !v.nullable) ? (v.default ?? null) : given;
  const where = `module ${mi.address}${input ? ` (argument ${name} at ${input.range.file}:${input.range.line})` : ""}`;
  const fix = (e: unknown): never => {
    if (!(e instanceof ConfigError)) throw e;
    const [d] = e.diagnostics;
    throw new ConfigError(d!.summary, e.range, `${d!.detail}\nGiven by ${where}: give the module block a value the variable accepts.`);
  };
  let value: Value;
  try {
    value = convertVariable(v, raw, false);
  } catch (e) {
    return fix(e);
  }
  const sensitive = v.sensitive || anyMark(marks);
  // A value not known until apply is checked then, when the expressions are evaluated again.
  if (!containsUnknown(value)) {
    const checked: VariableConfig = sensitive ? { ...v, sensitive: true } : v;
    const [first] = validationErrors(checked, value, ctx.mod.files, false);
    if (first) fix(first);
  }
  return { value, marks: v.sensitive ? true : marks };
}

/** Which parts of a referenced object are sensitive: a sensitive variable (or argument), a local derived from one, a resource's or data source's sensitive attributes. */
function referenceMarks(ctx: OperationContext, mi: ModuleInstance, values: Values, addr: string, lookup: (kind: "var" | "local", name: string) => Marked, moduleMarked: (name: string) => Marked): Marks {
  const [root, name, third] = addr.split(".") as [string, string, string | undefined];
  if (root === "var") return mi.config.variables.has(name) ? lookup("var", name).marks : false;
  if (root === "local") return mi.config.locals.has(name) ? lookup("local", name).marks : false;
  if (root === "module") return mi.config.modules.has(name) ? moduleMarked(name).marks : false;
  const r = mi.config.resources.get(root === "data" ? `data.${name}.${third}` : `${root}.${name}`);
  if (!r) return false;
  const schema = (r.mode === "data" ? ctx.providers.forData(r.type) : ctx.providers.forType(r.type))?.resource;
  const mask = schema ? sensitiveMask(schema) : {};
  if (!anyMark(mask)) return false;
  if (!r.count && !r.forEach) return mask;
  const insts = resourceInstances(ctx, mi, r, values);
  if (r.count) return insts.map(() => mask);
  return Object.fromEntries(insts.map((i) => [String(i.key), mask]));
}

/** Resolves references in a module instance; `values` supplies instance attributes by address. */
export function makeScope(ctx: OperationContext, values: Values, mi: ModuleInstance = rootInstance(ctx), rep: Repetition = {}): EvalScope {
  // Variables, locals and module outputs are evaluated once per scope, with their sensitivity marks.
  const cache = new Map<string, Marked>();
  const lookup = (kind: "var" | "local", name: string, range?: SourceRange): Marked => {
    const key = `${kind}.${name}`;
    let got = cache.get(key);
    if (!got) {
      if (kind === "var") got = variableValue(ctx, mi, name, values);
      else {
        const l = mi.config.locals.get(name);
        if (!l) throw new ConfigError(`Reference to undeclared local value: no local value named "${name}" is defined`, range);
        // A local sees neither count/each of the instance that refers to it nor enclosing for iterators.
        got = evaluateMarked(l.expr, base);
      }
      cache.set(key, got);
    }
    return got;
  };
  const moduleMarked = (name: string, range?: SourceRange): Marked => {
    const key = `module.${name}`;
    let got = cache.get(key);
    if (!got) cache.set(key, (got = moduleValue(ctx, mi, name, values, range)));
    return got;
  };
  const scope: EvalScope = {
    variable: (name) => lookup("var", name).value,
    local: (name, range) => lookup("local", name, range).value,
    marks: (addr) => referenceMarks(ctx, mi, values, addr, lookup, moduleMarked),
    files: ctx.mod.files,
    modulePath: mi.config.dir || ".",
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
    module: (name, range) => moduleMarked(name, range).value,
    countIndex: rep.countIndex,
    each: rep.each,
  };
  const base: EvalScope = { ...scope, countIndex: undefined, each: undefined };
  return scope;
}

/** Every module instance below the root, parents first; `tolerant`: leave out calls that cannot be expanded yet. */
export function childModuleInstances(ctx: OperationContext, values: Values, tolerant = false): ModuleInstance[] {
  const out: ModuleInstance[] = [];
  const visit = (mi: ModuleInstance) => {
    for (const call of mi.config.modules.values()) {
      let children: ModuleInstance[];
      try {
        children = childInstances(ctx, mi, call, values);
      } catch (e) {
        if (tolerant) continue;
        throw e;
      }
      for (const child of children) {
        out.push(child);
        visit(child);
      }
    }
  };
  visit(rootInstance(ctx));
  return out;
}

const isVariableError = (e: unknown) => e instanceof ConfigError && /^Invalid value for (input )?variable/.test(e.diagnostics[0]?.summary ?? "");

/**
 * Evaluates every variable (type conversion, validation) of every called module instance, and with
 * `outputs` every output (sensitivity). `early`: before any resource is planned, when resource values
 * are not known yet; only the variables' own refusals are reported then, the rest waits for the walk.
 */
export function checkModuleInstances(ctx: OperationContext, values: Values, opts: { outputs: boolean; early?: boolean }): void {
  for (const mi of childModuleInstances(ctx, values, opts.early)) {
    const scope = makeScope(ctx, values, mi);
    for (const v of mi.config.variables.values()) {
      try {
        scope.variable(v.name, v.range);
      } catch (e) {
        if (!opts.early || isVariableError(e)) throw e;
      }
    }
    if (opts.outputs) for (const o of mi.config.outputs.values()) outputMarked(o, scope);
  }
}

/** The scope of one resource instance, rebuilt from its address (apply and import, which do not walk the expansion). */
export function instanceScope(ctx: OperationContext, address: string, values: Values): { scope: EvalScope; entry: ResourceEntry; mi: ModuleInstance } | undefined {
  const a = parseAddress(address);
  const entry = ctx.resources.get(configAddress(a));
  if (!entry) return undefined;
  const mi = moduleInstanceFor(ctx, a.module, values);
  if (!mi) return undefined;
  // The instance by its key (the rest of the address found the module instance and the block): an apply asks for each
  // of a counted block's instances, and formatting every sibling's address each time made that quadratic.
  const inst = repetitions(entry.r, makeScope(ctx, values, mi), entry.r.address).find((i) => i.key === a.key);
  if (!inst) return undefined;
  return { scope: makeScope(ctx, values, mi, inst.rep), entry, mi };
}

/** Evaluates a resource instance's arguments and nested blocks and fills schema defaults, converting to attribute types. */
export function evaluateResourceConfig(ctx: OperationContext, r: ResourceConfig, schema: ResourceSchema, scope: EvalScope): Attrs {
  return evaluateResourceConfigMarked(r, schema, scope).config;
}

/** The arguments (and nested blocks) whose values derive from sensitive values, as `{ name: marks }` (empty when none). */
export function configMarks(r: ResourceConfig, schema: ResourceSchema, scope: EvalScope): Attrs {
  return evaluateResourceConfigMarked(r, schema, scope).marks;
}

function evaluateResourceConfigMarked(r: ResourceConfig, schema: ResourceSchema, scope: EvalScope): { config: Attrs; marks: Attrs } {
  const { out, marks } = evaluateAttributes(r.attributes, schema.attributes, scope, r.address);
  for (const [name, bs] of Object.entries(schema.blocks ?? {})) {
    const items = expandBlocks(r.blocks, name, bs, scope, r.address);
    out[name] = bs.nesting === "single" ? (items[0]?.out ?? null) : items.map((i) => i.out);
    const itemMarks: Marks[] = items.map((i) => (anyMark(i.marks) ? i.marks : false));
    if (itemMarks.some(anyMark)) marks[name] = bs.nesting === "single" ? itemMarks[0]! : itemMarks;
  }
  return { config: out, marks };
}

function evaluateAttributes(attributes: Attribute[], schema: Record<string, AttributeSchema>, scope: EvalScope, where: string): { out: Attrs; marks: Attrs } {
  const out: Attrs = {};
  const marks: Attrs = {};
  for (const [name, s] of Object.entries(schema)) {
    if (s.required || s.optional) out[name] = s.default ?? null;
  }
  for (const a of attributes) {
    const r = evaluateMarked(a.expr, scope);
    let v = r.value;
    const s = schema[a.name]!;
    if (v === null) v = s.default ?? null;
    else v = coerce(v, s.type, `${where}.${a.name}`, a.range);
    out[a.name] = v;
    if (r.marks !== false) marks[a.name] = r.marks;
  }
  return { out, marks };
}

/** The objects a resource's `name` blocks make: written blocks as they are, dynamic blocks once per for_each element. */
function expandBlocks(blocks: Block[], name: string, bs: BlockSchema, scope: EvalScope, where: string): { out: Attrs; marks: Attrs }[] {
  const out: { out: Attrs; marks: Attrs }[] = [];
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
    const { value: coll, marks: collMarks } = evaluateMarked(forEach.expr, scope);
    if (isUnknown(coll)) {
      throw new ConfigError(`Invalid dynamic for_each value: the for_each of dynamic "${name}" cannot be determined until apply`, forEach.range, "Use a value known at plan time.");
    }
    let entries: [Value, Value][];
    if (Array.isArray(coll)) entries = coll.map((v, i) => [i, v]);
    else if (isObject(coll)) entries = Object.keys(coll).sort().map((k) => [k, coll[k]!]);
    else if (coll === null) entries = [];
    else throw new ConfigError(`Invalid dynamic for_each value: dynamic "${name}" needs a list, set or map, not ${typeName(coll)}`, forEach.range);
    for (const [key, value] of entries) {
      // The iterator is a name of its own in the content: `${it}.key`, `${it}.value`, with the marks of the element.
      const k = key as string | number;
      const iterator = { value: { key, value }, marks: collMarks === true ? true : { key: false, value: markAt(collMarks, k) } };
      const inner: EvalScope = { ...scope, iterators: { ...scope.iterators, [it]: iterator } };
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

