// Collection functions of OpenTofu's standard library. Sets are lists without duplicates (see toSet).
import { argError, callError, friendlyType, int, list, map, num, sameValue, str, toSet, type Fn } from "./function-args";
import { isObject, type Value } from "../values";

function flatten(items: Value[]): Value[] {
  return items.flatMap((x) => (Array.isArray(x) ? flatten(x) : [x]));
}

/** Converts a list's elements to one type, as OpenTofu does when a tuple becomes a list or an object a map. */
function unify(items: Value[], param: string, what: string): Value[] {
  const kinds = new Set(items.filter((x) => x !== null).map((x) => (Array.isArray(x) ? "list" : isObject(x) ? "object" : "primitive")));
  if (kinds.size > 1) throw argError(param, `cannot convert ${what} to ${what === "object" ? "map" : "list"} of any single type.`);
  const prims = items.filter((x) => x !== null && typeof x !== "object");
  if (new Set(prims.map((x) => typeof x)).size > 1) return items.map((x) => (x === null || typeof x === "object" ? x : String(x)));
  return items;
}

function truthy(v: Value, param: string): boolean {
  if (v === true || v === "true") return true;
  if (v === false || v === "false") return false;
  if (v === null) throw argError(param, "element must not be null.");
  throw argError(param, "list of bool required.");
}

