// A module's inputs, from its `variable` blocks, and the spec fields of a kind derived from them; and
// the check of a value against a derived field (its HCL type, its validation blocks). The one place
// registration and spec validation read HCL: when the engine's own `moduleInputs(files)` /
// `checkVariableValue(…)` (engine/config/inputs.ts) land, these two functions switch to them.
import { parseExpression } from "@/engine/config/parser";
import { evaluate } from "@/engine/config/evaluate";
import type { Value } from "@/engine/values";
import type { ModuleInput } from "@/lib/api/module-schemas";
import type { JsonValue, SpecField } from "@/lib/catalog";
import { HclScanError, scanHclBody, type HclItem } from "./hcl-scan";

export interface ModuleFacts {
  inputs: ModuleInput[];
  /** Provider names it uses: required_providers keys and resource/data type prefixes. */
  providers: string[];
}

export class ModuleReadError extends Error {}

const NO_REFERENCES = {
  variable: () => {
    throw new Error("not a literal");
  },
  local: () => {
    throw new Error("not a literal");
  },
  resource: () => {
    throw new Error("not a literal");
  },
};

/** The value of a literal expression (a default, a description), or undefined when it is not one the engine can evaluate alone. */
function literalOf(text: string, file: string): Value | undefined {
  try {
    return evaluate(parseExpression(text, file), NO_REFERENCES);
  } catch {
    return undefined;
  }
}

/** string/number/bool stay themselves; every collection, structural type and `any` is a JSON field. */
function fieldKind(type: string): ModuleInput["kind"] {
  if (type === "string") return "string";
  if (type === "number") return "number";
  if (type === "bool") return "boolean";
  return "json";
}

const attrOf = (items: HclItem[], name: string) => items.find((i): i is Extract<HclItem, { kind: "attribute" }> => i.kind === "attribute" && i.name === name);

/** The inputs (`variable` blocks) and providers of a module's `.tf` files at its root; a file that cannot be read is refused with its line. */
export function readModuleFacts(files: Record<string, string>): ModuleFacts {
  const inputs: ModuleInput[] = [];
  const providers = new Set<string>();
  for (const file of Object.keys(files).filter((f) => !f.includes("/") && f.endsWith(".tf")).sort()) {
    let items: HclItem[];
    try {
      items = scanHclBody(files[file]);
    } catch (e) {
      const line = e instanceof HclScanError ? `:${e.line}` : "";
      throw new ModuleReadError(`${file}${line} cannot be read as HCL: ${(e as Error).message}`);
    }
    for (const item of items) {
      if (item.kind !== "block") continue;
      if ((item.type === "resource" || item.type === "data") && item.labels[0]) providers.add(item.labels[0].split("_")[0]);
      if (item.type === "terraform") {
        for (const inner of scanHclBody(item.body, item.bodyLine)) {
          if (inner.kind === "block" && inner.type === "required_providers") {
            for (const p of scanHclBody(inner.body, inner.bodyLine)) if (p.kind === "attribute") providers.add(p.name);
          }
        }
      }
      if (item.type !== "variable" || item.labels.length !== 1) continue;
      const body = scanHclBody(item.body, item.bodyLine);
      const name = item.labels[0];
      if (inputs.some((i) => i.name === name)) throw new ModuleReadError(`${file}:${item.line}: variable "${name}" is declared twice`);
      const type = (attrOf(body, "type")?.text ?? "any").replace(/\s+/g, " ").replace(/\( /g, "(").replace(/ \)/g, ")");
      const def = attrOf(body, "default");
      const defaultValue = def ? literalOf(def.text, file) : undefined;
      const description = attrOf(body, "description");
      const sensitive = attrOf(body, "sensitive");
      const validations = body
        .filter((b): b is Extract<HclItem, { kind: "block" }> => b.kind === "block" && b.type === "validation")
        .map((v) => {
          const inner = scanHclBody(v.body, v.bodyLine);
          const message = attrOf(inner, "error_message")?.text ?? "";
          const said = literalOf(message, file);
          return { condition: attrOf(inner, "condition")?.text ?? "true", errorMessage: typeof said === "string" ? said : message };
        });
      inputs.push({
        name,
        type,
        kind: fieldKind(type),
        // A default the engine cannot evaluate alone (a function it lacks) still makes the input optional: the module applies it.
        ...(defaultValue !== undefined ? { default: defaultValue } : {}),
        description: description ? String(literalOf(description.text, file) ?? description.text) : "",
        sensitive: sensitive ? literalOf(sensitive.text, file) === true : false,
        required: !def,
        validations,
        file,
        line: item.line,
      });
    }
  }
  return { inputs, providers: [...providers].sort() };
}

/** The spec fields of a kind derived from a module's inputs. */
export function fieldsFromInputs(inputs: ModuleInput[]): SpecField[] {
  return inputs.map((i) => ({
    name: i.name,
    type: i.kind,
    ...(i.required ? { required: true } : {}),
    ...(i.default !== undefined && i.default !== null ? { default: i.default as JsonValue } : {}),
    description: i.description || `The module's ${i.name} input (${i.type}).`,
    ...(i.kind === "json" || i.type !== i.kind ? { hclType: i.type } : {}),
    ...(i.sensitive ? { sensitive: true } : {}),
    ...(i.validations.length ? { validations: i.validations } : {}),
  }));
}

