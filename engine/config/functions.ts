import { createHash } from "node:crypto";
import { containsUnknown, isObject, UNKNOWN, typeName, type Value } from "../values";

/** Built-in functions. Each receives already-evaluated arguments; unknown arguments give an unknown result. */
type Fn = { minArgs: number; maxArgs: number; call: (args: Value[]) => Value; acceptsUnknown?: boolean };

function str(v: Value, fn: string, pos: number): string {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  throw new Error(`Invalid function argument: ${fn} argument ${pos} must be a string, not ${typeName(v)}`);
}
function num(v: Value, fn: string, pos: number): number {
  if (typeof v === "number") return v;
  if (typeof v === "string" && v.trim() !== "" && !Number.isNaN(Number(v))) return Number(v);
  throw new Error(`Invalid function argument: ${fn} argument ${pos} must be a number, not ${typeName(v)}`);
}
function list(v: Value, fn: string, pos: number): Value[] {
  if (Array.isArray(v)) return v;
  throw new Error(`Invalid function argument: ${fn} argument ${pos} must be a list, not ${typeName(v)}`);
}
function map(v: Value, fn: string, pos: number): { [k: string]: Value } {
  if (isObject(v)) return v;
  throw new Error(`Invalid function argument: ${fn} argument ${pos} must be a map or object, not ${typeName(v)}`);
}
const hash = (algo: string) => (args: Value[]) => createHash(algo).update(str(args[0]!, algo, 1)).digest("hex");

export function toStringValue(v: Value): string {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (v === null) throw new Error("Invalid value: a null value cannot be used as a string");
  throw new Error(`Invalid value: a ${typeName(v)} cannot be converted to a string`);
}

