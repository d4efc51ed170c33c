import type { Attribute, Block, Body, Expr, SourceRange } from "./ast";
import { parseFile } from "./parser";
import { evaluate } from "./evaluate";
import { configFileNames, readModuleFiles } from "./module-files";
import { convertValue, decodeType, TypeConversionError, type TypeConstraint } from "./types";
import { ConfigError } from "../errors";
import type { Value } from "../values";

export type { TypeConstraint } from "./types";

/** A variable's `validation` block. */
export interface VariableValidation {
  condition: Expr;
  errorMessage: Expr;
  range: SourceRange;
}

export interface VariableConfig {
  name: string;
  type: TypeConstraint;
  default?: Value;
  hasDefault: boolean;
  sensitive: boolean;
  /** false when the variable sets `nullable = false`: null then means "use the default". */
  nullable: boolean;
  description: string;
  validations: VariableValidation[];
  range: SourceRange;
}
export interface LocalConfig {
  name: string;
  expr: Expr;
  range: SourceRange;
}
export interface OutputConfig {
  name: string;
  expr: Expr;
  sensitive: boolean;
  description: string;
  range: SourceRange;
}
export interface ResourceConfig {
  /** `type.name` */
  address: string;
  type: string;
  name: string;
  /** Provider-facing arguments (meta-arguments removed). */
  attributes: Attribute[];
  count?: Expr;
  dependsOn: { addr: string; range: SourceRange }[];
  range: SourceRange;
}
export interface MovedConfig {
  from: string;
  to: string;
  range: SourceRange;
}
export interface ImportConfig {
  to: string;
  id: Expr;
  range: SourceRange;
}
export interface RemovedConfig {
  from: string;
  destroy: boolean;
  range: SourceRange;
}

/** A parsed module: the folder's `*.tf` files merged, plus their text for plan snapshots. */
export interface Module {
  files: Record<string, string>;
  variables: Map<string, VariableConfig>;
  locals: Map<string, LocalConfig>;
  outputs: Map<string, OutputConfig>;
  resources: Map<string, ResourceConfig>;
  moved: MovedConfig[];
  imports: ImportConfig[];
  removed: RemovedConfig[];
}

export async function loadModule(moduleDir: string): Promise<Module> {
  let files: Record<string, string>;
  try {
    files = await readModuleFiles(moduleDir);
  } catch (e) {
    throw new ConfigError(`Module directory ${moduleDir} cannot be read: ${(e as Error).message}`);
  }
  if (configFileNames(files).length === 0) throw new ConfigError(`No configuration files: ${moduleDir} has no *.tf files; point the component at a module folder`);
  return parseModule(files);
}

/** Builds a module from file texts (a folder's files, or the snapshot kept in a saved plan). */
export function parseModule(files: Record<string, string>): Module {
  const mod: Module = {
    files,
    variables: new Map(),
    locals: new Map(),
    outputs: new Map(),
    resources: new Map(),
    moved: [],
    imports: [],
    removed: [],
  };
  for (const name of configFileNames(files)) {
    const body = parseFile(files[name]!, name);
    if (body.attributes.length > 0) {
      const a = body.attributes[0]!;
      throw new ConfigError(`Unexpected argument "${a.name}": arguments must be inside a block at the top level of a module`, a.range);
    }
    for (const block of body.blocks) decodeBlock(mod, block);
  }
  return mod;
}

const NO_SCOPE = {
  variable: (_n: string, r: SourceRange): never => {
    throw new ConfigError("Variables not allowed: this value must be a literal", r);
  },
  local: (_n: string, r: SourceRange): never => {
    throw new ConfigError("Local values not allowed: this value must be a literal", r);
  },
  resource: (_t: string, _n: string, r: SourceRange): never => {
    throw new ConfigError("References not allowed: this value must be a literal", r);
  },
};

function labels(block: Block, n: number, names: string): void {
  if (block.labels.length !== n) {
    throw new ConfigError(`Wrong number of labels: a ${block.type} block needs ${n === 0 ? "no labels" : `${n} label(s): ${names}`}`, block.range);
  }
}

function attr(body: Body, name: string): Attribute | undefined {
  return body.attributes.find((a) => a.name === name);
}

