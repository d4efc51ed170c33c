// A module's inputs, from its `variable` blocks, and the spec fields of a kind derived from them; and
// the check of a value against a derived field (its HCL type, its validation blocks). The HCL is read by
// the builtin engine's own parser and type rules (engine/config/inputs.ts, types.ts), so registration,
// spec validation and the job that runs the module agree on what a module asks for.
import { moduleInputs } from "@/engine/config/inputs";
import { evaluate } from "@/engine/config/evaluate";
import { parseExpression, parseFile } from "@/engine/config/parser";
import { convertValue, decodeType, TypeConversionError, type TypeKind } from "@/engine/config/types";
import { EngineError } from "@/engine/errors";
import type { Value } from "@/engine/values";
import type { ModuleInput } from "@/lib/api/module-schemas";
import type { JsonValue, SpecField } from "@/lib/catalog";
import { SENSITIVE_VALUE } from "@/lib/secrets";

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

/** string/number/bool stay themselves; every collection, structural type and `any` is a JSON field. */
const FIELD_KIND: Record<TypeKind, ModuleInput["kind"]> = { string: "string", number: "number", bool: "boolean", list: "json", map: "json", object: "json", any: "json" };

/** The inputs (`variable` blocks) and providers of a module's `.tf` files at its root; a file that cannot be read is refused with its line. */
export function readModuleFacts(files: Record<string, string>): ModuleFacts {
  const providers = new Set<string>();
  try {
    for (const file of Object.keys(files).filter((f) => !f.includes("/") && f.endsWith(".tf")).sort()) {
      for (const block of parseFile(files[file]!, file).blocks) {
        if ((block.type === "resource" || block.type === "data") && block.labels[0]) providers.add(block.labels[0].split("_")[0]!);
        if (block.type !== "terraform") continue;
        for (const inner of block.body.blocks) if (inner.type === "required_providers") for (const a of inner.body.attributes) providers.add(a.name);
      }
    }
    const inputs = moduleInputs(files).map(
      (i): ModuleInput => ({
        name: i.name,
        type: i.type,
        kind: FIELD_KIND[i.kind],
        ...(i.default !== undefined ? { default: i.default } : {}),
        description: i.description,
        sensitive: i.sensitive,
        required: i.required,
        validations: i.validations,
        file: i.file,
        line: i.line,
      }),
    );
    return { inputs, providers: [...providers].sort() };
  } catch (e) {
    if (e instanceof EngineError) throw new ModuleReadError(`${e.message.split("\n")[0]} (the module's HCL cannot be read)`);
    throw e;
  }
}

/** An input as the API shows it: a sensitive input's default is the mask (there is one; its value stays in the bundle). */
export function maskedDefault(i: ModuleInput): ModuleInput {
  return i.sensitive && i.default !== undefined ? { ...i, default: SENSITIVE_VALUE } : i;
}

/** The spec fields of a kind derived from a module's inputs. */
export function fieldsFromInputs(inputs: ModuleInput[]): SpecField[] {
  return inputs.map((i) => ({
    name: i.name,
    type: i.kind,
    ...(i.required ? { required: true } : {}),
    // A sensitive input's default stays in the module: filled into a spec, it would be stored and shown with it.
    ...(i.default !== undefined && i.default !== null && !i.sensitive ? { default: i.default as JsonValue } : {}),
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

/**
 * What is wrong with a value for a field derived from a module: its HCL type (converted as OpenTofu
 * converts a variable's value), then each validation block whose condition can be evaluated alone (one
 * that needs more is left to the plan). Null when nothing is. `$secret/…` and `$var/…` references are
 * resolved later, so they are not checked.
 */
export function checkFieldValue(field: SpecField, value: unknown): string | null {
  if (typeof value === "string" && /^\$(secret|var)\//.test(value)) return null;
  let converted: Value;
  try {
    converted = field.hclType ? convertValue(value as Value, decodeType(parseExpression(field.hclType, `variable ${field.name}`), (e) => evaluate(e, NO_REFERENCES))) : (value as Value);
  } catch (e) {
    if (e instanceof TypeConversionError) return `${field.name} must be ${field.hclType}: ${e.message}`;
    if (e instanceof EngineError) return null;
    throw e;
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
