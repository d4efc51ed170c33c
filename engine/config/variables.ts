// The value an input variable takes: the given value (or its default) converted to the declared
// type, refused when null for a `nullable = false` variable, then checked by every validation
// block — before anything runs, in OpenTofu's words.
import type { SourceRange } from "./ast";
import { evaluate, evaluateMarked, type EvalScope } from "./evaluate";
import type { VariableConfig } from "./module";
import { convertValue, TypeConversionError } from "./types";
import { ConfigError } from "../errors";
import { containsUnknown, type Value } from "../values";

const at = (r: SourceRange) => `${r.file}:${r.line}`;

/** The variable's value converted to its type; throws a ConfigError (conversion or null). `fix`: say how a job's spec fixes it. */
export function convertVariable(v: VariableConfig, value: Value, fix = true): Value {
  if (value === null) {
    if (v.nullable) return null;
    throw new ConfigError(
      "Invalid value for input variable",
      v.range,
      `The given value is not suitable for var.${v.name} declared at ${at(v.range)}: a null value is not allowed, because the variable sets nullable = false.${fix ? ` Set spec.${v.name} on the component to a value, then run the job again.` : ""}`,
    );
  }
  try {
    return convertValue(value, v.type);
  } catch (e) {
    if (!(e instanceof TypeConversionError)) throw e;
    throw new ConfigError("Invalid value for input variable", v.range, `The given value is not suitable for var.${v.name} declared at ${at(v.range)}: ${e.message}.${fix ? ` Set spec.${v.name} on the component to a value of the declared type, then run the job again.` : ""}`);
  }
}

/** Every validation block the value fails, each as a ConfigError at its condition's line. */
export function validationErrors(v: VariableConfig, value: Value, files?: Record<string, string>, fix = true): ConfigError[] {
  const refuse = (what: string) => (_n: string, r: SourceRange): never => {
    throw new ConfigError(
      "Invalid reference in variable validation",
      r,
      `The condition for variable "${v.name}" can only refer to the variable itself, using var.${v.name}; ${what} are not available here.`,
    );
  };
  const scope: EvalScope = {
    variable: (name, r) => (name === v.name ? value : refuse("other variables")(name, r)),
    local: refuse("local values"),
    resource: (_t, n, r) => refuse("resources")(n, r),
    files,
  };
  const errors: ConfigError[] = [];
  for (const rule of v.validations) {
    const ok = evaluate(rule.condition, scope);
    if (containsUnknown(ok)) continue;
    if (ok === null) throw new ConfigError("Invalid variable validation result", rule.condition.range, "The condition value is null; a condition must be either true or false.");
    if (typeof ok !== "boolean") throw new ConfigError("Invalid variable validation result", rule.condition.range, "Invalid validation condition result value: a bool is required.");
    if (ok) continue;
    let message: string;
    try {
      const shown = evaluateMarked(rule.errorMessage, { ...scope, marks: (addr) => addr === `var.${v.name}` && v.sensitive });
      message = shown.marks === false ? String(shown.value) : "The error message included a sensitive value, so it will not be displayed.";
    } catch {
      message = "The value is not valid (its error_message could not be evaluated).";
    }
    errors.push(new ConfigError("Invalid value for variable", rule.condition.range, `${message}\n\nThis was checked by the validation rule at ${at(rule.range)} for var.${v.name}.${fix ? ` Nothing ran: set spec.${v.name} on the component to a value the rule accepts, then run the job again.` : ""}`));
  }
  return errors;
}

/** The value var.<name> takes for a given value (undefined: not set); throws the first problem. */
export function variableValue(v: VariableConfig, given: Value | undefined, files?: Record<string, string>): Value {
  const raw = given === undefined || (given === null && !v.nullable) ? (v.default ?? null) : given;
  const value = convertVariable(v, raw);
  const [first] = validationErrors(v, value, files);
  if (first) throw first;
  return value;
}