function format(args: Value[]): string {
  const fmt = str(args[0]!, "format", 1);
  let argi = 1;
  return fmt.replace(/%(%|[-+ 0#]*\d*(?:\.\d+)?[sdvqft])/g, (m, spec: string) => {
    if (spec === "%") return "%";
    const verb = spec[spec.length - 1];
    if (argi >= args.length) throw new Error(`Error in function call: format has too few arguments for "${fmt}"`);
    const a = args[argi++]!;
    const precision = /\.(\d+)/.exec(spec)?.[1];
    switch (verb) {
      case "s":
        return toStringValue(a);
      case "d":
        return String(Math.trunc(num(a, "format", argi)));
      case "f":
        return num(a, "format", argi).toFixed(precision ? Number(precision) : 6);
      case "q":
        return JSON.stringify(toStringValue(a));
      case "t":
        return String(a === true);
      default:
        return typeof a === "string" ? a : JSON.stringify(a);
    }
  });
}

export const FUNCTIONS: Record<string, Fn> = {
  upper: { minArgs: 1, maxArgs: 1, call: (a) => str(a[0]!, "upper", 1).toUpperCase() },
  lower: { minArgs: 1, maxArgs: 1, call: (a) => str(a[0]!, "lower", 1).toLowerCase() },
  trimspace: { minArgs: 1, maxArgs: 1, call: (a) => str(a[0]!, "trimspace", 1).trim() },
  join: { minArgs: 2, maxArgs: 2, call: (a) => list(a[1]!, "join", 2).map((x) => toStringValue(x)).join(str(a[0]!, "join", 1)) },
  split: { minArgs: 2, maxArgs: 2, call: (a) => str(a[1]!, "split", 2).split(str(a[0]!, "split", 1)) },
  format: { minArgs: 1, maxArgs: Infinity, call: format },
  length: {
    minArgs: 1,
    maxArgs: 1,
    call: ([v]) => {
      if (typeof v === "string") return [...v].length;
      if (Array.isArray(v)) return v.length;
      if (isObject(v)) return Object.keys(v).length;
      throw new Error(`Invalid function argument: length needs a string, list or map, not ${typeName(v)}`);
    },
  },
  sha256: { minArgs: 1, maxArgs: 1, call: hash("sha256") },
  sha1: { minArgs: 1, maxArgs: 1, call: hash("sha1") },
  md5: { minArgs: 1, maxArgs: 1, call: hash("md5") },
  jsonencode: { minArgs: 1, maxArgs: 1, call: ([v]) => JSON.stringify(v) },
  jsondecode: { minArgs: 1, maxArgs: 1, call: ([v]) => JSON.parse(str(v!, "jsondecode", 1)) as Value },
  base64encode: { minArgs: 1, maxArgs: 1, call: ([v]) => Buffer.from(str(v!, "base64encode", 1), "utf8").toString("base64") },
  base64decode: { minArgs: 1, maxArgs: 1, call: ([v]) => Buffer.from(str(v!, "base64decode", 1), "base64").toString("utf8") },
  concat: { minArgs: 0, maxArgs: Infinity, call: (a) => a.flatMap((x, i) => list(x, "concat", i + 1)) },
  lookup: {
    minArgs: 2,
    maxArgs: 3,
    call: (a) => {
      const m = map(a[0]!, "lookup", 1);
      const k = str(a[1]!, "lookup", 2);
      if (k in m) return m[k]!;
      if (a.length === 3) return a[2]!;
      throw new Error(`Error in function call: lookup failed to find key "${k}" and no default was given`);
    },
  },
  coalesce: {
    minArgs: 1,
    maxArgs: Infinity,
    call: (a) => {
      const v = a.find((x) => x !== null && x !== "");
      if (v === undefined) throw new Error("Error in function call: coalesce found no non-null, non-empty argument");
      return v;
    },
  },
  tostring: { minArgs: 1, maxArgs: 1, call: ([v]) => (v === null ? null : toStringValue(v!)) },
  tonumber: { minArgs: 1, maxArgs: 1, call: ([v]) => (v === null ? null : num(v!, "tonumber", 1)) },
  tobool: {
    minArgs: 1,
    maxArgs: 1,
    call: ([v]) => {
      if (v === null || typeof v === "boolean") return v;
      if (v === "true" || v === "false") return v === "true";
      throw new Error(`Invalid function argument: cannot convert ${JSON.stringify(v)} to bool`);
    },
  },
  replace: {
    minArgs: 3,
    maxArgs: 3,
    call: (a) => {
      const s = str(a[0]!, "replace", 1);
      const find = str(a[1]!, "replace", 2);
      const repl = str(a[2]!, "replace", 3);
      if (find.length > 1 && find.startsWith("/") && find.endsWith("/")) {
        return s.replace(new RegExp(find.slice(1, -1), "g"), repl.replace(/\$\{(\d+)\}/g, "$$$1"));
      }
      return s.split(find).join(repl);
    },
  },
  substr: {
    minArgs: 3,
    maxArgs: 3,
    call: (a) => {
      const chars = [...str(a[0]!, "substr", 1)];
      let off = num(a[1]!, "substr", 2);
      const len = num(a[2]!, "substr", 3);
      if (off < 0) off = Math.max(0, chars.length + off);
      return chars.slice(off, len < 0 ? undefined : off + len).join("");
    },
  },
  keys: { minArgs: 1, maxArgs: 1, call: ([m]) => Object.keys(map(m!, "keys", 1)).sort() },
  values: { minArgs: 1, maxArgs: 1, call: ([m]) => Object.keys(map(m!, "values", 1)).sort().map((k) => (m as Record<string, Value>)[k]!) },
  merge: { minArgs: 0, maxArgs: Infinity, call: (a) => Object.assign({}, ...a.filter((x) => x !== null).map((x, i) => map(x, "merge", i + 1))) },
  contains: { minArgs: 2, maxArgs: 2, call: (a) => list(a[0]!, "contains", 1).some((x) => JSON.stringify(x) === JSON.stringify(a[1])) },
  element: {
    minArgs: 2,
    maxArgs: 2,
    call: (a) => {
      const l = list(a[0]!, "element", 1);
      if (l.length === 0) throw new Error("Error in function call: cannot use element function with an empty list");
      return l[num(a[1]!, "element", 2) % l.length]!;
    },
  },
  min: { minArgs: 1, maxArgs: Infinity, call: (a) => Math.min(...a.map((x, i) => num(x, "min", i + 1))) },
  max: { minArgs: 1, maxArgs: Infinity, call: (a) => Math.max(...a.map((x, i) => num(x, "max", i + 1))) },
  abs: { minArgs: 1, maxArgs: 1, call: ([v]) => Math.abs(num(v!, "abs", 1)) },
  floor: { minArgs: 1, maxArgs: 1, call: ([v]) => Math.floor(num(v!, "floor", 1)) },
  ceil: { minArgs: 1, maxArgs: 1, call: ([v]) => Math.ceil(num(v!, "ceil", 1)) },
};

export function callFunction(name: string, args: Value[]): Value {
  const fn = FUNCTIONS[name];
  if (!fn) {
    const hint = name === "file" ? " (the builtin engine does not read files from expressions; put the text in the module)" : "";
    throw new Error(`Call to unknown function: there is no function named "${name}"${hint}`);
  }
  if (args.length < fn.minArgs || args.length > fn.maxArgs) {
    const want = fn.maxArgs === Infinity ? `at least ${fn.minArgs}` : fn.minArgs === fn.maxArgs ? `${fn.minArgs}` : `${fn.minArgs} to ${fn.maxArgs}`;
    throw new Error(`Invalid function call: ${name} takes ${want} argument(s), got ${args.length}`);
  }
  // coalesce can decide with a leading known value; everything else waits for all arguments.
  if (args.some(containsUnknown)) return UNKNOWN as unknown as Value;
  return fn.call(args);
}
