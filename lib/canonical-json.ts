// JSON with object keys sorted: equal documents always give equal bytes, whatever order their keys
// arrived in (the engine's plans, and state checksums that survive Postgres jsonb's reordering).

/**
 * JSON with object keys sorted, so equal values always give equal bytes. Built in loops over one string, not with
 * map and join (about a quarter less CPU: a state move canonicalizes every state it copies); the output is the same.
 */
export function canonicalJson(v: unknown): string {
  if (typeof v !== "object" || v === null) return v === undefined ? "null" : JSON.stringify(v);
  if (Array.isArray(v)) {
    let out = "[";
    for (let i = 0; i < v.length; i++) {
      if (i > 0) out += ",";
      if (i in v) out += canonicalJson(v[i]);
    }
    return `${out}]`;
  }
  const obj = v as Record<string, unknown>;
  const keys = Object.keys(obj).sort();
  let out = "{";
  let first = true;
  for (const k of keys) {
    const value = obj[k];
    if (value === undefined) continue;
    if (!first) out += ",";
    first = false;
    out += `${JSON.stringify(k)}:${canonicalJson(value)}`;
  }
  return `${out}}`;
}
