import { secretNameOf } from "../lib/secrets";
import type { JobClient } from "./client";
import type { Redactor } from "./redact";

/** Replaces every `$secret/<name>` reference in the component's variables with its value from the server. */
export async function resolveVariables(vars: Record<string, unknown>, job: JobClient, redactor: Redactor): Promise<Record<string, unknown>> {
  const cache = new Map<string, string>();
  const resolve = async (v: unknown): Promise<unknown> => {
    if (typeof v === "string") {
      const name = secretNameOf(v);
      if (!name) return v;
      if (!cache.has(name)) {
        const value = await job.secret(name);
        redactor.add(value);
        cache.set(name, value);
      }
      return cache.get(name);
    }
    if (Array.isArray(v)) return Promise.all(v.map(resolve));
    if (v !== null && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = await resolve(x);
      return out;
    }
    return v;
  };
  return (await resolve(vars)) as Record<string, unknown>;
}
