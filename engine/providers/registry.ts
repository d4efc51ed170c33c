import { createHash } from "node:crypto";
import type { ProviderConfig } from "../types";
import { canonicalJson } from "../values";
import { createArchiveProvider } from "./archive";
import { createLocalProvider } from "./local";
import type { Provider, ProviderSchema, ResourceSchema } from "./provider";
import { createRandomProvider } from "./random";
import { createTerraformDataProvider } from "./terraform-data";
import { createTestGateProvider } from "./test-gate";
import { createTimeProvider } from "./time";

/** The providers the builtin engine ships, configured for one operation. */
export interface ProviderSet {
  forType(type: string): { provider: Provider; schema: ProviderSchema; resource: ResourceSchema } | undefined;
  /** A data source type: `resource` is the data source's schema. */
  forData(type: string): { provider: Provider; schema: ProviderSchema; resource: ResourceSchema } | undefined;
  resourceTypes(): string[];
  dataSourceTypes(): string[];
}

export async function createProviders(config: ProviderConfig = {}): Promise<ProviderSet> {
  const local = createLocalProvider();
  // archive writes its zips under the local provider's root, through the same confinement.
  const providers: Provider[] = [createRandomProvider(), local, createArchiveProvider(local.files), createTerraformDataProvider(), createTimeProvider()];
  if (config.testGates) providers.push(createTestGateProvider(config.testGates.dir));
  const byType = new Map<string, { provider: Provider; schema: ProviderSchema; resource: ResourceSchema }>();
  const dataByType = new Map<string, { provider: Provider; schema: ProviderSchema; resource: ResourceSchema }>();
  for (const p of providers) {
    const schema = p.schema();
    await p.configure(schema.name === "local" && config.local ? { root: config.local.root, ownerOnly: config.local.ownerOnly === true } : {});
    for (const [type, resource] of Object.entries(schema.resources)) byType.set(type, { provider: p, schema, resource });
    for (const [type, resource] of Object.entries(schema.dataSources ?? {})) dataByType.set(type, { provider: p, schema, resource });
  }
  return {
    forType: (type) => byType.get(type),
    forData: (type) => dataByType.get(type),
    resourceTypes: () => [...byType.keys()].sort(),
    dataSourceTypes: () => [...dataByType.keys()].sort(),
  };
}

/**
 * SHA-256 (hex) of the schemas of the providers serving `types` (resource and data source types), in canonical JSON
 * ordered by provider source. A plan records it, and apply refuses a plan made against other schemas — a runner
 * upgraded between a preview and its approval would read the plan's values with different meanings.
 */
export function providerSchemaHash(providers: ProviderSet, types: Iterable<string>): string {
  const schemas = new Map<string, ProviderSchema>();
  for (const t of types) for (const hit of [providers.forType(t), providers.forData(t)]) if (hit) schemas.set(hit.schema.source, hit.schema);
  const ordered = [...schemas.keys()].sort().map((source) => schemas.get(source));
  return createHash("sha256").update(canonicalJson(ordered)).digest("hex");
}
