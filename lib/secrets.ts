// What every side knows about secrets and variables: the name rule, the `$secret/NAME` and `$var/NAME` references,
// the name a generated secret gets, the mask shown in place of a sensitive value, and which text
// the database cannot store.

/** The one name rule for secrets and variables. */
export const STORE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const STORE_NAME_HINT = "letters, digits and underscores, not starting with a digit (like DB_PASSWORD)";

/** What a person sees in place of a sensitive value, as OpenTofu prints it. */
export const SENSITIVE_VALUE = "(sensitive value)";

// Any name after the prefix is a reference, so one to a name the store refuses is reported missing, never passed on as text.
const SECRET_REF = /^\$secret\/(.+)$/s;

export const secretRef = (name: string) => `$secret/${name}`;

/** The secret a spec value references (`$secret/NAME`, the whole value), or null. */
export function secretNameOf(value: unknown): string | null {
  return typeof value === "string" ? (SECRET_REF.exec(value)?.[1] ?? null) : null;
}

function referencesBy(nameOf: (v: unknown) => string | null, value: unknown): string[] {
  const found = new Set<string>();
  const visit = (v: unknown): void => {
    const name = nameOf(v);
    if (name) found.add(name);
    else if (Array.isArray(v)) v.forEach(visit);
    else if (v !== null && typeof v === "object") Object.values(v).forEach(visit);
  };
  visit(value);
  return [...found];
}

/** Every secret a set of spec values references, each once, in order of appearance. */
export const secretReferences = (value: unknown): string[] => referencesBy(secretNameOf, value);

// A variable's value is not secret: `$var/NAME` (the whole value) is replaced by it when the job is made.
const VARIABLE_REF = /^\$var\/(.+)$/s;

/** The variable a spec value references (`$var/NAME`, the whole value), or null. */
export function variableNameOf(value: unknown): string | null {
  return typeof value === "string" ? (VARIABLE_REF.exec(value)?.[1] ?? null) : null;
}

/** Every variable a set of spec values references, each once, in order of appearance. */
export const variableReferences = (value: unknown): string[] => referencesBy(variableNameOf, value);

/** The spec values with every `$var/NAME` replaced by the variable's value. */
export function withVariables(value: unknown, values: Record<string, string>): unknown {
  const name = variableNameOf(value);
  if (name !== null) return name in values ? values[name] : value;
  if (Array.isArray(value)) return value.map((v) => withVariables(v, values));
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withVariables(v, values)]));
  return value;
}

// Environment and component names are lower-case letters, digits and dashes starting with a letter.
// A dash becomes `_`, except one followed by another dash or ending the name, which becomes `_x`
// (no lower-case letter is otherwise produced), so an encoded part never holds `__` nor starts or
// ends with `_`, and `__` separates the parts unambiguously.
function encodeName(part: string): string {
  return part.toUpperCase().replace(/-(?=-|$)/g, "_x").replace(/-/g, "_");
}

// Output names are HCL identifiers (letters, digits, `_`, `-`): a lower-case letter is upper-cased,
// an upper-case one is marked `u`, a dash is `d`; each code is one character or starts with `u`.
function encodeOutput(output: string): string {
  return output.replace(/[A-Za-z0-9_-]/g, (ch) => (ch === "-" ? "d" : /[A-Z]/.test(ch) ? `u${ch}` : ch.toUpperCase()));
}

/**
 * The secret a sensitive output of a component is kept in, like `PROD__ORDERS_DB__PASSWORD`.
 * Distinct (environment, component, output) triples always get distinct names.
 */
export function generatedSecretName(environment: string, component: string, output: string): string {
  return `${encodeName(environment)}__${encodeName(component)}__${encodeOutput(output)}`;
}

/**
 * Why the database cannot store a text (Postgres text and jsonb refuse NUL; an unpaired UTF-16
 * surrogate has no UTF-8 form), or null when it can.
 */
export function unstorableText(s: string): string | null {
  if (s.includes("\u0000")) return "it contains a NUL byte (\\0)";
  if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s)) return "it contains an unpaired UTF-16 surrogate, which has no UTF-8 form";
  return null;
}

/** The refusal of an unstorable text, on the field that holds it. */
export const unstorableMessage = (what: string, why: string) => `The ${what} cannot be stored: ${why}. Nothing was saved. Remove that character, then save again.`;

/** The first unstorable text anywhere in a JSON-like value, with why, or null. */
export function unstorableValue(value: unknown): string | null {
  if (typeof value === "string") return unstorableText(value);
  if (Array.isArray(value)) {
    for (const v of value) {
      const why = unstorableValue(v);
      if (why) return why;
    }
  } else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      const why = unstorableText(k) ?? unstorableValue(v);
      if (why) return why;
    }
  }
  return null;
}
