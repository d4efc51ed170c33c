import type { Expr, SourceRange, TraversalStep } from "./ast";
import { callFunction, toStringValue } from "./functions";
import { ConfigError } from "../errors";
import { deepEqual, isObject, isUnknown, typeName, UNKNOWN, type Value } from "../values";

/** What an expression can refer to. Each lookup throws a ConfigError for an undeclared name. */
export interface EvalScope {
  variable(name: string, range: SourceRange): Value;
  local(name: string, range: SourceRange): Value;
  resource(type: string, name: string, range: SourceRange): Value;
  countIndex?: number;
  /** `each.key` / `each.value` in a resource or module that sets for_each. */
  each?: { key: Value; value: Value };
  /** `module.NAME`: the called module's outputs as an object (a list or map of them with count or for_each). */
  module?(name: string, range: SourceRange): Value;
  /** `data.TYPE.NAME`: the data source's attributes (a list or map of them with count or for_each). */
  data?(type: string, name: string, range: SourceRange): Value;
}

const U = UNKNOWN as unknown as Value;

/** The object addresses an expression refers to: var.x, local.x, type.name. */
export function references(expr: Expr): { addr: string; range: SourceRange }[] {
  const out: { addr: string; range: SourceRange }[] = [];
  const visit = (e: Expr): void => {
    switch (e.kind) {
      case "scope": {
        const first = e.steps[0];
        if (["count", "each", "self", "path", "terraform"].includes(e.root)) break;
        if (first?.kind === "attr") out.push({ addr: referenceAddr(e, first.name), range: e.range });
        else throw new ConfigError(`Invalid reference: "${e.root}" must be followed by an attribute name, like ${e.root}.name`, e.range);
        e.steps.forEach((s) => s.kind === "index" && visit(s.key));
        break;
      }
      case "postfix":
        visit(e.target);
        e.steps.forEach((s) => s.kind === "index" && visit(s.key));
        break;
      case "template":
        e.parts.forEach((p) => typeof p !== "string" && visit(p));
        break;
      case "tuple":
        e.items.forEach(visit);
        break;
      case "object":
        e.items.forEach((i) => (visit(i.key), visit(i.value)));
        break;
      case "call":
        e.args.forEach(visit);
        break;
      case "unary":
        visit(e.operand);
        break;
      case "binary":
        visit(e.left);
        visit(e.right);
        break;
      case "conditional":
        visit(e.cond);
        visit(e.then);
        visit(e.else);
        break;
      case "literal":
        break;
    }
  };
  visit(expr);
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
  const fail = (msg: string): never => {
    throw new ConfigError(msg, expr.range);
  };
  switch (expr.kind) {
    case "literal":
      return expr.value;
    case "template": {
      if (expr.parts.length === 1 && typeof expr.parts[0] !== "string") return evaluate(expr.parts[0]!, scope);
      let out = "";
      for (const p of expr.parts) {
        if (typeof p === "string") {
          out += p;
          continue;
        }
        const v = evaluate(p, scope);
        if (isUnknown(v)) return U;
        try {
          out += toStringValue(v);
        } catch (e) {
          throw new ConfigError(`Invalid template interpolation value: ${(e as Error).message.replace(/^Invalid value: /, "")}`, p.range);
        }
      }
      return out;
    }
    case "tuple":
      return expr.items.map((i) => evaluate(i, scope));
    case "object": {
      const out: Record<string, Value> = {};
      for (const { key, value } of expr.items) {
        const k = evaluate(key, scope);
        if (isUnknown(k)) return U;
        if (typeof k !== "string" && typeof k !== "number") fail(`Invalid object key: a key must be a string, not ${typeName(k)}`);
        out[String(k)] = evaluate(value, scope);
      }
      return out;
    }
    case "scope":
      return applySteps(rootValue(expr, scope), expr.steps.slice(stepsConsumed(expr)), scope, expr.range);
    case "postfix":
      return applySteps(evaluate(expr.target, scope), expr.steps, scope, expr.range);
    case "call": {
      const args = expr.args.map((a) => evaluate(a, scope));
      try {
        return callFunction(expr.name, args);
      } catch (e) {
        if (e instanceof ConfigError) throw e;
        return fail(`${(e as Error).message} (in call to ${expr.name})`);
      }
    }
    case "unary": {
      const v = evaluate(expr.operand, scope);
      if (isUnknown(v)) return U;
      if (expr.op === "!") return !asBool(v, expr.range);
      return -asNumber(v, expr.range);
    }
    case "binary":
      return binary(expr.op, expr, scope);
    case "conditional": {
      const c = evaluate(expr.cond, scope);
      if (isUnknown(c)) return U;
      return asBool(c, expr.cond.range) ? evaluate(expr.then, scope) : evaluate(expr.else, scope);
    }
  }
}

function stepsConsumed(expr: Extract<Expr, { kind: "scope" }>): number {
  if (expr.root === "count" || expr.root === "path" || expr.root === "terraform") return 1;
  if (expr.root === "var" || expr.root === "local") return 1;
  if (expr.root === "data") return 2; // data + type + name
  return 1; // resource: type + name
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
      return ".";
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

function applySteps(value: Value, steps: TraversalStep[], scope: EvalScope, range: SourceRange): Value {
  let v = value;
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i]!;
    if (isUnknown(v)) return U;
    if (step.kind === "splat") {
      const items = v === null ? [] : Array.isArray(v) ? v : [v];
      const rest = steps.slice(i + 1);
      return items.map((item) => applySteps(item, rest, scope, range));
    }
    const key = step.kind === "attr" ? step.name : evaluate(step.key, scope);
    if (isUnknown(key)) return U;
    if (v === null) throw new ConfigError(`Attempt to get attribute from null value: this value is null, so it has no "${String(key)}"`, range);
    if (Array.isArray(v)) {
      if (typeof key !== "number" && !(typeof key === "string" && /^\d+$/.test(key))) {
        throw new ConfigError(`Invalid index: a list must be indexed by a number, not ${JSON.stringify(key)}`, range);
      }
      const idx = Number(key);
      if (idx < 0 || idx >= v.length) throw new ConfigError(`Invalid index: the index ${idx} is out of range for a list of ${v.length} elements`, range);
      v = v[idx]!;
    } else if (isObject(v)) {
      const k = String(key);
      if (!(k in v)) throw new ConfigError(`Unsupported attribute: this object does not have an attribute named "${k}"`, range);
      v = v[k]!;
    } else {
      throw new ConfigError(`Unsupported attribute: a ${typeName(v)} value has no attribute "${String(key)}"`, range);
    }
  }
  return v;
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

function binary(op: Extract<Expr, { kind: "binary" }>["op"], expr: Extract<Expr, { kind: "binary" }>, scope: EvalScope): Value {
  // && and || short-circuit only when the left side decides the answer.
  const l = evaluate(expr.left, scope);
  if (op === "&&" || op === "||") {
    if (!isUnknown(l) && asBool(l, expr.left.range) === (op === "||")) return op === "||";
    const r = evaluate(expr.right, scope);
    if (isUnknown(l) || isUnknown(r)) return U;
    return asBool(r, expr.right.range);
  }
  const r = evaluate(expr.right, scope);
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
}
