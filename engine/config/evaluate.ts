import type { Expr, ForExpr, SourceRange, TraversalStep } from "./ast";
import { callFunction, toStringValue } from "./functions";
import { moduleFile, modulePath, templateVars } from "./functions-encoding";
import { parseTemplate } from "./parser";
import { ConfigError } from "../errors";
import { containsUnknown, deepEqual, isObject, isUnknown, typeName, UNKNOWN, type Value } from "../values";

/**
 * Sensitivity marks in the shape of a plan's `after_sensitive`: `true` marks a whole value, an
 * array or object of marks marks parts of it, `false` nothing.
 */
export type Marks = Value;

/** What an expression can refer to. Each lookup throws a ConfigError for an undeclared name. */
export interface EvalScope {
  variable(name: string, range: SourceRange): Value;
  local(name: string, range: SourceRange): Value;
  resource(type: string, name: string, range: SourceRange): Value;
  countIndex?: number;
  /** `each.key` / `each.value` in a resource or module that sets for_each (`marks`: of each.value). */
  each?: { key: Value; value: Value; marks?: Marks };
  /** `module.NAME`: the called module's outputs as an object (a list or map of them with count or for_each). */
  module?(name: string, range: SourceRange): Value;
  /** `data.TYPE.NAME`: the data source's attributes (a list or map of them with count or for_each). */
  data?(type: string, name: string, range: SourceRange): Value;
  /** `path.module`: the module's folder relative to the bundle root ("." for the root module). */
  modulePath?: string;
  /** Sensitivity of a referenced object (`var.x`, `local.x`, `type.name`, `data.type.name`, `module.name`); absent: nothing is sensitive. */
  marks?(addr: string): Marks;
  /** The bundle's files (`*.tf` and the rest, by path from the bundle root), for file(), templatefile() and friends. */
  files?: Record<string, string>;
  /** Names bound by the enclosing `for` expressions and template `%{ for }` directives. */
  iterators?: Record<string, { value: Value; marks: Marks }>;
}

const U = UNKNOWN as unknown as Value;

/** A value with its sensitivity marks. */
interface Marked {
  v: Value;
  m: Marks;
}

export function anyMark(m: Marks | undefined): boolean {
  if (m === true) return true;
  if (Array.isArray(m)) return m.some(anyMark);
  if (isObject(m)) return Object.values(m).some(anyMark);
  return false;
}

export function markAt(m: Marks, key: string | number): Marks {
  if (m === true) return true;
  if (Array.isArray(m)) return m[Number(key)] ?? false;
  if (isObject(m)) return m[String(key)] ?? false;
  return false;
}

/** Marks of a collection built from parts: false when no part is marked. */
function collect(parts: Marks[] | Record<string, Marks>): Marks {
  return (Array.isArray(parts) ? parts : Object.values(parts)).some(anyMark) ? parts : false;
}

const whole = (...ms: Marks[]): Marks => ms.some(anyMark);

/** The object addresses an expression refers to: var.x, local.x, type.name. */
export function references(expr: Expr): { addr: string; range: SourceRange }[] {
  const out: { addr: string; range: SourceRange }[] = [];
  const visit = (e: Expr, bound: ReadonlySet<string>): void => {
    const v = (x: Expr) => visit(x, bound);
    switch (e.kind) {
      case "scope": {
        const first = e.steps[0];
        e.steps.forEach((s) => s.kind === "index" && v(s.key));
        if (bound.has(e.root) || ["count", "each", "self", "path", "terraform"].includes(e.root)) break;
        if (first?.kind === "attr") out.push({ addr: referenceAddr(e, first.name), range: e.range });
        else throw new ConfigError(`Invalid reference: "${e.root}" must be followed by an attribute name, like ${e.root}.name`, e.range);
        break;
      }
      case "postfix":
        v(e.target);
        e.steps.forEach((s) => s.kind === "index" && v(s.key));
        break;
      case "template":
        e.parts.forEach((p) => typeof p !== "string" && v(p));
        break;
      case "tuple":
        e.items.forEach(v);
        break;
      case "object":
        e.items.forEach((i) => (v(i.key), v(i.value)));
        break;
      case "call":
        e.args.forEach(v);
        break;
      case "unary":
        v(e.operand);
        break;
      case "binary":
        v(e.left);
        v(e.right);
        break;
      case "conditional":
        v(e.cond);
        v(e.then);
        v(e.else);
        break;
      case "for": {
        v(e.collection);
        const inner = new Set([...bound, e.valueVar, ...(e.keyVar ? [e.keyVar] : [])]);
        for (const x of [e.key, e.value, e.cond]) if (x) visit(x, inner);
        break;
      }
      case "templateJoin":
        v(e.items);
        break;
      case "literal":
        break;
    }
  };
  visit(expr, new Set());
  return out;
}