function onlyAttrs(block: Block, allowed: string[], allowedBlocks: string[] = []): void {
  for (const a of block.body.attributes) {
    if (!allowed.includes(a.name)) {
      throw new ConfigError(`Unsupported argument: an argument named "${a.name}" is not expected in a ${block.type} block`, a.range);
    }
  }
  for (const b of block.body.blocks) {
    if (!allowedBlocks.includes(b.type)) {
      throw new ConfigError(`Unsupported block type: blocks of type "${b.type}" are not expected in a ${block.type} block`, b.range);
    }
  }
}

function literal(a: Attribute | undefined): Value | undefined {
  return a ? evaluate(a.expr, NO_SCOPE) : undefined;
}

function literalBool(a: Attribute | undefined): boolean {
  const v = literal(a);
  if (v === undefined || v === null) return false;
  if (typeof v !== "boolean") throw new ConfigError(`Invalid value: "${a!.name}" must be true or false`, a!.range);
  return v;
}

/** `type.name` or `type.name[0]` from a bare reference expression. */
export function addressOf(expr: Expr): string {
  if (expr.kind === "scope" && expr.steps[0]?.kind === "attr" && !["var", "local", "count", "data"].includes(expr.root)) {
    let addr = `${expr.root}.${expr.steps[0].name}`;
    for (const s of expr.steps.slice(1)) {
      if (s.kind === "index" && s.key.kind === "literal" && typeof s.key.value === "number") addr += `[${s.key.value}]`;
      else throw new ConfigError("Invalid address: expected a resource address such as random_pet.name or random_pet.name[0]", expr.range);
    }
    return addr;
  }
  throw new ConfigError("Invalid address: expected a resource address such as random_pet.name", expr.range);
}

export function decodeVariable(block: Block): VariableConfig {
  const body = block.body;
  const name = block.labels[0]!;
  const def = attr(body, "default");
  const typeAttr = attr(body, "type");
  const type = typeAttr ? decodeType(typeAttr.expr, (e) => evaluate(e, NO_SCOPE)) : "any";
  let defaultValue = def ? literal(def) : undefined;
  if (def && defaultValue !== null) {
    try {
      defaultValue = convertValue(defaultValue!, type);
    } catch (e) {
      if (!(e instanceof TypeConversionError)) throw e;
      throw new ConfigError("Invalid default value for variable", def.range, `This default value is not compatible with the variable's type constraint: ${e.message}.`);
    }
  }
  const nullableAttr = attr(body, "nullable");
  const validations = body.blocks.map((b): VariableValidation => {
    onlyAttrs(b, ["condition", "error_message"]);
    const condition = attr(b.body, "condition");
    const message = attr(b.body, "error_message");
    if (!condition || !message) {
      throw new ConfigError(`Missing required argument: a validation block needs both condition and error_message`, b.range);
    }
    return { condition: condition.expr, errorMessage: message.expr, range: b.range };
  });
  return {
    name,
    type,
    default: defaultValue,
    hasDefault: def !== undefined,
    sensitive: literalBool(attr(body, "sensitive")),
    nullable: nullableAttr ? literalBool(nullableAttr) : true,
    description: String(literal(attr(body, "description")) ?? ""),
    validations,
    range: block.range,
  };
}

