// JSON with object keys sorted: equal documents always give equal bytes, whatever order their keys
// arrived in (the engine's plans, and state checksums that survive Postgres jsonb's reordering).

/** JSON with object keys sorted, so equal values always give equal bytes. */
export function canonicalJson(v: unknown): string {
  if (v === undefined) return "null";
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  if (typeof v === "object" && v !== null) {
    const obj = v as Record<string, unknown>;
    const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(",")}}`;
  }
  return JSON.stringify(v);
}
