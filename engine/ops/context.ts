import type { Attribute, Block, Expr, SourceRange } from "../config/ast";
import { loadModule, type Module, type ResourceConfig } from "../config/module";
import { variableValue } from "../config/variables";
import { ConfigError, EngineError } from "../errors";
import type { Graph } from "../graph/graph";
import type { AttributeSchema, BlockSchema, ResourceSchema } from "../providers/provider";
import { createProviders, providerSchemaHash, type ProviderSet } from "../providers/registry";
import type { Diagnostic, EngineOptions, ProviderConfig, SensitivePath, StateV4 } from "../types";
import { Ui } from "../ui-messages";
import type { Attrs, Value } from "../values";
import { findInstance } from "../state/state";
import { buildGraph } from "./config-graph";

/** A resource or data block anywhere in the module tree. */
export interface ResourceEntry {
  r: ResourceConfig;
  /** Names of the module calls leading to it (empty in the root module). */
  path: string[];
  /** Its module's configuration address prefix: "" or "module.site." */
  prefix: string;
}

/** Everything an operation needs once the module is read and checked. */
export interface OperationContext {
  mod: Module;
  variables: Record<string, Value>;
  providers: ProviderSet;
  graph: Graph;
  /** Every resource and data block of the tree by configuration address (`module.site.local_file.page`). */
  resources: Map<string, ResourceEntry>;
  /** For each resource (by configuration address), the resources it needs (directly or through locals, variables, modules), for ordering and state dependencies. */
  resourceDeps: Map<string, string[]>;
  ui: Ui;
  parallelism: number;
  warnings: Diagnostic[];
}

export async function prepare(
  mod: Module,
  opts: { variables?: Record<string, Value>; providerConfig?: ProviderConfig; parallelism?: number; emit?: EngineOptions["emit"] },
  ui: Ui,
): Promise<OperationContext> {
  const providers = await createProviders(opts.providerConfig);
  const warnings: Diagnostic[] = [];
  const variables = checkVariables(mod, opts.variables ?? {}, warnings);
  const resources = new Map<string, ResourceEntry>();
  collectResources(mod, [], "", resources);
  for (const { r } of resources.values()) checkResource(r, providers);
  checkModuleCalls(mod);
  const graph = buildGraph(mod, resources);
  graph.assertAcyclic();
  checkSensitiveOutputs(mod, providers);
  const resourceDeps = new Map<string, string[]>();
  for (const addr of resources.keys()) {
    resourceDeps.set(addr, [...graph.ancestors(addr)].filter((n) => resources.has(n)).sort());
  }
  for (const w of warnings) ui.diagnostic(w);
  return { mod, variables, providers, graph, resources, resourceDeps, ui, parallelism: Math.max(1, opts.parallelism ?? 10), warnings };
}

function collectResources(mod: Module, path: string[], prefix: string, out: Map<string, ResourceEntry>): void {
  for (const r of mod.resources.values()) out.set(prefix + r.address, { r, path, prefix });
  for (const call of mod.modules.values()) collectResources(call.module, [...path, call.name], `${prefix}module.${call.name}.`, out);
}

/** A call's arguments must be the child's variables, and every variable without a default must be given. */
function checkModuleCalls(mod: Module): void {
  for (const call of mod.modules.values()) {
    const child = call.module;
    for (const a of call.inputs) {
      if (!child.variables.has(a.name)) {
        throw new ConfigError(
          `Unsupported argument: an argument named "${a.name}" is not expected in module "${call.name}"`,
          a.range,
          `The module at ${call.source} declares no variable "${a.name}"${child.variables.size ? `; its variables are ${[...child.variables.keys()].join(", ")}` : ""}.`,
        );
      }
    }
    for (const v of child.variables.values()) {
      if (!v.hasDefault && !call.inputs.some((a) => a.name === v.name)) {
        throw new ConfigError(`Missing required argument: module "${call.name}" needs the argument "${v.name}", which has no default`, call.range, `Set ${v.name} = … in the module block.`);
      }
    }
    checkModuleCalls(child);
  }
}

export async function loadAndPrepare(opts: EngineOptions, ui: Ui): Promise<OperationContext> {
  return prepare(await loadModule(opts.moduleDir), opts, ui);
}

function checkVariables(mod: Module, given: Record<string, Value>, warnings: Diagnostic[]): Record<string, Value> {
  const out: Record<string, Value> = {};
  const missing: string[] = [];
  for (const v of mod.variables.values()) {
    if (given[v.name] === undefined && !v.hasDefault) missing.push(v.name);
    else out[v.name] = variableValue(v, given[v.name], mod.files);
  }
  if (missing.length) {
    const v = mod.variables.get(missing[0]!)!;
    const names = missing.map((m) => `"${m}"`).join(", ");
    throw new ConfigError(
      `No value for required variable: the module's input variable${missing.length > 1 ? "s" : ""} ${names} ${missing.length > 1 ? "are" : "is"} not set and ${missing.length > 1 ? "have" : "has"} no default`,
      v.range,
      `Nothing ran. Set ${missing.map((m) => `spec.${m}`).join(", ")} on the component (or give the variable a default in the module), then run the job again.`,
    );
  }
  for (const name of Object.keys(given)) {
    if (!mod.variables.has(name)) {
      warnings.push({
        severity: "warning",
        summary: "Value for undeclared variable",
        detail: `The component sets "${name}", but the module declares no variable "${name}"; the value is ignored. Remove it from the spec or declare it in the module.`,
      });
    }
  }
  return out;
}

