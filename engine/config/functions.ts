// The function library: OpenTofu's standard functions that modules use. Each receives evaluated
// arguments; an unknown argument gives an unknown result. try, can, sensitive, nonsensitive and
// templatefile need the evaluator, so evaluate.ts handles them.
import { FunctionError, type Fn, type FunctionContext } from "./function-args";
import { COLLECTION_FUNCTIONS } from "./functions-collections";
import { ENCODING_FUNCTIONS } from "./functions-encoding";
import { STRING_FUNCTIONS } from "./functions-strings";
import { containsUnknown, UNKNOWN, type Value } from "../values";

export { toStringValue } from "./function-args";

export const FUNCTIONS: Record<string, Fn> = { ...STRING_FUNCTIONS, ...COLLECTION_FUNCTIONS, ...ENCODING_FUNCTIONS };

/** Functions evaluate.ts implements itself, listed so names and arity read the same everywhere. */
export const EVALUATOR_FUNCTIONS = ["try", "can", "sensitive", "nonsensitive", "issensitive", "templatefile"];

/** Checks the argument count, calls the function, and words any failure as OpenTofu does. */
export function callFunction(name: string, args: Value[], ctx: FunctionContext = {}): Value {
  const fn = FUNCTIONS[name];
  if (!fn) throw new Error(`Call to unknown function: there is no function named "${name}"`);
  const n = fn.params.length;
  if (args.length < n) {
    throw new Error(`Not enough function arguments: function "${name}" expects ${fn.variadic ? "at least " : ""}${n} argument(s). Missing value for "${fn.params[args.length]}".`);
  }
  if (args.length > n && !fn.variadic) throw new Error(`Too many function arguments: function "${name}" expects only ${n} argument(s).`);
  if (args.some(containsUnknown)) return UNKNOWN as unknown as Value;
  try {
    return fn.call(args, ctx);
  } catch (e) {
    if (!(e instanceof FunctionError)) throw e;
    if (e.param) throw new Error(`Invalid function argument: Invalid value for "${e.param}" parameter: ${e.message}`);
    throw new Error(`Error in function call: Call to function "${name}" failed: ${e.message}`);
  }
}
