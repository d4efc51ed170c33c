import { deepEqual, UNKNOWN, type Attrs, type Value } from "../values";

/**
 * A provider's contract. Requests and responses are plain JSON (unknown values are the
 * {"__unknown__": true} marker), so a provider can later move into its own process.
 */
export interface Provider {
  schema(): ProviderSchema;
  configure(config: Attrs): Promise<void>;
  /** The real object's current attributes, or null when it no longer exists. */
  read(req: { address: string; type: string; state: Attrs }): Promise<{ state: Attrs | null }>;
  /** Proposed attributes (unknowns allowed) and which changed attributes force replacement. */
  plan(req: { address: string; type: string; prior: Attrs | null; config: Attrs }): Promise<{ planned: Attrs; requiresReplace: string[] }>;
  /** planned null means delete. Returns the new state, or null once deleted. */
  apply(req: { address: string; type: string; prior: Attrs | null; planned: Attrs | null }): Promise<{ state: Attrs | null }>;
  importState(req: { address: string; type: string; id: string }): Promise<{ state: Attrs }>;
  /** Reads a data source: its configured arguments in, every attribute out. */
  readData?(req: { address: string; type: string; config: Attrs }): Promise<{ state: Attrs }>;
}

export interface AttributeSchema {
  type: "string" | "number" | "bool" | "map" | "list" | "any";
  required?: boolean;
  optional?: boolean;
  computed?: boolean;
  sensitive?: boolean;
  /** Changing it replaces the object. */
  forceNew?: boolean;
  default?: Value;
}

/** A nested block type: `list` and `set` hold a list of objects, `single` one object or null. */
export interface BlockSchema {
  nesting: "list" | "set" | "single";
  attributes: Record<string, AttributeSchema>;
  /** Changing the blocks replaces the object. */
  forceNew?: boolean;
}

export interface ResourceSchema {
  version: number;
  attributes: Record<string, AttributeSchema>;
  blocks?: Record<string, BlockSchema>;
  /** Which attribute UI lines show as [id=…]. */
  idAttribute: string;
}

export interface ProviderSchema {
  /** Local name, e.g. "random". */
  name: string;
  /** Registry source, e.g. "registry.opentofu.org/hashicorp/random". */
  source: string;
  resources: Record<string, ResourceSchema>;
  dataSources?: Record<string, ResourceSchema>;
}

/**
 * The common planning rule: configured attributes come from config, computed ones keep their
 * prior value unless the object is new or replaced, in which case they are unknown.
 */
export function planFromSchema(schema: ResourceSchema, prior: Attrs | null, config: Attrs): { planned: Attrs; requiresReplace: string[] } {
  const requiresReplace: string[] = [];
  if (prior) {
    for (const [name, a] of Object.entries(schema.attributes)) {
      if (a.forceNew && (a.required || a.optional) && !deepEqual(prior[name] ?? null, config[name] ?? null)) requiresReplace.push(name);
    }
    for (const [name, b] of Object.entries(schema.blocks ?? {})) {
      if (b.forceNew && !deepEqual(prior[name] ?? null, config[name] ?? null)) requiresReplace.push(name);
    }
  }
  const fresh = !prior || requiresReplace.length > 0;
  const planned: Attrs = {};
  for (const [name, a] of Object.entries(schema.attributes)) {
    if (a.required || a.optional) planned[name] = config[name] ?? null;
    else planned[name] = fresh ? (UNKNOWN as unknown as Value) : (prior![name] ?? null);
  }
  for (const [name, b] of Object.entries(schema.blocks ?? {})) planned[name] = config[name] ?? (b.nesting === "single" ? null : []);
  return { planned, requiresReplace };
}

export function providerAddress(schema: ProviderSchema): string {
  return `provider["${schema.source}"]`;
}