function decodeBlock(mod: Module, block: Block): void {
  const body = block.body;
  switch (block.type) {
    case "terraform":
    case "provider":
      return; // tolerated: the builtin engine configures providers from the connection
    case "variable": {
      labels(block, 1, "the variable name");
      onlyAttrs(block, ["type", "default", "sensitive", "description", "nullable"], ["validation"]);
      const name = block.labels[0]!;
      if (mod.variables.has(name)) throw new ConfigError(`Duplicate variable declaration: a variable named "${name}" was already declared`, block.range);
      mod.variables.set(name, decodeVariable(block));
      return;
    }
    case "locals":
      labels(block, 0, "");
      onlyAttrs(block, body.attributes.map((a) => a.name));
      for (const a of body.attributes) {
        if (mod.locals.has(a.name)) throw new ConfigError(`Duplicate local value definition: local.${a.name} was already defined`, a.range);
        mod.locals.set(a.name, { name: a.name, expr: a.expr, range: a.range });
      }
      return;
    case "output": {
      labels(block, 1, "the output name");
      onlyAttrs(block, ["value", "sensitive", "description", "depends_on"]);
      const name = block.labels[0]!;
      const value = attr(body, "value");
      if (!value) throw new ConfigError(`Missing required argument: output "${name}" needs a value argument`, block.range);
      if (mod.outputs.has(name)) throw new ConfigError(`Duplicate output definition: an output named "${name}" was already defined`, block.range);
      mod.outputs.set(name, {
        name,
        expr: value.expr,
        sensitive: literalBool(attr(body, "sensitive")),
        description: String(literal(attr(body, "description")) ?? ""),
        range: block.range,
      });
      return;
    }
    case "resource": {
      labels(block, 2, "the resource type and name");
      const [type, name] = block.labels as [string, string];
      const address = `${type}.${name}`;
      if (mod.resources.has(address)) throw new ConfigError(`Duplicate resource "${type}" configuration: ${address} was already declared`, block.range);
      for (const b of body.blocks) {
        if (b.type !== "lifecycle") {
          throw new ConfigError(`Unsupported block type: blocks of type "${b.type}" are not expected in ${address}`, b.range);
        }
      }
      const dependsOn: { addr: string; range: SourceRange }[] = [];
      const dep = attr(body, "depends_on");
      if (dep) {
        if (dep.expr.kind !== "tuple") throw new ConfigError("Invalid depends_on: it must be a list of resource references", dep.range);
        for (const item of dep.expr.items) dependsOn.push({ addr: addressOf(item).replace(/\[\d+\]$/, ""), range: item.range });
      }
      mod.resources.set(address, {
        address,
        type,
        name,
        attributes: body.attributes.filter((a) => !["count", "depends_on", "provider", "for_each"].includes(a.name)),
        count: attr(body, "count")?.expr,
        dependsOn,
        range: block.range,
      });
      if (attr(body, "for_each")) throw new ConfigError("Unsupported argument: for_each is not supported by the builtin engine; use count", attr(body, "for_each")!.range);
      return;
    }
    case "moved": {
      labels(block, 0, "");
      onlyAttrs(block, ["from", "to"]);
      const from = attr(body, "from");
      const to = attr(body, "to");
      if (!from || !to) throw new ConfigError("Missing required argument: a moved block needs both from and to", block.range);
      mod.moved.push({ from: addressOf(from.expr), to: addressOf(to.expr), range: block.range });
      return;
    }
    case "import": {
      labels(block, 0, "");
      onlyAttrs(block, ["to", "id", "provider"]);
      const to = attr(body, "to");
      const id = attr(body, "id");
      if (!to || !id) throw new ConfigError("Missing required argument: an import block needs both to and id", block.range);
      mod.imports.push({ to: addressOf(to.expr), id: id.expr, range: block.range });
      return;
    }
    case "removed": {
      labels(block, 0, "");
      onlyAttrs(block, ["from"], ["lifecycle"]);
      const from = attr(body, "from");
      if (!from) throw new ConfigError("Missing required argument: a removed block needs from", block.range);
      const lifecycle = body.blocks.find((b) => b.type === "lifecycle");
      const destroy = lifecycle ? literal(attr(lifecycle.body, "destroy")) : false;
      mod.removed.push({ from: addressOf(from.expr), destroy: destroy === true, range: block.range });
      return;
    }
    case "data":
    case "module":
    case "check":
      throw new ConfigError(`Unsupported block type: "${block.type}" blocks are not supported by the builtin engine`, block.range);
    default:
      throw new ConfigError(`Unsupported block type: blocks of type "${block.type}" are not expected here`, block.range);
  }
}

/** Converts a variable value to its declared type, as OpenTofu does for -var values. */
export function convertToType(v: Value, t: TypeConstraint, where: string): Value {
  try {
    return convertValue(v, t);
  } catch (e) {
    if (!(e instanceof TypeConversionError)) throw e;
    throw new Error(`Invalid value for input variable: the given value is not suitable for ${where}: ${e.message}`);
  }
}