export const COLLECTION_FUNCTIONS: Record<string, Fn> = {
  length: {
    params: ["value"],
    call: ([v]) => {
      if (typeof v === "string") return [...v.normalize("NFC")].length;
      if (Array.isArray(v)) return v.length;
      if (isObject(v)) return Object.keys(v).length;
      if (v === null) throw argError("value", "argument must not be null.");
      throw argError("value", "collection or structural type is required.");
    },
  },
  concat: { params: [], variadic: "seqs", call: (a) => a.flatMap((x) => list(x, "seqs")) },
  contains: { params: ["list", "value"], call: ([l, v]) => list(l!, "list").some((x) => sameValue(x, v!)) },
  distinct: {
    params: ["list"],
    call: ([l]) => {
      const out: Value[] = [];
      for (const x of list(l!, "list")) if (!out.some((y) => sameValue(x, y))) out.push(x);
      return out;
    },
  },
  element: {
    params: ["list", "index"],
    call: ([l, i]) => {
      const items = list(l!, "list");
      const idx = int(i!, "index");
      if (items.length === 0) throw callError("cannot use element function with an empty list.");
      if (idx < 0) throw callError("cannot use element function with a negative index.");
      return items[idx % items.length]!;
    },
  },
  flatten: { params: ["list"], call: ([l]) => flatten(list(l!, "list")) },
  keys: { params: ["inputMap"], call: ([m]) => Object.keys(map(m!, "inputMap")).sort() },
  values: {
    params: ["mapping"],
    call: ([m]) => {
      const o = map(m!, "mapping");
      return Object.keys(o).sort().map((k) => o[k]!);
    },
  },
  lookup: {
    params: ["inputMap", "key"],
    variadic: "default",
    call: ([m, k, ...def]) => {
      if (def.length > 1) throw callError("lookup() takes at most three arguments.");
      const o = map(m!, "inputMap");
      const key = str(k!, "key");
      if (key in o) return o[key]!;
      if (def.length === 1) return def[0]!;
      throw callError(`lookup failed to find key ${JSON.stringify(key)}.`);
    },
  },
  merge: {
    params: [],
    variadic: "maps",
    call: (a) => {
      const out: Record<string, Value> = {};
      for (const x of a) if (x !== null) Object.assign(out, map(x, "maps"));
      return out;
    },
  },
  range: {
    params: [],
    variadic: "params",
    call: (a) => {
      if (a.length < 1 || a.length > 3) throw argError("params", "must have one, two, or three arguments.");
      const n = a.map((x) => num(x, "params"));
      const [start, limit, step] = n.length === 1 ? [0, n[0]!, 1] : [n[0]!, n[1]!, n[2] ?? (n[1]! >= n[0]! ? 1 : -1)];
      if (step === 0) throw argError("params", "step must not be zero.");
      if ((step > 0 && limit < start) || (step < 0 && limit > start)) throw argError("params", `step must be ${step > 0 ? "negative" : "positive"} when the start is ${step > 0 ? "greater" : "less"} than the limit.`);
      const out: number[] = [];
      for (let v = start; step > 0 ? v < limit : v > limit; v += step) {
        if (out.length >= 1024) throw callError("more than 1024 values were generated; either decrease the difference between start and end or use a smaller step.");
        out.push(v);
      }
      return out;
    },
  },
  reverse: { params: ["list"], call: ([l]) => [...list(l!, "list")].reverse() },
  setproduct: {
    params: [],
    variadic: "sets",
    call: (a) => {
      if (a.length < 2) throw callError("at least two arguments are required.");
      return a.map((x) => list(x, "sets")).reduce<Value[][]>((acc, s) => acc.flatMap((p) => s.map((x) => [...p, x])), [[]]);
    },
  },
  setunion: { params: [], variadic: "sets", call: (a) => toSet(a.flatMap((x) => list(x, "sets"))) },
  setintersection: {
    params: [],
    variadic: "sets",
    call: ([first, ...rest]) => toSet(list(first ?? [], "sets").filter((x) => rest.every((s) => list(s, "sets").some((y) => sameValue(x, y))))),
  },
  setsubtract: { params: ["a", "b"], call: ([a, b]) => toSet(list(a!, "a").filter((x) => !list(b!, "b").some((y) => sameValue(x, y)))) },
  slice: {
    params: ["list", "start_index", "end_index"],
    call: ([l, s, e]) => {
      const items = list(l!, "list");
      const start = int(s!, "start_index");
      const end = int(e!, "end_index");
      if (start < 0) throw argError("start_index", "start index must not be less than zero.");
      if (end > items.length) throw argError("end_index", "end index must not be greater than the length of the list.");
      if (start > end) throw argError("start_index", "start index must not be greater than end index.");
      return items.slice(start, end);
    },
  },
  sort: {
    params: ["list"],
    call: ([l]) =>
      list(l!, "list")
        .map((x, i) => {
          if (x === null) throw argError("list", `given list element ${i} is null; a null string cannot be sorted.`);
          if (typeof x === "object") throw argError("list", "list of string required.");
          return String(x);
        })
        .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
  },
  zipmap: {
    params: ["keys", "values"],
    call: ([k, v]) => {
      const ks = list(k!, "keys");
      const vs = list(v!, "values");
      if (ks.length !== vs.length) throw callError(`number of keys (${ks.length}) does not match number of values (${vs.length}).`);
      return Object.fromEntries(ks.map((key, i) => [str(key, "keys"), vs[i]!]));
    },
  },
  one: {
    params: ["list"],
    call: ([l]) => {
      const items = list(l!, "list");
      if (items.length > 1) throw argError("list", "must be a list, set, or tuple value with either zero or one elements.");
      return items[0] ?? null;
    },
  },
  coalesce: {
    params: [],
    variadic: "vals",
    call: (a) => {
      const v = a.find((x) => x !== null && x !== "");
      if (v === undefined) throw callError("no non-null, non-empty-string arguments.");
      return v;
    },
  },
  coalescelist: {
    params: [],
    variadic: "vals",
    call: (a) => {
      if (a.length === 0) throw callError("at least one argument is required.");
      for (const x of a) if (x !== null && list(x, "vals").length > 0) return x;
      return [];
    },
  },
  compact: { params: ["list"], call: ([l]) => list(l!, "list").filter((x) => x !== null && x !== "") },
  index: {
    params: ["list", "value"],
    call: ([l, v]) => {
      const i = list(l!, "list").findIndex((x) => sameValue(x, v!));
      if (i < 0) throw callError("item not found.");
      return i;
    },
  },
  alltrue: { params: ["list"], call: ([l]) => list(l!, "list").every((x) => truthy(x, "list")) },
  anytrue: { params: ["list"], call: ([l]) => list(l!, "list").map((x) => truthy(x, "list")).some(Boolean) },
  sum: {
    params: ["list"],
    call: ([l]) => {
      const items = list(l!, "list");
      if (items.length === 0) throw argError("list", "cannot sum an empty list.");
      return items.reduce<number>((a, x, i) => {
        if (x === null) throw argError("list", `argument ${i} is null.`);
        return a + num(x, "list");
      }, 0);
    },
  },
  tolist: {
    params: ["v"],
    call: ([v]) => {
      if (v === null) return null;
      if (!Array.isArray(v)) throw argError("v", `cannot convert ${friendlyType(v)} to list of any single type.`);
      return unify(v, "v", "tuple");
    },
  },
  toset: {
    params: ["v"],
    call: ([v]) => {
      if (v === null) return null;
      if (!Array.isArray(v)) throw argError("v", `cannot convert ${friendlyType(v)} to set of any single type.`);
      return toSet(unify(v, "v", "tuple"));
    },
  },
  tomap: {
    params: ["v"],
    call: ([v]) => {
      if (v === null) return null;
      if (!isObject(v)) throw argError("v", `cannot convert ${friendlyType(v)} to map of any single type.`);
      const keys = Object.keys(v).sort();
      const vals = unify(keys.map((k) => v[k]!), "v", "object");
      return Object.fromEntries(keys.map((k, i) => [k, vals[i]!]));
    },
  },
};