function checkResource(r: ResourceConfig, providers: ProviderSet): void {
  const data = r.mode === "data";
  const p = data ? providers.forData(r.type) : providers.forType(r.type);
  if (!p) {
    const what = data ? "data source" : "resource type";
    const list = data ? providers.dataSourceTypes() : providers.resourceTypes();
    throw new ConfigError(
      `Unsupported ${what}: the builtin engine has no provider for ${data ? "data source " : ""}"${r.type}"`,
      r.range,
      `Available ${data ? "data sources" : "types"}: ${list.join(", ")}. Use one of them, or run this module with the tofu engine.`,
    );
  }
  const where = data ? `data.${r.type}` : r.type;
  const ignored = r.lifecycle.ignoreChanges;
  for (const name of ignored === "all" ? [] : ignored) {
    if (!(name in p.resource.attributes) && !(name in (p.resource.blocks ?? {}))) {
      throw new ConfigError(`Unsupported attribute: ignore_changes names "${name}", which ${r.type} does not have`, r.range, `Its attributes: ${Object.keys(p.resource.attributes).join(", ")}.`);
    }
  }
  checkBody(r.attributes, r.blocks, p.resource.attributes, p.resource.blocks ?? {}, where, r.address, r.range);
}

function checkBody(
  attributes: Attribute[],
  blocks: Block[],
  schema: Record<string, AttributeSchema>,
  blockSchemas: Record<string, BlockSchema>,
  where: string,
  address: string,
  range: SourceRange,
): void {
  for (const a of attributes) {
    const s = schema[a.name];
    if (!s) throw new ConfigError(`Unsupported argument: an argument named "${a.name}" is not expected in ${where}`, a.range);
    if (!s.required && !s.optional) throw new ConfigError(`Invalid argument: "${a.name}" is computed by the provider and cannot be set in ${address}`, a.range);
  }
  for (const [name, s] of Object.entries(schema)) {
    if (s.required && !attributes.some((a) => a.name === name)) {
      throw new ConfigError(`Missing required argument: the argument "${name}" is required in ${address}, but no definition was found`, range);
    }
  }
  for (const b of blocks) {
    const dynamic = b.type === "dynamic";
    const name = dynamic ? b.labels[0] : b.type;
    if (dynamic && b.labels.length !== 1) throw new ConfigError(`Wrong number of labels: a dynamic block needs 1 label, the block type it generates, like dynamic "source"`, b.range);
    const bs = name !== undefined ? blockSchemas[name] : undefined;
    if (!bs) {
      const known = Object.keys(blockSchemas);
      throw new ConfigError(
        `Unsupported block type: blocks of type "${name}" are not expected in ${where}`,
        b.range,
        known.length ? `${where} takes blocks of type ${known.join(", ")}.` : `${where} takes no nested blocks; set its arguments instead.`,
      );
    }
    if (dynamic) {
      for (const a of b.body.attributes) {
        if (!["for_each", "iterator", "labels"].includes(a.name)) throw new ConfigError(`Unsupported argument: an argument named "${a.name}" is not expected in a dynamic block`, a.range);
      }
      if (!b.body.attributes.some((a) => a.name === "for_each")) throw new ConfigError(`Missing required argument: a dynamic "${name}" block needs for_each`, b.range);
      const content = b.body.blocks.filter((x) => x.type === "content");
      const other = b.body.blocks.find((x) => x.type !== "content");
      if (other) throw new ConfigError(`Unsupported block type: a dynamic block holds only one content block, not "${other.type}"`, other.range);
      if (content.length !== 1) throw new ConfigError(`Missing content block: a dynamic "${name}" block needs exactly one content { … } block`, b.range);
      checkBody(content[0]!.body.attributes, content[0]!.body.blocks, bs.attributes, {}, `a ${name} block`, address, content[0]!.range);
    } else {
      if (b.labels.length) throw new ConfigError(`Extraneous label for ${name}: a ${name} block takes no labels`, b.range);
      checkBody(b.body.attributes, b.body.blocks, bs.attributes, {}, `a ${name} block`, address, b.range);
    }
  }
}

