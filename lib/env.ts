// Reading environment variables through zod: each one's text is checked at start, and a bad value is
// refused with a message that names the variable, what is wrong with its value and a good example.
import { z } from "zod";

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

/** One environment variable: how its text is read (unset is `undefined`), an example of a good value, and what it means. */
export interface EnvVar<T = unknown> {
  schema: z.ZodType<T, string | undefined>;
  example: string;
  meaning: string;
  /** How a refused value is quoted back: a secret's never is (secretEnvVar), a URL's password is masked (shownUrl). */
  shown?: (text: string) => string;
}

export type EnvSpec = Record<string, EnvVar>;
export type EnvValues<S extends EnvSpec> = { [K in keyof S]: S[K] extends EnvVar<infer T> ? T : never };

export const envVar = <T>(schema: z.ZodType<T, string | undefined>, example: string, meaning: string, shown?: (text: string) => string): EnvVar<T> => ({
  schema,
  example,
  meaning,
  ...(shown ? { shown } : {}),
});

/** A variable whose value is a secret (a key, a password, a token): a refused value is described, never quoted, so it reaches no log. */
export const secretEnvVar = <T>(schema: z.ZodType<T, string | undefined>, example: string, meaning: string): EnvVar<T> =>
  envVar(schema, example, meaning, (text) => `a value of ${text.length} character${text.length === 1 ? "" : "s"} (not shown: it is a secret)`);

/** A URL quoted back with the password in it (postgres://user:password@host) masked. */
export const shownUrl = (text: string) => JSON.stringify(text.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@\s]*):[^@/\s]*@/i, "$1:***@"));

/** Every variable of `spec` read from `env`; an empty value counts as unset. Throws one ConfigError naming every bad value. */
export function readEnv<S extends EnvSpec>(who: string, spec: S, env: Record<string, string | undefined>): EnvValues<S> {
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, v] of Object.entries(spec)) {
    const text = env[name] === "" ? undefined : env[name];
    const r = v.schema.safeParse(text);
    if (r.success) values[name] = r.data;
    else problems.push(`${name} is ${text !== undefined && v.shown ? v.shown(text) : JSON.stringify(text)}, which is ${r.error.issues[0].message}. Set it like ${name}=${v.example}, or unset it for the default.`);
  }
  if (problems.length) throw new ConfigError(`${who} did not start: ${problems.join(" ")}`);
  return values as EnvValues<S>;
}

/** A whole number from `min` to `max`; `fallback` when unset. */
export function wholeNumber(min: number, max: number): z.ZodType<number | undefined, string | undefined>;
export function wholeNumber(min: number, max: number, fallback: number): z.ZodType<number, string | undefined>;
export function wholeNumber(min: number, max: number, fallback?: number): z.ZodType<number | undefined, string | undefined> {
  const problem = `not a whole number from ${min} to ${max}`;
  return z
    .string()
    .regex(/^\d+$/, { error: problem })
    .transform(Number)
    .refine((n) => n >= min && n <= max, { error: problem })
    .optional()
    .transform((n) => n ?? fallback);
}

/** A URL with one of `protocols` (as `new URL` spells them: "https:"). */
export const urlOf = (...protocols: string[]) =>
  z
    .string()
    .refine(
      (v) => {
        try {
          return protocols.includes(new URL(v).protocol);
        } catch {
          return false;
        }
      },
      { error: `not a URL that starts with ${protocols.map((p) => `${p}//`).join(" or ")}` },
    )
    .optional();

/** One of `values`; `fallback` when unset. */
export const oneOf = <const V extends readonly [string, ...string[]]>(values: V, fallback: V[number]) =>
  z
    .enum(values, { error: `not one of ${values.join(", ")}` })
    .optional()
    .transform((v) => v ?? fallback);

/** Any text; `fallback` when unset. */
export function text(): z.ZodType<string | undefined, string | undefined>;
export function text(fallback: string): z.ZodType<string, string | undefined>;
export function text(fallback?: string): z.ZodType<string | undefined, string | undefined> {
  return z
    .string()
    .optional()
    .transform((v) => v ?? fallback);
}

/** Absolute folders separated by `:` (the path delimiter); an empty list when unset. */
export const absoluteFolders = () =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      const folders = (v ?? "").split(":").filter(Boolean);
      const relative = folders.find((f) => !f.startsWith("/"));
      if (relative === undefined) return folders;
      ctx.addIssue({ code: "custom", message: `not a list of absolute folders separated by ":" (${relative} is relative)` });
      return z.NEVER;
    });

/** An absolute folder, or unset. */
export const absoluteFolder = () =>
  z
    .string()
    .refine((v) => v.startsWith("/"), { error: "not an absolute folder" })
    .optional();
