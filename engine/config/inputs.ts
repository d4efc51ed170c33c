// What a module asks for: its variable blocks, for the server to describe a user's module and to
// check a component's spec against it before a job runs. Pure: file texts in, plain data out.
import type { Attribute, Expr } from "./ast";
import { decodeVariable, type VariableConfig } from "./module";
import { configFileNames } from "./module-files";
import { parseFile } from "./parser";
import { typeKind, typeString, type TypeKind } from "./types";
import { convertVariable, validationErrors } from "./variables";
import { ConfigError } from "../errors";
import type { Value } from "../values";

export interface ModuleInput {
  name: string;
  /** The type constraint as a module writes it (`list(string)`, `object({ a = string })`); `any` when none. */
  type: string;
  kind: TypeKind;
  /** The default as JSON; undefined when the variable has none (it is then required). */
  default: Value | undefined;
  required: boolean;
  description: string;
  sensitive: boolean;
  nullable: boolean;
  validations: { condition: string; errorMessage: string }[];
  /** Where the variable block starts, `file:line`. */
  source: string;
  file: string;
  line: number;
}

/** Each `variable` block of a module's `*.tf` files, in file then line order. Throws a ConfigError for a file that does not parse. */
export function moduleInputs(files: Record<string, string>): ModuleInput[] {
  return [...variables(files).values()].map((v) => ({
    name: v.name,
    type: typeString(v.type),
    kind: typeKind(v.type),
    default: v.hasDefault ? (v.default ?? null) : undefined,
    required: !v.hasDefault,
    description: v.description,
    sensitive: v.sensitive,
    nullable: v.nullable,
    validations: v.validations.map((r) => ({ condition: sourceOf(files, r.condition, r.conditionAttr), errorMessage: messageOf(files, r.errorMessage, r.errorMessageAttr) })),
    source: `${v.range.file}:${v.range.line}`,
    file: v.range.file,
    line: v.range.line,
  }));
}

/**
 * The problems with giving `value` to the module's variable `name` (undefined: not set): its type
 * conversion, nullable and validation blocks, each message starting with `file:line: `. Empty when the value is accepted.
 */
export function checkVariableValue(files: Record<string, string>, name: string, value: Value | undefined): string[] {
  const v = variables(files).get(name);
  if (!v) return [`Value for undeclared variable: the module declares no variable "${name}"`];
  if (value === undefined && !v.hasDefault) return [`${v.range.file}:${v.range.line}: No value for required variable: var.${name} is not set and has no default`];
  const given = value === undefined || (value === null && !v.nullable) ? (v.default ?? null) : value;
  try {
    const converted = convertVariable(v as VariableConfig, given, false);
    return validationErrors(v as VariableConfig, converted, files, false).map((e) => e.message);
  } catch (e) {
    if (e instanceof ConfigError) return [e.message];
    throw e;
  }
}

type Decoded = Omit<VariableConfig, "validations"> & { validations: (VariableConfig["validations"][number] & { conditionAttr?: Attribute; errorMessageAttr?: Attribute })[] };

function variables(files: Record<string, string>): Map<string, Decoded> {
  const out = new Map<string, Decoded>();
  for (const file of configFileNames(files)) {
    for (const block of parseFile(files[file]!, file).blocks) {
      if (block.type !== "variable" || block.labels.length !== 1) continue;
      const v: Decoded = decodeVariable(block);
      block.body.blocks.forEach((b, i) => {
        const rule = v.validations[i];
        if (!rule) return;
        rule.conditionAttr = b.body.attributes.find((a) => a.name === "condition");
        rule.errorMessageAttr = b.body.attributes.find((a) => a.name === "error_message");
      });
      if (!out.has(v.name)) out.set(v.name, v);
    }
  }
  return out;
}

/** The source text of an attribute's expression, from where it starts to the end of the attribute. */
function sourceOf(files: Record<string, string>, expr: Expr, attr?: Attribute): string {
  const text = files[expr.range.file];
  if (!text || !attr?.end) return "";
  const offset = (line: number, column: number) => {
    let pos = 0;
    for (let l = 1; l < line; l++) pos = text.indexOf("\n", pos) + 1;
    return pos + column - 1;
  };
  const start = offset(attr.range.line, attr.range.column);
  const end = offset(attr.end.line, attr.end.column);
  return text.slice(start, end).replace(/^[^=]*=\s*/, "").trim();
}

/** A literal error_message as its text; one with interpolations as its source. */
function messageOf(files: Record<string, string>, expr: Expr, attr?: Attribute): string {
  if (expr.kind === "literal") return String(expr.value);
  return sourceOf(files, expr, attr);
}
