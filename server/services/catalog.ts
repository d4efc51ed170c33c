import { and, eq, inArray, or } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { catalogKinds, iacModules, moduleBundles } from "@/db/schema";
import { PLATFORM_CATALOG, type SpecField } from "@/lib/catalog";
import { newId } from "@/lib/ids";
import { newestModuleFirst } from "@/lib/modules";
import { notFound } from "../errors";
import { readModuleFacts } from "./modules/inputs";
import { readModuleBundle } from "./modules/read-folder";

export interface CatalogKind {
  id: string;
  kind: string;
  title: string;
  description: string;
  provider: string;
  fields: SpecField[];
  scope: "platform" | "organization";
}

const toKind = (r: typeof catalogKinds.$inferSelect): CatalogKind => ({
  id: r.id,
  kind: r.kind,
  title: r.title,
  description: r.description,
  provider: r.provider,
  fields: (r.specSchema as { fields: SpecField[] }).fields,
  scope: r.orgId ? "organization" : "platform",
});

/** Kinds an organization can use: its own, then the platform's (an org kind shadows a platform kind of the same name). */
export async function listCatalogKinds(db: Queryable, orgId: string): Promise<CatalogKind[]> {
  const rows = await db.select().from(catalogKinds).where(inArray(catalogKinds.scopeKey, [orgId, "platform"]));
  const byKind = new Map<string, CatalogKind>();
  for (const r of rows.sort((a) => (a.orgId ? -1 : 1))) if (!byKind.has(r.kind)) byKind.set(r.kind, toKind(r));
  return [...byKind.values()].sort((a, b) => a.title.localeCompare(b.title));
}

export async function getCatalogKind(db: Queryable, orgId: string, kind: string): Promise<CatalogKind> {
  const kinds = await listCatalogKinds(db, orgId);
  const found = kinds.find((k) => k.kind === kind);
  if (!found) throw notFound(`Catalog kind ${kind}`, `Use one of ${kinds.map((k) => k.kind).join(", ")}.`);
  return found;
}

/** Writes the platform catalog (kinds and their builtin modules) into the platform registry; safe to run at every start. */
export async function ensurePlatformCatalog(db: Queryable): Promise<void> {
  for (const def of PLATFORM_CATALOG) {
    await db
      .insert(catalogKinds)
      .values({ id: newId("catalogKind"), orgId: null, scopeKey: "platform", kind: def.kind, title: def.title, description: def.description, provider: def.provider, specSchema: { fields: def.fields } })
      .onConflictDoUpdate({
        target: [catalogKinds.scopeKey, catalogKinds.kind],
        set: { title: def.title, description: def.description, provider: def.provider, specSchema: { fields: def.fields } },
      });
    if (def.module) {
      // The platform's builtin modules: their files are the folder's; what the registry shows of them (checksum, inputs, README) is read from it.
      const bundle = readModuleBundle(def.module.source);
      const facts = bundle ? { sha256: bundle.sha256, size: Object.values(bundle.files).reduce((n, t) => n + Buffer.byteLength(t), 0), fileCount: Object.keys(bundle.files).length } : null;
      if (bundle && facts) await db.insert(moduleBundles).values({ sha256: facts.sha256, files: bundle.files, size: facts.size, fileCount: facts.fileCount }).onConflictDoNothing();
      const described = {
        sourceKind: "builtin" as const,
        bundleSha256: facts?.sha256 ?? null,
        size: facts?.size ?? 0,
        fileCount: facts?.fileCount ?? 0,
        readme: bundle?.files["README.md"] ?? "",
        inputs: bundle ? readModuleFacts(bundle.files).inputs : [],
      };
      await db
        .insert(iacModules)
        .values({ id: newId("iacModule"), orgId: null, scopeKey: "platform", kind: def.kind, ...def.module, ...described })
        .onConflictDoUpdate({ target: [iacModules.scopeKey, iacModules.name, iacModules.version], set: { source: def.module.source, ...described } });
    }
  }
}

type ModuleRow = typeof iacModules.$inferSelect;

/** Newest version first: the one rule, in lib/modules.ts. */
export { newestModuleFirst };

/** Modules registered for a kind in the org registry and the platform registry, newest version first. */
export async function modulesForKind(db: Queryable, orgId: string, kind: string): Promise<ModuleRow[]> {
  const rows = await db
    .select()
    .from(iacModules)
    .where(and(eq(iacModules.kind, kind), or(eq(iacModules.scopeKey, orgId), eq(iacModules.scopeKey, "platform"))));
  return rows.sort(newestModuleFirst);
}
