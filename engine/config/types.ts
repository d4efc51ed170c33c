// Type constraints of variable blocks (`type = …`) and conversion of values to them, as OpenTofu
// converts input values: primitives convert between each other where the text allows, objects
// drop attributes they do not declare, optional attributes take their defaults.
import type { Expr } from "./ast";
import { toSet } from "./function-args";
import { ConfigError } from "../errors";
import { isObject, isUnknown, type Value } from "../values";

export type TypeConstraint =
  | "string"
  | "number"
  | "bool"
  | "any"
  | { list: TypeConstraint }
  | { set: TypeConstraint }
  | { map: TypeConstraint }
  | { tuple: TypeConstraint[] }
  | { object: Record<string, TypeConstraint>; optional?: Record<string, { default?: Value }> };

export type TypeKind = "string" | "number" | "bool" | "list" | "map" | "object" | "any";

const PRIMITIVES = ["string", "number", "bool", "any"];

/** Decodes a type expression; `literal` evaluates optional() defaults. */
export function decodeType(expr: Expr, literal: (e: Expr) => Value): TypeConstraint {
  const bad = (): never => {
    throw new ConfigError(
      "Invalid type specification: use string, number, bool, any, list(T), set(T), map(T), tuple([…]), object({…}) or optional(T) inside an object",
      expr.range,
    );
  };
  if (expr.kind === "scope" && expr.steps.length === 0 && PRIMITIVES.includes(expr.root)) return expr.root as TypeConstraint;
  if (expr.kind !== "call") return bad();
  const [arg] = expr.args;
  if (["list", "set", "map"].includes(expr.name) && expr.args.length === 1) {
    const inner = decodeType(arg!, literal);
    return expr.name === "list" ? { list: inner } : expr.name === "set" ? { set: inner } : { map: inner };
  }
  if (expr.name === "tuple" && expr.args.length === 1 && arg!.kind === "tuple") return { tuple: arg!.items.map((i) => decodeType(i, literal)) };
  if (expr.name === "object" && expr.args.length === 1 && arg!.kind === "object") {
    const fields: Record<string, TypeConstraint> = {};
    const optional: Record<string, { default?: Value }> = {};
    for (const item of arg!.items) {
      const name = String(literal(item.key));
      const v = item.value;
      if (v.kind === "call" && v.name === "optional") {
        if (v.args.length < 1 || v.args.length > 2) throw new ConfigError("Invalid type specification: optional() takes a type and, optionally, a default value", v.range);
        fields[name] = decodeType(v.args[0]!, literal);
        optional[name] = v.args.length === 2 ? { default: convertValue(literal(v.args[1]!), fields[name]!) } : {};
      } else fields[name] = decodeType(v, literal);
    }
    return Object.keys(optional).length ? { object: fields, optional } : { object: fields };
  }
  if (expr.name === "optional") throw new ConfigError("Invalid type specification: optional() is allowed only for an attribute of an object type", expr.range);
  return bad();
}

/** A type constraint written out as in a module. */
export function typeString(t: TypeConstraint): string {
  if (typeof t === "string") return t;
  if ("list" in t) return `list(${typeString(t.list)})`;
  if ("set" in t) return `set(${typeString(t.set)})`;
  if ("map" in t) return `map(${typeString(t.map)})`;
  if ("tuple" in t) return `tuple([${t.tuple.map(typeString).join(", ")}])`;
  const attrs = Object.entries(t.object).map(([k, ft]) => {
    const opt = t.optional?.[k];
    if (!opt) return `${k} = ${typeString(ft)}`;
    return `${k} = optional(${typeString(ft)}${"default" in opt ? `, ${JSON.stringify(opt.default)}` : ""})`;
  });
  return `object({ ${attrs.join(", ")} })`;
}

export function typeKind(t: TypeConstraint): TypeKind {
  if (typeof t === "string") return t;
  if ("list" in t || "set" in t || "tuple" in t) return "list";
  if ("map" in t) return "map";
  return "object";
}

/** A value that does not fit a type; `path` is OpenTofu's prefix (`element 0: `, `attribute "a": `). */
export class TypeConversionError extends Error {}

const describeType = (t: TypeConstraint): string => (typeof t === "string" ? t : typeKind(t) === "object" ? "object" : typeString(t).replace(/\((.*)\)$/, " of $1"));

/** Converts a value to a type constraint, or throws a TypeConversionError in OpenTofu's words. */
export function convertValue(v: Value, t: TypeConstraint, path = ""): Value {
  if (v === null || isUnknown(v) || t === "any") return v;
  const fail = (what: string): never => {
    throw new TypeConversionError(`${path}${what}`);
  };
  if (t === "string") {
    if (typeof v === "string") return v;
    if (typeof v === "number" || typeof v === "boolean") return String(v);
    return fail("string required");
  }
  if (t === "number") {
    if (typeof v === "number") return v;
    if (typeof v === "string" && /^\s*-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(v)) return Number(v);
    return fail("a number is required");
  }
  if (t === "bool") {
    if (typeof v === "boolean") return v;
    if (v === "true" || v === "false") return v === "true";
    return fail("a bool is required");
  }
  if ("list" in t || "set" in t) {
    const elem = "list" in t ? t.list : t.set;
    if (!Array.isArray(v)) return fail(`${describeType(t)} required`);
    const out = v.map((x, i) => convertValue(x, elem, `${path}element ${i}: `));
    return "list" in t ? out : toSet(out);
  }
  if ("tuple" in t) {
    if (!Array.isArray(v)) return fail("tuple required");
    if (v.length !== t.tuple.length) return fail(`tuple required with ${t.tuple.length} elements, not ${v.length}`);
    return v.map((x, i) => convertValue(x, t.tuple[i]!, `${path}element ${i}: `));
  }
  if (!isObject(v)) return fail(`${describeType(t)} required`);
  if ("map" in t) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, convertValue(x, t.map, `${path}element ${JSON.stringify(k)}: `)]));
  const out: Record<string, Value> = {};
  for (const [k, ft] of Object.entries(t.object)) {
    const opt = t.optional?.[k];
    if (!(k in v)) {
      if (!opt) return fail(`attribute ${JSON.stringify(k)} is required`);
      out[k] = opt.default ?? null;
      continue;
    }
    const x = v[k]!;
    out[k] = x === null && opt?.default !== undefined ? opt.default : convertValue(x, ft, `${path}attribute ${JSON.stringify(k)}: `);
  }
  return out;
}