/** `module.NAME.OUTPUT` (or `module.NAME` when no output is named) and `data.TYPE.NAME`; else `root.first`. */
function referenceAddr(e: Extract<Expr, { kind: "scope" }>, first: string): string {
  const second = e.steps[1];
  if (e.root === "data") {
    if (second?.kind !== "attr") throw new ConfigError(`Invalid data source reference: write data.TYPE.NAME, like data.local_file.${first}.content`, e.range);
    return `data.${first}.${second.name}`;
  }
  if (e.root === "module" && second?.kind === "attr") return `module.${first}.${second.name}`;
  return `${e.root}.${first}`;
}

export function evaluate(expr: Expr, scope: EvalScope): Value {
  return ev(expr, scope).v;
}

/** Evaluates an expression and says which parts of its value are sensitive. */
export function evaluateMarked(expr: Expr, scope: EvalScope): { value: Value; marks: Marks } {
  const r = ev(expr, scope);
  return { value: r.v, marks: anyMark(r.m) ? r.m : false };
}

function ev(expr: Expr, scope: EvalScope): Marked {
  const fail = (msg: string): never => {
    throw new ConfigError(msg, expr.range);
  };
  switch (expr.kind) {
    case "literal":
      return { v: expr.value, m: false };
    case "template": {
      if (expr.parts.length === 1 && typeof expr.parts[0] !== "string" && !expr.directives) return ev(expr.parts[0]!, scope);
      let out = "";
      let m = false;
      for (const p of expr.parts) {
        if (typeof p === "string") {
          out += p;
          continue;
        }
        const r = ev(p, scope);
        m ||= anyMark(r.m);
        if (isUnknown(r.v)) return { v: U, m };
        try {
          out += toStringValue(r.v);
        } catch (e) {
          throw new ConfigError(`Invalid template interpolation value: ${(e as Error).message.replace(/^Invalid value: /, "")}`, p.range);
        }
      }
      return { v: out, m };
    }
    case "tuple": {
      const items = expr.items.map((i) => ev(i, scope));
      return { v: items.map((i) => i.v), m: collect(items.map((i) => i.m)) };
    }
    case "object": {
      const out: Record<string, Value> = {};
      const marks: Record<string, Marks> = {};
      let keyMarked = false;
      for (const { key, value } of expr.items) {
        const k = ev(key, scope);
        if (isUnknown(k.v)) return { v: U, m: false };
        if (typeof k.v !== "string" && typeof k.v !== "number" && typeof k.v !== "boolean") fail(`Invalid object key: a key must be a string, not ${typeName(k.v)}`);
        keyMarked ||= anyMark(k.m);
        const r = ev(value, scope);
        out[String(k.v)] = r.v;
        marks[String(k.v)] = r.m;
      }
      return { v: out, m: keyMarked || collect(marks) };
    }
    case "scope": {
      const bound = scope.iterators?.[expr.root];
      if (bound) return applySteps({ v: bound.value, m: bound.marks }, expr.steps, scope, expr.range);
      const root: Marked = { v: rootValue(expr, scope), m: rootMarks(expr, scope) };
      return applySteps(root, expr.steps.slice(stepsConsumed(expr)), scope, expr.range);
    }
    case "postfix":
      return applySteps(ev(expr.target, scope), expr.steps, scope, expr.range);
    case "call":
      return call(expr, scope);
    case "unary": {
      const r = ev(expr.operand, scope);
      if (isUnknown(r.v)) return { v: U, m: r.m };
      if (expr.op === "!") return { v: !asBool(r.v, expr.range), m: whole(r.m) };
      return { v: -asNumber(r.v, expr.range), m: whole(r.m) };
    }
    case "binary":
      return binary(expr.op, expr, scope);
    case "conditional": {
      const c = ev(expr.cond, scope);
      if (isUnknown(c.v)) return { v: U, m: whole(c.m) };
      if (c.v === null) throw new ConfigError("Null condition: the condition value is null; conditions must either be true or false", expr.cond.range);
      const r = asBool(c.v, expr.cond.range) ? ev(expr.then, scope) : ev(expr.else, scope);
      return anyMark(c.m) ? { v: r.v, m: true } : r;
    }
    case "for":
      return forExpr(expr, scope);
    case "templateJoin": {
      const r = forExpr(expr.items, scope);
      if (containsUnknown(r.v)) return { v: U, m: whole(r.m) };
      return { v: (r.v as Value[]).map((x) => toStringValue(x)).join(""), m: whole(r.m) };
    }
  }
}

