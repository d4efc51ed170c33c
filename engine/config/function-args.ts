// Argument checks shared by the function library, with errors in OpenTofu's words.
import { isObject, typeName, type Value } from "../values";

/** A function's failure; callFunction words it as OpenTofu does ("Invalid function argument" / "Error in function call"). */
export class FunctionError extends Error {
  constructor(
    message: string,
    /** The parameter whose value is wrong; unset for a failure of the call as a whole. */
    readonly param?: string,
  ) {
    super(message);
  }
}

/** What a function sees besides its arguments. */
export interface FunctionContext {
  /** The module's files by relative path; the filesystem functions read only these. */
  files?: Record<string, string>;
}

export type Fn = {
  params: string[];
  /** The name of a variadic final parameter. */
  variadic?: string;
  call: (args: Value[], ctx: FunctionContext) => Value;
};

export const argError = (param: string, message: string): FunctionError => new FunctionError(message, param);
export const callError = (message: string): FunctionError => new FunctionError(message);

/** OpenTofu's name for a value's type in a conversion error. */
export function friendlyType(v: Value): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "tuple";
  if (isObject(v)) return "object";
  return typeName(v);
}

export function str(v: Value, param: string): string {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (v === null) throw argError(param, "argument must not be null.");
  throw argError(param, "string required.");
}

export function num(v: Value, param: string): number {
  if (typeof v === "number") return v;
  if (typeof v === "string" && v.trim() !== "" && !Number.isNaN(Number(v))) return Number(v);
  if (v === null) throw argError(param, "argument must not be null.");
  throw argError(param, typeof v === "string" ? `a number is required, not the string ${JSON.stringify(v)}.` : "number required.");
}

export function int(v: Value, param: string): number {
  const n = num(v, param);
  if (!Number.isInteger(n)) throw argError(param, `value must be a whole number, got ${n}.`);
  return n;
}

export function bool(v: Value, param: string): boolean {
  if (typeof v === "boolean") return v;
  if (v === "true" || v === "false") return v === "true";
  if (v === null) throw argError(param, "argument must not be null.");
  throw argError(param, "bool required.");
}

export function list(v: Value, param: string): Value[] {
  if (Array.isArray(v)) return v;
  if (v === null) throw argError(param, "argument must not be null.");
  throw argError(param, `list of any single type required, not ${friendlyType(v)}.`);
}

export function map(v: Value, param: string): { [k: string]: Value } {
  if (isObject(v)) return v;
  if (v === null) throw argError(param, "argument must not be null.");
  throw argError(param, `map of any single type required, not ${friendlyType(v)}.`);
}

/** A value as text inside a string, as OpenTofu converts a primitive to string. */
export function toStringValue(v: Value): string {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (v === null) throw new Error("Invalid value: a null value cannot be used as a string");
  throw new Error(`Invalid value: a ${typeName(v)} cannot be converted to a string`);
}

/** Sets are lists without duplicates; OpenTofu orders sets of strings lexically and sets of numbers numerically. */
export function toSet(items: Value[]): Value[] {
  const out: Value[] = [];
  const seen = new Set<string>();
  for (const x of items) {
    const k = JSON.stringify(canonical(x));
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(x);
  }
  if (out.every((x) => typeof x === "number")) return (out as number[]).sort((a, b) => a - b);
  if (out.every((x) => typeof x === "string")) return (out as string[]).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return out;
}

/** A value with object keys sorted, as OpenTofu orders object attributes. */
export function canonical(v: Value): Value {
  if (Array.isArray(v)) return v.map(canonical);
  if (isObject(v)) return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical(v[k]!)]));
  return v;
}

export const sameValue = (a: Value, b: Value): boolean => JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