/** Like OpenTofu, an output that shows a sensitive value must itself be marked sensitive. */
function checkSensitiveOutputs(mod: Module, providers: ProviderSet): void {
  for (const o of mod.outputs.values()) {
    if (o.sensitive) continue;
    for (const ref of sensitiveReferences(o.expr, mod, providers)) {
      throw new ConfigError(
        `Output refers to sensitive values: output "${o.name}" shows ${ref}, which is sensitive`,
        o.range,
        `Add sensitive = true to output "${o.name}" so its value is redacted in logs and the console.`,
      );
    }
  }
  for (const call of mod.modules.values()) checkSensitiveOutputs(call.module, providers);
}

function sensitiveReferences(expr: Expr, mod: Module, providers: ProviderSet): string[] {
  const found: string[] = [];
  const visit = (e: Expr): void => {
    if (e.kind === "scope") {
      const [first, ...rest] = e.steps;
      if (first?.kind !== "attr") return;
      if (e.root === "var" && mod.variables.get(first.name)?.sensitive) found.push(`var.${first.name}`);
      if (e.root === "module") {
        const outputs = mod.modules.get(first.name)?.module.outputs;
        // Only a named output is judged here; what a whole module.NAME shows (say, through a for
        // expression that picks one output) is judged exactly when the plan evaluates it.
        const named = rest.find((s) => s.kind === "attr");
        const o = named?.kind === "attr" ? outputs?.get(named.name) : undefined;
        if (o?.sensitive) found.push(`module.${first.name}.${o.name}`);
        return;
      }
      const isData = e.root === "data" && rest[0]?.kind === "attr";
      const r = isData ? mod.resources.get(`data.${first.name}.${(rest[0] as { name: string }).name}`) : mod.resources.get(`${e.root}.${first.name}`);
      if (r) {
        const schema = (isData ? providers.forData(r.type) : providers.forType(r.type))?.resource;
        const attrStep = rest.slice(isData ? 1 : 0).find((s) => s.kind === "attr");
        if (!attrStep) {
          if (schema && Object.values(schema.attributes).some((a) => a.sensitive)) found.push(r.address);
        } else if (attrStep.kind === "attr" && schema?.attributes[attrStep.name]?.sensitive) found.push(`${r.address}.${attrStep.name}`);
      }
      return;
    }
    if (e.kind === "call" && e.name === "nonsensitive") return; // the module says the result reveals nothing
    for (const child of childExprs(e)) visit(child);
  };
  visit(expr);
  return found;
}

function childExprs(e: Expr): Expr[] {
  switch (e.kind) {
    case "template":
      return e.parts.filter((p): p is Expr => typeof p !== "string");
    case "tuple":
      return e.items;
    case "object":
      return e.items.flatMap((i) => [i.key, i.value]);
    case "postfix":
      return [e.target];
    case "call":
      return e.args;
    case "unary":
      return [e.operand];
    case "binary":
      return [e.left, e.right];
    case "conditional":
      return [e.cond, e.then, e.else];
    case "for":
      return [e.collection, e.key, e.value, e.cond].filter((x): x is Expr => x !== undefined);
    case "templateJoin":
      return [e.items];
    default:
      return [];
  }
}

export function sensitivePaths(schema: ResourceSchema): SensitivePath[] {
  return Object.entries(schema.attributes)
    .filter(([, a]) => a.sensitive)
    .map(([name]) => [{ type: "get_attr" as const, value: name }]);
}

export function sensitiveMask(schema: ResourceSchema): Attrs {
  return Object.fromEntries(Object.entries(schema.attributes).filter(([, a]) => a.sensitive).map(([n]) => [n, true]));
}

/** The attribute UI lines show as [id=…] and its value. */
export function idOf(ctx: OperationContext, type: string, attrs: Attrs | null | undefined, mode: "managed" | "data" = "managed"): { key: string; value: string } | undefined {
  const key = (mode === "data" ? ctx.providers.forData(type) : ctx.providers.forType(type))?.resource.idAttribute ?? "id";
  const v = attrs?.[key];
  return typeof v === "string" || typeof v === "number" ? { key, value: String(v) } : undefined;
}

/** Instance attributes from a state, keyed by address, for expression evaluation. */
export function stateValues(state: StateV4): (addr: string) => Attrs | undefined {
  return (addr) => findInstance(state, addr)?.attributes;
}

/** Turns any thrown value into an EngineError and emits its diagnostics. */
export function reportFailure(ui: Ui, err: unknown): EngineError {
  const e = err instanceof EngineError ? err : new EngineError(err instanceof Error ? err.message : String(err));
  for (const d of e.diagnostics) ui.diagnostic(d);
  return e;
}

/**
 * The provider schema hash of a plan (providers/registry.ts providerSchemaHash) over every type it touches: the
 * configuration's resources and data sources, and the changes and drift it records (objects in state only included).
 * Plan and apply work it out the same way, from the same configuration and changes.
 */
export function planSchemaHash(ctx: OperationContext, changes: Iterable<{ type: string }>): string {
  const types = new Set([...ctx.resources.values()].map((e) => e.r.type));
  for (const c of changes) types.add(c.type);
  return providerSchemaHash(ctx.providers, types);
}