/** Lists, sets and tuples by index; maps and objects by key in lexical order, as OpenTofu iterates them. */
function forExpr(expr: ForExpr, scope: EvalScope): Marked {
  const coll = ev(expr.collection, scope);
  if (isUnknown(coll.v)) return { v: U, m: whole(coll.m) };
  if (coll.v === null) throw new ConfigError("Iteration over null value: a null value cannot be used as the collection in a 'for' expression", expr.collection.range);
  let entries: [string | number, Value][];
  if (Array.isArray(coll.v)) entries = coll.v.map((x, i) => [i, x]);
  else if (isObject(coll.v)) entries = Object.keys(coll.v).sort().map((k) => [k, (coll.v as Record<string, Value>)[k]!]);
  else throw new ConfigError(`Iteration over non-iterable value: a value of type ${typeName(coll.v)} cannot be used as the collection in a 'for' expression`, expr.collection.range);
  const collWhole = coll.m === true;
  const tupleItems: Marked[] = [];
  const objItems = new Map<string, Marked[]>();
  let keyMarked = false;
  for (const [k, x] of entries) {
    const iterators = { ...scope.iterators, [expr.valueVar]: { value: x, marks: markAt(coll.m, k) } };
    if (expr.keyVar) iterators[expr.keyVar] = { value: k, marks: collWhole };
    const inner: EvalScope = { ...scope, iterators };
    if (expr.cond) {
      const c = ev(expr.cond, inner);
      if (isUnknown(c.v)) return { v: U, m: false };
      if (c.v === null) throw new ConfigError("Invalid 'for' condition: the 'if' clause value is null; it must be true or false", expr.cond.range);
      if (typeof c.v !== "boolean") throw new ConfigError(`Invalid 'for' condition: the 'if' clause value is invalid: bool required, not ${typeName(c.v)}`, expr.cond.range);
      keyMarked ||= anyMark(c.m);
      if (!c.v) continue;
    }
    if (!expr.key) {
      tupleItems.push(ev(expr.value, inner));
      continue;
    }
    const key = ev(expr.key, inner);
    if (isUnknown(key.v)) return { v: U, m: false };
    if (key.v === null) throw new ConfigError("Invalid object key: the key expression in a 'for' expression must not produce a null value", expr.key.range);
    if (typeof key.v !== "string" && typeof key.v !== "number" && typeof key.v !== "boolean") {
      throw new ConfigError(`Invalid object key: the key expression produced an invalid result: string required, not ${typeName(key.v)}`, expr.key.range);
    }
    keyMarked ||= anyMark(key.m);
    const ks = String(key.v);
    const value = ev(expr.value, inner);
    const group = objItems.get(ks);
    if (group && !expr.group) {
      throw new ConfigError(
        `Duplicate object key: two different items produced the key "${ks}" in this 'for' expression`,
        expr.key.range,
        "If duplicates are expected, use the ellipsis (...) after the value expression to enable grouping by key.",
      );
    }
    if (group) group.push(value);
    else objItems.set(ks, [value]);
  }
  if (!expr.key) return { v: tupleItems.map((i) => i.v), m: collWhole || keyMarked || collect(tupleItems.map((i) => i.m)) };
  const out: Record<string, Value> = {};
  const marks: Record<string, Marks> = {};
  for (const [k, items] of objItems) {
    out[k] = expr.group ? items.map((i) => i.v) : items[0]!.v;
    marks[k] = expr.group ? collect(items.map((i) => i.m)) : items[0]!.m;
  }
  return { v: out, m: collWhole || keyMarked || collect(marks) };
}

