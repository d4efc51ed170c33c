/**
 * Values the engine passes around are plain JSON, so a provider could live in another process.
 * A value not known until apply is the marker object {"__unknown__": true}.
 */
export type Value = string | number | boolean | null | Value[] | { [key: string]: Value };
export type Attrs = { [key: string]: Value };

export const UNKNOWN: { __unknown__: true } = Object.freeze({ __unknown__: true as const });

export function isUnknown(v: unknown): boolean {
  return typeof v === "object" && v !== null && (v as { __unknown__?: unknown }).__unknown__ === true;
}

/** True when the value or anything inside it is unknown. */
export function containsUnknown(v: unknown): boolean {
  if (isUnknown(v)) return true;
  if (Array.isArray(v)) return v.some(containsUnknown);
  if (typeof v === "object" && v !== null) return Object.values(v).some(containsUnknown);
  return false;
}

export function isObject(v: unknown): v is { [key: string]: Value } {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !isUnknown(v);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

export { canonicalJson } from "../lib/canonical-json";

/** Splits a value with unknowns into (value with unknowns as null, mask of unknowns), like plan JSON's after_unknown. */
export function splitUnknowns(v: Value): { known: Value; unknown: Value } {
  if (isUnknown(v)) return { known: null, unknown: true };
  if (Array.isArray(v)) {
    const parts = v.map(splitUnknowns);
    return { known: parts.map((p) => p.known), unknown: parts.map((p) => p.unknown) };
  }
  if (isObject(v)) {
    const known: Attrs = {};
    const unknown: Attrs = {};
    for (const [k, x] of Object.entries(v)) {
      const p = splitUnknowns(x);
      known[k] = p.known;
      if (p.unknown !== false && !(isObject(p.unknown) && Object.keys(p.unknown).length === 0)) unknown[k] = p.unknown;
    }
    return { known, unknown };
  }
  return { known: v, unknown: false };
}

/** Inverse of splitUnknowns. */
export function joinUnknowns(known: Value, mask: Value | undefined): Value {
  if (mask === true) return UNKNOWN as unknown as Value;
  if (Array.isArray(known) && Array.isArray(mask)) return known.map((k, i) => joinUnknowns(k, mask[i]));
  if (isObject(known) && isObject(mask)) {
    const out: Attrs = {};
    for (const [k, x] of Object.entries(known)) out[k] = joinUnknowns(x, mask[k]);
    return out;
  }
  return known;
}

/** OpenTofu's JSON type notation for a value: "string", ["list","string"], ["object",{...}]… */
export function ctyType(v: Value): unknown {
  if (v === null) return "dynamic";
  if (typeof v === "string") return "string";
  if (typeof v === "number") return "number";
  if (typeof v === "boolean") return "bool";
  if (Array.isArray(v)) return ["tuple", v.map(ctyType)];
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = ctyType(x);
  return ["object", out];
}

export function typeName(v: unknown): string {
  if (v === null) return "null";
  if (isUnknown(v)) return "unknown";
  if (Array.isArray(v)) return "list";
  if (typeof v === "object") return "object";
  return typeof v === "boolean" ? "bool" : typeof v;
}