/** The connection provider a module deploys through, from the providers it uses. */
export function providerOf(providers: string[]): string {
  if (providers.includes("aws")) return "aws";
  if (providers.includes("google")) return "gcp";
  if (providers.includes("azurerm")) return "azure";
  return "local";
}

// ── Checking a value against a derived field ────────────────────────────────────────────────────

type HclType = "string" | "number" | "bool" | "any" | { list: HclType } | { map: HclType } | { tuple: HclType[] } | { object: Record<string, { type: HclType; optional: boolean }> };

function decodeType(text: string): HclType {
  const t = text.trim();
  if (["string", "number", "bool", "any"].includes(t)) return t as HclType;
  const m = /^(list|set|map|tuple|object|optional)\(([\s\S]*)\)$/.exec(t);
  if (!m) return "any";
  const inner = m[2].trim();
  if (m[1] === "list" || m[1] === "set") return { list: decodeType(inner) };
  if (m[1] === "map") return { map: decodeType(inner) };
  if (m[1] === "optional") return decodeType(splitTop(inner)[0] ?? "any");
  if (m[1] === "tuple") return { tuple: splitTop(inner.replace(/^\[|\]$/g, "")).map(decodeType) };
  const fields: Record<string, { type: HclType; optional: boolean }> = {};
  for (const part of splitTop(inner.replace(/^\{|\}$/g, ""))) {
    const fm = /^"?([A-Za-z_][A-Za-z0-9_-]*)"?\s*[=:]\s*([\s\S]+)$/.exec(part.trim());
    if (fm) fields[fm[1]] = { type: decodeType(fm[2]), optional: /^optional\(/.test(fm[2].trim()) };
  }
  return { object: fields };
}

/** Splits `a, b(c, d), e` at its top-level commas (and newlines, as object types are written). */
function splitTop(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = "";
  for (const c of s) {
    if ("([{".includes(c)) depth++;
    if (")]}".includes(c)) depth--;
    if ((c === "," || c === "\n") && depth === 0) {
      if (cur.trim()) out.push(cur.trim());
      cur = "";
    } else cur += c;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

function describe(t: HclType): string {
  if (typeof t === "string") return t === "bool" ? "true or false" : t === "any" ? "any value" : `a ${t}`;
  if ("list" in t) return "a list";
  if ("map" in t) return "a map";
  if ("tuple" in t) return `a list of ${t.tuple.length}`;
  return "an object";
}

/** The value converted to the type as OpenTofu converts a variable's value, or the reason it cannot be. */
function convert(v: unknown, t: HclType, where: string): Value {
  if (v === null || t === "any") return v as Value;
  const bad = (): never => {
    throw new Error(`${where} must be ${describe(t)}, not ${JSON.stringify(v)}`);
  };
  if (t === "string") return typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : bad();
  if (t === "number") return typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" && !Number.isNaN(Number(v)) ? Number(v) : bad();
  if (t === "bool") return typeof v === "boolean" ? v : v === "true" || v === "false" ? v === "true" : bad();
  if ("list" in t) return Array.isArray(v) ? v.map((x, i) => convert(x, t.list, `${where}[${i}]`)) : bad();
  if ("tuple" in t) return Array.isArray(v) && v.length === t.tuple.length ? v.map((x, i) => convert(x, t.tuple[i], `${where}[${i}]`)) : bad();
  if (typeof v !== "object" || Array.isArray(v)) return bad();
  const obj = v as Record<string, unknown>;
  if ("map" in t) return Object.fromEntries(Object.entries(obj).map(([k, x]) => [k, convert(x, t.map, `${where}.${k}`)]));
  const out: Record<string, Value> = {};
  for (const [k, f] of Object.entries(t.object)) {
    if (obj[k] === undefined) {
      if (!f.optional) throw new Error(`${where} must have attribute ${k}`);
      out[k] = null;
    } else out[k] = convert(obj[k], f.type, `${where}.${k}`);
  }
  const extra = Object.keys(obj).filter((k) => !(k in t.object));
  if (extra.length) throw new Error(`${where} has no attribute ${extra.join(", ")} (it takes ${Object.keys(t.object).join(", ")})`);
  return out;
}

/**
 * What is wrong with a value for a field derived from a module: its HCL type, then each validation
 * block whose condition the engine can evaluate (one using a function it lacks is left to the plan).
 * Null when nothing is. `$secret/…` and `$var/…` references are resolved later, so they are not checked.
 */
export function checkFieldValue(field: SpecField, value: unknown): string | null {
  if (typeof value === "string" && /^\$(secret|var)\//.test(value)) return null;
  let converted: Value;
  try {
    converted = field.hclType ? convert(value, decodeType(field.hclType), field.name) : (value as Value);
  } catch (e) {
    return (e as Error).message;
  }
  for (const v of field.validations ?? []) {
    let ok: Value;
    try {
      ok = evaluate(parseExpression(v.condition, `variable ${field.name}`), {
        variable: (name) => {
          if (name !== field.name) throw new Error(`a validation may refer only to var.${field.name}`);
          return converted;
        },
        local: NO_REFERENCES.local,
        resource: NO_REFERENCES.resource,
      });
    } catch {
      continue;
    }
    if (ok === false) return `${field.name}: ${v.errorMessage.replace(/\.$/, "")}`;
  }
  return null;
}