function call(expr: Extract<Expr, { kind: "call" }>, scope: EvalScope): Marked {
  const fail = (msg: string): never => {
    throw new ConfigError(msg, expr.range);
  };
  // try and can see their arguments' errors, so they evaluate the arguments themselves.
  if (expr.name === "try" || expr.name === "can") {
    if (expr.name === "can" && expr.args.length !== 1) fail(`Invalid function call: can takes 1 argument(s), got ${expr.args.length}`);
    if (expr.args.length === 0) fail("Invalid function call: try needs at least one argument");
    const errors: string[] = [];
    for (const a of expr.args) {
      let r: Marked;
      try {
        r = ev(a, scope);
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        errors.push(e.message);
        continue;
      }
      if (expr.name === "can") return { v: containsUnknown(r.v) ? U : true, m: false };
      return r;
    }
    if (expr.name === "can") return { v: false, m: false };
    return fail(`Error in function call: Call to function "try" failed: no expression succeeded:\n${errors.map((e) => `- ${e}`).join("\n")}`);
  }
  const evaluated = expr.args.map((a) => ev(a, scope));
  let args = evaluated.map((a) => a.v);
  let argMarks = evaluated.map((a) => a.m);
  if (expr.expandFinal) {
    const last = evaluated[evaluated.length - 1]!;
    if (isUnknown(last.v)) return { v: U, m: whole(...argMarks) };
    if (last.v === null) fail("Invalid expanding argument value: the expanding argument (indicated by ...) cannot be null");
    if (!Array.isArray(last.v)) fail(`Invalid expanding argument value: the expanding argument (indicated by ...) must be of a tuple, list, or set type, not ${typeName(last.v)}`);
    const spread = last.v as Value[];
    args = [...args.slice(0, -1), ...spread];
    argMarks = [...argMarks.slice(0, -1), ...spread.map((_, i) => markAt(last.m, i))];
  }
  const arity = (n: number) => {
    if (args.length < n) fail(`Not enough function arguments: function "${expr.name}" expects ${n} argument(s).`);
    if (args.length > n) fail(`Too many function arguments: function "${expr.name}" expects only ${n} argument(s).`);
  };
  switch (expr.name) {
    case "sensitive":
    case "nonsensitive":
      arity(1);
      return { v: args[0]!, m: expr.name === "sensitive" };
    case "issensitive":
      arity(1);
      return { v: anyMark(argMarks[0]!), m: false };
    case "templatefile":
      arity(2);
      return { v: templateFile(args[0]!, args[1]!, argMarks[1]!, scope, expr.range), m: whole(...argMarks) };
  }
  try {
    return { v: callFunction(expr.name, args, { files: scope.files }), m: whole(...argMarks) };
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    return fail((e as Error).message);
  }
}

let templateDepth = 0;

/** templatefile: renders one of the module's files as a template that sees only the given vars. */
function templateFile(pathArg: Value, varsArg: Value, varsMarks: Marks, scope: EvalScope, range: SourceRange): Value {
  const fail = (msg: string): never => {
    throw new ConfigError(msg, range);
  };
  if (templateDepth > 0) fail('Error in function call: Call to function "templatefile" failed: cannot recursively call templatefile from inside templatefile or another template function.');
  if (typeof pathArg !== "string") fail('Invalid function argument: Invalid value for "path" parameter: string required.');
  let text: string;
  let vars: Record<string, Value>;
  try {
    text = moduleFile({ files: scope.files }, pathArg as string);
    vars = templateVars(varsArg);
  } catch (e) {
    return fail(`Invalid function argument: Invalid value for "${(e as { param?: string }).param ?? "path"}" parameter: ${(e as Error).message}`);
  }
  if (containsUnknown(varsArg)) return U;
  const refuse = (_n: string, r: SourceRange): never => {
    throw new ConfigError("Invalid reference in template: a template given to templatefile can use only the variables in its vars argument", r);
  };
  const iterators = Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, { value: v, marks: markAt(varsMarks, k) }]));
  const inner: EvalScope = { variable: refuse, local: refuse, resource: (_t, _n, r) => refuse("", r), files: scope.files, iterators };
  templateDepth++;
  try {
    const r = ev(parseTemplate(text, modulePath(pathArg as string)), inner);
    return r.v;
  } finally {
    templateDepth--;
  }
}

