import type { Block, SourceRange } from "../config/ast";
import { references } from "../config/evaluate";
import type { Module } from "../config/module";
import { ConfigError } from "../errors";
import { Graph } from "../graph/graph";
import type { ResourceEntry } from "./context";

/** References in a block body (nested and dynamic blocks included), leaving out a dynamic block's iterator. */
function blockReferences(blocks: Block[], iterators: string[] = []): { addr: string; range: SourceRange }[] {
  const out: { addr: string; range: SourceRange }[] = [];
  const keep = (refs: { addr: string; range: SourceRange }[], its: string[]) => refs.filter((x) => !its.includes(x.addr.split(".")[0]!));
  for (const b of blocks) {
    if (b.type === "dynamic") {
      const forEach = b.body.attributes.find((a) => a.name === "for_each");
      if (forEach) out.push(...keep(references(forEach.expr), iterators));
      const itAttr = b.body.attributes.find((a) => a.name === "iterator");
      const it = itAttr?.expr.kind === "scope" ? itAttr.expr.root : b.labels[0]!;
      const its = [...iterators, it];
      for (const c of b.body.blocks) {
        out.push(...keep(c.body.attributes.flatMap((a) => references(a.expr)), its));
        out.push(...blockReferences(c.body.blocks, its));
      }
    } else {
      out.push(...keep(b.body.attributes.flatMap((a) => references(a.expr)), iterators));
      out.push(...blockReferences(b.body.blocks, iterators));
    }
  }
  return out;
}

/**
 * The configuration graph over the whole module tree. Nodes are configuration addresses:
 * `var.x`, `local.x`, `local_file.page`, `data.local_file.seed`, `output.url`, a module call
 * `module.site`, and the same inside modules (`module.site.var.x`, `module.site.output.url`…).
 * Everything inside a module waits for its call node, which waits for the call's count,
 * for_each and depends_on.
 */
export function buildGraph(root: Module, resources: Map<string, ResourceEntry>): Graph {
  const g = new Graph();
  const moduleDeps: { node: string; prefix: string }[] = [];
  const visit = (mod: Module, prefix: string, callNode: string | null): void => {
    const resolve = (ref: { addr: string; range: SourceRange }): string[] => {
      const parts = ref.addr.split(".");
      const [root, name] = parts as [string, string];
      if (root === "var") {
        if (!mod.variables.has(name)) {
          throw new ConfigError(`Reference to undeclared input variable: no variable named "${name}" is declared`, ref.range, `Declare it with a variable "${name}" block, or fix the reference.`);
        }
        return [`${prefix}var.${name}`];
      }
      if (root === "local") {
        if (!mod.locals.has(name)) throw new ConfigError(`Reference to undeclared local value: no local value named "${name}" is defined`, ref.range);
        return [`${prefix}local.${name}`];
      }
      if (root === "module") {
        const call = mod.modules.get(name);
        if (!call) throw new ConfigError(`Reference to undeclared module: no module call named "${name}" is declared in this module`, ref.range, `Add a module "${name}" block, or fix the reference.`);
        const output = parts[2];
        if (output !== undefined) {
          if (!call.module.outputs.has(output)) {
            throw new ConfigError(`Unsupported attribute: module "${name}" has no output named "${output}"`, ref.range, `Its outputs: ${[...call.module.outputs.keys()].join(", ") || "(none)"}.`);
          }
          return [`${prefix}module.${name}.output.${output}`];
        }
        const all = [...call.module.outputs.keys()].map((o) => `${prefix}module.${name}.output.${o}`);
        return all.length ? all : [`${prefix}module.${name}`];
      }
      if (root === "data") {
        if (!mod.resources.has(ref.addr)) throw new ConfigError(`Reference to undeclared data source: a data "${parts[1]}" "${parts[2]}" block has not been declared in the module`, ref.range);
        return [prefix + ref.addr];
      }
      if (!mod.resources.has(ref.addr)) {
        throw new ConfigError(`Reference to undeclared resource: a managed resource "${root}" "${name}" has not been declared in the module`, ref.range);
      }
      return [prefix + ref.addr];
    };
    const link = (node: string, refs: { addr: string; range: SourceRange }[]) => {
      g.add(node);
      if (callNode) g.connect(node, callNode);
      for (const ref of refs) for (const target of resolve(ref)) g.connect(node, target);
    };
    const dependsOn = (node: string, deps: { addr: string; range: SourceRange }[]) => {
      for (const d of deps) {
        if (d.addr.startsWith("module.")) {
          if (!mod.modules.has(d.addr.slice("module.".length))) throw new ConfigError(`Invalid depends_on: no module call named "${d.addr.slice(7)}" is declared in this module`, d.range);
          moduleDeps.push({ node, prefix: `${prefix}${d.addr}.` });
          g.connect(node, prefix + d.addr);
        } else link(node, [d]);
      }
    };
    if (!callNode) for (const v of mod.variables.keys()) g.add(`var.${v}`);
    for (const l of mod.locals.values()) link(`${prefix}local.${l.name}`, references(l.expr));
    for (const r of mod.resources.values()) {
      const node = prefix + r.address;
      const refs = [...r.attributes.flatMap((a) => references(a.expr)), ...blockReferences(r.blocks)];
      if (r.count) refs.push(...references(r.count));
      if (r.forEach) refs.push(...references(r.forEach));
      for (const t of r.lifecycle.replaceTriggeredBy) refs.push(...references(t));
      link(node, refs);
      dependsOn(node, r.dependsOn);
    }
    for (const o of mod.outputs.values()) link(`${prefix}output.${o.name}`, references(o.expr));
    for (const call of mod.modules.values()) {
      const node = `${prefix}module.${call.name}`;
      const refs = [...(call.count ? references(call.count) : []), ...(call.forEach ? references(call.forEach) : [])];
      link(node, refs);
      dependsOn(node, call.dependsOn);
      for (const v of call.module.variables.keys()) {
        const input = call.inputs.find((a) => a.name === v);
        link(`${node}.var.${v}`, input ? references(input.expr) : []);
        g.connect(`${node}.var.${v}`, node);
      }
      visit(call.module, `${node}.`, node);
    }
  };
  visit(root, "", null);
  // depends_on = [module.x]: wait for every resource inside it.
  for (const { node, prefix } of moduleDeps) {
    for (const addr of resources.keys()) if (addr.startsWith(prefix)) g.connect(node, addr);
  }
  return g;
}

