import { readdir, readFile, realpath } from "node:fs/promises";
import path from "node:path";
import type { Attribute, Block, Body, Expr, SourceRange } from "./ast";
import { parseFile } from "./parser";
import { evaluate } from "./evaluate";
import { ConfigError } from "../errors";
import { parseAddress, parseModuleAddress } from "../state/address";
import type { Value } from "../values";

export type TypeConstraint =
  | "string"
  | "number"
  | "bool"
  | "any"
  | { list: TypeConstraint }
  | { map: TypeConstraint }
  | { object: Record<string, TypeConstraint> };

export interface VariableConfig {
  name: string;
  type: TypeConstraint;
  default?: Value;
  hasDefault: boolean;
  sensitive: boolean;
  description: string;
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
export interface LifecycleConfig {
  createBeforeDestroy: boolean;
  preventDestroy: boolean;
  /** Attribute names whose configured changes are ignored, or "all". */
  ignoreChanges: string[] | "all";
  /** References whose change replaces this resource. */
  replaceTriggeredBy: Expr[];
}
export interface ResourceConfig {
  /** `type.name`, or `data.type.name` for a data source (within its module). */
  address: string;
  mode: "managed" | "data";
  type: string;
  name: string;
  /** Provider-facing arguments (meta-arguments removed). */
  attributes: Attribute[];
  /** Nested blocks and `dynamic` blocks, as written. */
  blocks: Block[];
  count?: Expr;
  forEach?: Expr;
  /** `type.name`, `data.type.name` or `module.name` this resource waits for. */
  dependsOn: { addr: string; range: SourceRange }[];
  lifecycle: LifecycleConfig;
  range: SourceRange;
}
/** A `module` block: the child module read from a local folder of the same bundle. */
export interface ModuleCallConfig {
  name: string;
  source: string;
  /** The child's folder, relative to the bundle root ("" is the root). */
  dir: string;
  /** Values for the child's variables. */
  inputs: Attribute[];
  count?: Expr;
  forEach?: Expr;
  dependsOn: { addr: string; range: SourceRange }[];
  range: SourceRange;
  module: Module;
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
  /** Every file of the bundle the module tree reads, keyed by path from the bundle root. */
  files: Record<string, string>;
  /** This module's folder relative to the bundle root ("" for the root module). */
  dir: string;
  modules: Map<string, ModuleCallConfig>;
  variables: Map<string, VariableConfig>;
  locals: Map<string, LocalConfig>;
  outputs: Map<string, OutputConfig>;
  resources: Map<string, ResourceConfig>;
  moved: MovedConfig[];
  imports: ImportConfig[];
  removed: RemovedConfig[];
}

export async function loadModule(moduleDir: string): Promise<Module> {
  let names: string[];
  try {
    names = (await readdir(moduleDir)).filter((n) => n.endsWith(".tf")).sort();
  } catch (e) {
    throw new ConfigError(`Module directory ${moduleDir} cannot be read: ${(e as Error).message}`);
  }
  if (names.length === 0) throw new ConfigError(`No configuration files: ${moduleDir} has no *.tf files; point the component at a module folder`);
  const files: Record<string, string> = {};
  await collectFiles(moduleDir, "", files, new Set());
  return parseModule(files);
}

/** Reads a folder's *.tf files into `files`, then the folders its local module sources name (inside the bundle only). */
async function collectFiles(bundleRoot: string, dir: string, files: Record<string, string>, seen: Set<string>): Promise<void> {
  if (seen.has(dir)) return;
  seen.add(dir);
  const abs = path.join(bundleRoot, dir);
  let names: string[];
  try {
    const [realRoot, real] = [await realpath(bundleRoot), await realpath(abs)];
    const rel = path.relative(realRoot, real);
    if (rel === ".." || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) return; // a link out of the bundle: parseModule reports the module as missing
    names = (await readdir(abs)).filter((n) => n.endsWith(".tf")).sort();
  } catch {
    return; // parseModule reports the missing folder with the module block's file:line
  }
  for (const n of names) {
    const key = dir ? `${dir}/${n}` : n;
    files[key] = await readFile(path.join(abs, n), "utf8");
    let body: Body;
    try {
      body = parseFile(files[key]!, key);
    } catch {
      continue; // reported by parseModule
    }
    for (const b of body.blocks) {
      const src = b.type === "module" ? attr(b.body, "source") : undefined;
      const v = src?.expr.kind === "literal" && typeof src.expr.value === "string" ? src.expr.value : undefined;
      const child = v !== undefined ? localSourceDir(dir, v) : null;
      if (child !== null) await collectFiles(bundleRoot, child, files, seen);
    }
  }
}

/** The bundle-relative folder a local source names, or null when it is not local or leaves the bundle. */
function localSourceDir(dir: string, source: string): string | null {
  if (!source.startsWith("./") && !source.startsWith("../")) return null;
  const joined = path.posix.normalize(path.posix.join(dir || ".", source)).replace(/\/+$/, "") || ".";
  if (joined === ".." || joined.startsWith("../") || path.posix.isAbsolute(joined)) return null;
  return joined === "." ? "" : joined;
}

/** Builds a module tree from file texts keyed by bundle path (a folder's files, or the snapshot kept in a saved plan). */
export function parseModule(files: Record<string, string>): Module {
  return parseModuleAt(files, "", []);
}

function parseModuleAt(files: Record<string, string>, dir: string, callers: string[]): Module {
  const mod: Module = {
    files,
    dir,
    modules: new Map(),
    variables: new Map(),
    locals: new Map(),
    outputs: new Map(),
    resources: new Map(),
    moved: [],
    imports: [],
    removed: [],
  };
  const inDir = Object.keys(files)
    .filter((n) => (path.posix.dirname(n) === "." ? "" : path.posix.dirname(n)) === dir && n.endsWith(".tf"))
    .sort();
  for (const name of inDir) {
    const body = parseFile(files[name]!, name);
    if (body.attributes.length > 0) {
      const a = body.attributes[0]!;
      throw new ConfigError(`Unexpected argument "${a.name}": arguments must be inside a block at the top level of a module`, a.range);
    }
    for (const block of body.blocks) decodeBlock(mod, block, files, [...callers, dir]);
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

/** The address a bare reference spells: `type.name`, `type.name[0]`, `data.t.n["k"]`, `module.m`, `module.m[0].t.n`. */
export function referenceText(expr: Expr): string | null {
  if (expr.kind !== "scope" || ["var", "local", "count", "each", "self", "path", "terraform"].includes(expr.root)) return null;
  let addr = expr.root;
  for (const s of expr.steps) {
    if (s.kind === "attr") addr += `.${s.name}`;
    else if (s.kind === "index" && s.key.kind === "literal" && typeof s.key.value === "number") addr += `[${s.key.value}]`;
    else if (s.kind === "index" && s.key.kind === "literal" && typeof s.key.value === "string") addr += `[${JSON.stringify(s.key.value)}]`;
    else return null;
  }
  return addr;
}

/** A resource instance address (`type.name`, `type.name[0]`, `module.m.type.name["k"]`) from a bare reference expression. */
export function addressOf(expr: Expr): string {
  const text = referenceText(expr);
  if (text !== null) {
    try {
      parseAddress(text);
      return text;
    } catch {
      // fall through to the error below
    }
  }
  throw new ConfigError("Invalid address: expected a resource address such as random_pet.name, random_pet.name[0], local_file.page[\"about\"] or module.site.local_file.page", expr.range);
}

/** A moved block's end: a resource (instance) address, or a module (instance) address such as module.site. */
function movedAddress(expr: Expr): string {
  const text = referenceText(expr);
  if (text !== null && /^module\.[^.]+(\[[^\]]*\])?(\.module\.[^.]+(\[[^\]]*\])?)*$/.test(text)) {
    try {
      parseModuleAddress(text);
      return text;
    } catch {
      // fall through
    }
  }
  return addressOf(expr);
}

/** A resource or module address without instance keys, for depends_on. */
function dependencyOf(expr: Expr): string {
  const text = referenceText(expr);
  const strip = (a: string) => a.replace(/\[(?:\d+|"(?:[^"\\]|\\.)*")\]/g, "");
  if (text !== null) {
    try {
      if (/^module\.[^.[]+(\[[^\]]*\])?$/.test(text)) return strip(text) === text ? (parseModuleAddress(text), text) : strip(text);
      parseAddress(text);
      if (!text.startsWith("module.")) return strip(text);
    } catch {
      // fall through
    }
  }
  throw new ConfigError("Invalid depends_on: each item must be a resource, data source or module of this module, such as local_file.page, data.local_file.seed or module.site", expr.range);
}

function dependsOnList(body: Body): { addr: string; range: SourceRange }[] {
  const dep = attr(body, "depends_on");
  if (!dep) return [];
  if (dep.expr.kind !== "tuple") throw new ConfigError("Invalid depends_on: it must be a list of references, like [local_file.page, module.site]", dep.range);
  return dep.expr.items.map((item) => ({ addr: dependencyOf(item), range: item.range }));
}

function decodeType(expr: Expr): TypeConstraint {
  if (expr.kind === "scope" && expr.steps.length === 0 && ["string", "number", "bool", "any"].includes(expr.root)) {
    return expr.root as TypeConstraint;
  }
  if (expr.kind === "call" && expr.args.length === 1) {
    if (["list", "set", "tuple"].includes(expr.name)) return { list: decodeType(expr.args[0]!) };
    if (expr.name === "map") return { map: decodeType(expr.args[0]!) };
    if (expr.name === "object" && expr.args[0]!.kind === "object") {
      const fields: Record<string, TypeConstraint> = {};
      for (const item of expr.args[0].items) fields[String(evaluate(item.key, NO_SCOPE))] = decodeType(item.value);
      return { object: fields };
    }
  }
  throw new ConfigError("Invalid type specification: use string, number, bool, any, list(T), map(T) or object({...})", expr.range);
}

function decodeBlock(mod: Module, block: Block, files: Record<string, string>, callers: string[]): void {
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
      const def = attr(body, "default");
      const typeAttr = attr(body, "type");
      mod.variables.set(name, {
        name,
        type: typeAttr ? decodeType(typeAttr.expr) : "any",
        default: def ? literal(def) : undefined,
        hasDefault: def !== undefined,
        sensitive: literalBool(attr(body, "sensitive")),
        description: String(literal(attr(body, "description")) ?? ""),
        range: block.range,
      });
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
    case "resource":
    case "data": {
      labels(block, 2, `the ${block.type === "data" ? "data source" : "resource"} type and name`);
      const r = decodeResource(block);
      if (mod.resources.has(r.address)) {
        throw new ConfigError(`Duplicate ${block.type === "data" ? "data" : "resource"} "${r.type}" configuration: ${r.address} was already declared`, block.range);
      }
      mod.resources.set(r.address, r);
      return;
    }
    case "module": {
      labels(block, 1, "the module name");
      const call = decodeModuleCall(block, mod.dir, files, callers);
      if (mod.modules.has(call.name)) throw new ConfigError(`Duplicate module call: a module named "${call.name}" was already called`, block.range);
      mod.modules.set(call.name, call);
      return;
    }
    case "moved": {
      labels(block, 0, "");
      onlyAttrs(block, ["from", "to"]);
      const from = attr(body, "from");
      const to = attr(body, "to");
      if (!from || !to) throw new ConfigError("Missing required argument: a moved block needs both from and to", block.range);
      mod.moved.push({ from: movedAddress(from.expr), to: movedAddress(to.expr), range: block.range });
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
    case "check":
      throw new ConfigError(
        `Unsupported block type: "check" blocks are not supported by the builtin engine`,
        block.range,
        "Remove the check block (or turn its assertions into output values), or run this module with the tofu engine.",
      );
    default:
      throw new ConfigError(`Unsupported block type: blocks of type "${block.type}" are not expected here`, block.range);
  }
}

const RESOURCE_META = ["count", "for_each", "depends_on", "provider"];

function decodeResource(block: Block): ResourceConfig {
  const [type, name] = block.labels as [string, string];
  const mode = block.type === "data" ? "data" : "managed";
  const address = `${mode === "data" ? "data." : ""}${type}.${name}`;
  const body = block.body;
  const count = attr(body, "count");
  const forEach = attr(body, "for_each");
  if (count && forEach) throw new ConfigError(`Invalid combination of "count" and "for_each": ${address} sets both; use one of them`, forEach.range);
  let lifecycle: LifecycleConfig = { createBeforeDestroy: false, preventDestroy: false, ignoreChanges: [], replaceTriggeredBy: [] };
  const blocks: Block[] = [];
  for (const b of body.blocks) {
    if (b.type === "lifecycle") {
      if (mode === "data") throw new ConfigError(`Unsupported block type: data sources take no lifecycle block except pre- and postconditions, which the builtin engine does not support`, b.range);
      lifecycle = decodeLifecycle(b, address);
    } else if (["provisioner", "connection"].includes(b.type)) {
      throw new ConfigError(
        `Unsupported block type: "${b.type}" blocks are not supported by the builtin engine (in ${address})`,
        b.range,
        "Remove it (the builtin engine's providers run no commands), or run this module with the tofu engine.",
      );
    } else blocks.push(b);
  }
  return {
    address,
    mode,
    type,
    name,
    attributes: body.attributes.filter((a) => !RESOURCE_META.includes(a.name)),
    blocks,
    count: count?.expr,
    forEach: forEach?.expr,
    dependsOn: dependsOnList(body),
    lifecycle,
    range: block.range,
  };
}

function decodeLifecycle(block: Block, address: string): LifecycleConfig {
  labels(block, 0, "");
  for (const b of block.body.blocks) {
    throw new ConfigError(
      `Unsupported block type: "${b.type}" blocks in lifecycle are not supported by the builtin engine (in ${address})`,
      b.range,
      "Remove the condition, or run this module with the tofu engine.",
    );
  }
  onlyAttrs(block, ["create_before_destroy", "prevent_destroy", "ignore_changes", "replace_triggered_by"]);
  const body = block.body;
  let ignoreChanges: LifecycleConfig["ignoreChanges"] = [];
  const ic = attr(body, "ignore_changes");
  if (ic) {
    if (ic.expr.kind === "scope" && ic.expr.root === "all" && ic.expr.steps.length === 0) ignoreChanges = "all";
    else if (ic.expr.kind === "tuple") {
      ignoreChanges = ic.expr.items.map((item) => {
        if (item.kind === "scope" && item.steps.length === 0) return item.root;
        if (item.kind === "literal" && typeof item.value === "string") return item.value;
        throw new ConfigError(`Invalid ignore_changes: list attribute names of ${address}, like [content], or write ignore_changes = all`, item.range);
      });
    } else throw new ConfigError(`Invalid ignore_changes: it must be a list of attribute names, like [content], or all`, ic.range);
  }
  const rt = attr(body, "replace_triggered_by");
  if (rt && rt.expr.kind !== "tuple") throw new ConfigError("Invalid replace_triggered_by: it must be a list of resource references, like [terraform_data.version]", rt.range);
  const replaceTriggeredBy = rt && rt.expr.kind === "tuple" ? rt.expr.items : [];
  for (const e of replaceTriggeredBy) {
    if (e.kind !== "scope" || ["var", "local", "data", "module", "count", "each", "path", "terraform", "self"].includes(e.root)) {
      throw new ConfigError("Invalid replace_triggered_by expression: only references to managed resources of this module (or their attributes) may be used, like terraform_data.version or local_file.page.content", e.range);
    }
  }
  return {
    createBeforeDestroy: literalBool(attr(body, "create_before_destroy")),
    preventDestroy: literalBool(attr(body, "prevent_destroy")),
    ignoreChanges,
    replaceTriggeredBy,
  };
}

const MODULE_META = ["source", "version", "count", "for_each", "depends_on", "providers"];

function decodeModuleCall(block: Block, dir: string, files: Record<string, string>, callers: string[]): ModuleCallConfig {
  const name = block.labels[0]!;
  const body = block.body;
  for (const b of body.blocks) throw new ConfigError(`Unsupported block type: blocks of type "${b.type}" are not expected in module "${name}"`, b.range);
  const src = attr(body, "source");
  if (!src) throw new ConfigError(`Missing required argument: module "${name}" needs a source argument, like source = "./modules/${name}"`, block.range);
  if (src.expr.kind !== "literal" || typeof src.expr.value !== "string") throw new ConfigError(`Invalid module source: the source of module "${name}" must be a literal string`, src.range);
  const source = src.expr.value;
  if (!source.startsWith("./") && !source.startsWith("../")) {
    throw new ConfigError(
      `Unsupported module source: module "${name}" has source "${source}", a registry, git or remote address; the builtin engine runs only local modules inside the component's module folder`,
      src.range,
      `Copy the module into the bundle and set source = "./modules/${name}", or run this component with the tofu engine.`,
    );
  }
  const version = attr(body, "version");
  if (version) throw new ConfigError(`Invalid argument: module "${name}" has a local source, so it cannot have a version constraint; remove version`, version.range);
  const childDir = localSourceDir(dir, source);
  if (childDir === null) {
    throw new ConfigError(
      `Module source outside the bundle: module "${name}" has source "${source}", which leads outside the component's module folder`,
      src.range,
      "Keep called modules inside the folder the component points at (for example ./modules/<name>), then run the job again.",
    );
  }
  if (callers.includes(childDir)) throw new ConfigError(`Module call cycle: module "${name}" (source "${source}") calls a module that is already calling it`, src.range);
  const hasFiles = Object.keys(files).some((f) => (path.posix.dirname(f) === "." ? "" : path.posix.dirname(f)) === childDir && f.endsWith(".tf"));
  if (!hasFiles) {
    throw new ConfigError(`Module not found: module "${name}" has source "${source}", but ${childDir || "the module folder"} has no *.tf files in the bundle`, src.range, "Fix the source path, or add the module's files to the bundle.");
  }
  const count = attr(body, "count");
  const forEach = attr(body, "for_each");
  if (count && forEach) throw new ConfigError(`Invalid combination of "count" and "for_each": module "${name}" sets both; use one of them`, forEach.range);
  return {
    name,
    source,
    dir: childDir,
    inputs: body.attributes.filter((a) => !MODULE_META.includes(a.name)),
    count: count?.expr,
    forEach: forEach?.expr,
    dependsOn: dependsOnList(body),
    range: block.range,
    module: parseModuleAt(files, childDir, callers),
  };
}

/** Converts a variable value to its declared type, as OpenTofu does for -var values. */
export function convertToType(v: Value, t: TypeConstraint, where: string): Value {
  if (v === null || t === "any") return v;
  const bad = (want: string): never => {
    throw new Error(`Invalid value for variable: ${where} must be ${want}, got ${JSON.stringify(v)}`);
  };
  if (t === "string") {
    if (typeof v === "string") return v;
    if (typeof v === "number" || typeof v === "boolean") return String(v);
    return bad("a string");
  }
  if (t === "number") {
    if (typeof v === "number") return v;
    if (typeof v === "string" && v.trim() !== "" && !Number.isNaN(Number(v))) return Number(v);
    return bad("a number");
  }
  if (t === "bool") {
    if (typeof v === "boolean") return v;
    if (v === "true" || v === "false") return v === "true";
    return bad("a bool");
  }
  if ("list" in t) {
    if (!Array.isArray(v)) return bad("a list");
    return v.map((x, i) => convertToType(x, t.list, `${where}[${i}]`));
  }
  if (typeof v !== "object" || Array.isArray(v)) return bad(`a ${"map" in t ? "map" : "object"}`);
  const out: Record<string, Value> = {};
  if ("map" in t) {
    for (const [k, x] of Object.entries(v)) out[k] = convertToType(x, t.map, `${where}.${k}`);
    return out;
  }
  for (const [k, ft] of Object.entries(t.object)) out[k] = convertToType((v as Record<string, Value>)[k] ?? null, ft, `${where}.${k}`);
  return out;
}