function stepsConsumed(expr: Extract<Expr, { kind: "scope" }>): number {
  if (expr.root === "count" || expr.root === "path" || expr.root === "terraform") return 1;
  if (expr.root === "var" || expr.root === "local") return 1;
  if (expr.root === "data") return 2; // data + type + name
  return 1; // resource: type + name
}

function rootMarks(expr: Extract<Expr, { kind: "scope" }>, scope: EvalScope): Marks {
  const first = expr.steps[0];
  if (first?.kind !== "attr") return false;
  if (expr.root === "each") return first.name === "value" ? (scope.each?.marks ?? false) : false;
  if (!scope.marks || ["count", "path", "terraform", "self"].includes(expr.root)) return false;
  if (expr.root === "data") {
    const second = expr.steps[1];
    return second?.kind === "attr" ? scope.marks(`data.${first.name}.${second.name}`) : false;
  }
  return scope.marks(`${expr.root}.${first.name}`);
}

function rootValue(expr: Extract<Expr, { kind: "scope" }>, scope: EvalScope): Value {
  const first = expr.steps[0];
  if (!first || first.kind !== "attr") {
    throw new ConfigError(`Invalid reference: "${expr.root}" alone is not a value; refer to an attribute such as ${expr.root}.name`, expr.range);
  }
  switch (expr.root) {
    case "var":
      return scope.variable(first.name, expr.range);
    case "local":
      return scope.local(first.name, expr.range);
    case "count":
      if (first.name !== "index" || scope.countIndex === undefined) {
        throw new ConfigError("Invalid reference: count.index is only available in a resource that sets count", expr.range);
      }
      return scope.countIndex;
    case "path":
      return first.name === "module" ? (scope.modulePath ?? ".") : ".";
    case "terraform":
      return first.name === "workspace" ? "default" : null;
    case "each": {
      if (!scope.each) throw new ConfigError("Invalid reference: each.key and each.value are only available in a resource or module that sets for_each", expr.range);
      if (first.name !== "key" && first.name !== "value") throw new ConfigError(`Invalid reference: each has only key and value, not "${first.name}"`, expr.range);
      return first.name === "key" ? scope.each.key : scope.each.value;
    }
    case "module":
      if (!scope.module) throw new ConfigError("Module references are not allowed here", expr.range);
      return scope.module(first.name, expr.range);
    case "data": {
      const second = expr.steps[1];
      if (!scope.data) throw new ConfigError("Data source references are not allowed here", expr.range);
      if (second?.kind !== "attr") throw new ConfigError(`Invalid data source reference: write data.TYPE.NAME, like data.local_file.${first.name}.content`, expr.range);
      return scope.data(first.name, second.name, expr.range);
    }
    case "self":
      throw new ConfigError(`Unsupported reference: "${expr.root}." references are not supported by the builtin engine`, expr.range);
    default:
      return scope.resource(expr.root, first.name, expr.range);
  }
}

function applySteps(value: Marked, steps: TraversalStep[], scope: EvalScope, range: SourceRange): Marked {
  let { v, m } = value;
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i]!;
    if (isUnknown(v)) return { v: U, m };
    if (step.kind === "splat") {
      // A splat over one value that is not a list treats it as a list of one; null as an empty list.
      const items = v === null ? [] : Array.isArray(v) ? v : [v];
      const itemMarks = (j: number): Marks => (Array.isArray(v) ? markAt(m, j) : m);
      let end = steps.length;
      if (step.attrOnly) {
        end = i + 1;
        while (end < steps.length && steps[end]!.kind === "attr") end++;
      }
      const each = items.map((item, j) => applySteps({ v: item, m: itemMarks(j) }, steps.slice(i + 1, end), scope, range));
      const out: Marked = { v: each.map((e) => e.v), m: m === true ? true : collect(each.map((e) => e.m)) };
      return end < steps.length ? applySteps(out, steps.slice(end), scope, range) : out;
    }
    const keyR = step.kind === "attr" ? { v: step.name as Value, m: false as Marks } : ev(step.key, scope);
    const key = keyR.v;
    if (isUnknown(key)) return { v: U, m };
    if (anyMark(keyR.m)) m = true;
    if (v === null) throw new ConfigError(`Attempt to get attribute from null value: this value is null, so it has no "${String(key)}"`, range);
    if (Array.isArray(v)) {
      if (typeof key !== "number" && !(typeof key === "string" && /^\d+$/.test(key))) {
        throw new ConfigError(`Invalid index: a list must be indexed by a number, not ${JSON.stringify(key)}`, range);
      }
      const idx = Number(key);
      if (idx < 0 || idx >= v.length) throw new ConfigError(`Invalid index: the index ${idx} is out of range for a list of ${v.length} elements`, range);
      v = v[idx]!;
      m = markAt(m, idx);
    } else if (isObject(v)) {
      const k = String(key);
      if (!(k in v)) throw new ConfigError(`Unsupported attribute: this object does not have an attribute named "${k}"`, range);
      v = v[k]!;
      m = markAt(m, k);
    } else {
      throw new ConfigError(`Unsupported attribute: a ${typeName(v)} value has no attribute "${String(key)}"`, range);
    }
  }
  return { v, m };
}

function asBool(v: Value, range: SourceRange): boolean {
  if (typeof v === "boolean") return v;
  if (v === "true" || v === "false") return v === "true";
  throw new ConfigError(`Invalid operand: a bool is required, not ${typeName(v)}`, range);
}

function asNumber(v: Value, range: SourceRange): number {
  if (typeof v === "number") return v;
  if (typeof v === "string" && v.trim() !== "" && !Number.isNaN(Number(v))) return Number(v);
  throw new ConfigError(`Invalid operand: a number is required, not ${typeName(v)} ${JSON.stringify(v)}`, range);
}

function binary(op: Extract<Expr, { kind: "binary" }>["op"], expr: Extract<Expr, { kind: "binary" }>, scope: EvalScope): Marked {
  // && and || short-circuit only when the left side decides the answer.
  const lm = ev(expr.left, scope);
  const l = lm.v;
  if (op === "&&" || op === "||") {
    if (!isUnknown(l) && asBool(l, expr.left.range) === (op === "||")) return { v: op === "||", m: whole(lm.m) };
    const rm = ev(expr.right, scope);
    if (isUnknown(l) || isUnknown(rm.v)) return { v: U, m: whole(lm.m, rm.m) };
    return { v: asBool(rm.v, expr.right.range), m: whole(lm.m, rm.m) };
  }
  const rm = ev(expr.right, scope);
  const m = whole(lm.m, rm.m);
  return { v: arithmetic(op, lm.v, rm.v, expr), m };
}

function arithmetic(op: Extract<Expr, { kind: "binary" }>["op"], l: Value, r: Value, expr: Extract<Expr, { kind: "binary" }>): Value {
  if (isUnknown(l) || isUnknown(r)) return U;
  switch (op) {
    case "==":
      return deepEqual(l, r);
    case "!=":
      return !deepEqual(l, r);
  }
  const a = asNumber(l, expr.left.range);
  const b = asNumber(r, expr.right.range);
  switch (op) {
    case "+":
      return a + b;
    case "-":
      return a - b;
    case "*":
      return a * b;
    case "/":
      if (b === 0) throw new ConfigError("Division by zero", expr.range);
      return a / b;
    case "%":
      if (b === 0) throw new ConfigError("Division by zero", expr.range);
      return a % b;
    case "<":
      return a < b;
    case ">":
      return a > b;
    case "<=":
      return a <= b;
    case ">=":
      return a >= b;
  }
  return U;
}
