// Which module a component's job runs, by the spec's rule: the component's custom module, else the
// latest version in the organization's registry for its kind, else the platform's. Preflight, the
// component views and the registry's "used by" all answer from here.
import { and, eq, inArray, or } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { iacModules } from "@/db/schema";
import type { ModuleRule } from "@/lib/modules";
import { modulesForKind } from "../catalog";

export type ModuleRow = typeof iacModules.$inferSelect;

export interface ModuleChoice {
  rule: ModuleRule;
  /** The custom module the component pins, as name@version (null: it follows the latest). */
  pinned: string | null;
  module: ModuleRow | null;
}

export const moduleRef = (m: Pick<ModuleRow, "name" | "version">) => `${m.name}@${m.version}`;

/** The latest version for a kind: the organization's registry first, then the platform's. */
export function latestOf(rows: ModuleRow[], orgId: string): { rule: ModuleRule; module: ModuleRow | null } {
  const org = rows.find((r) => r.scopeKey === orgId);
  if (org) return { rule: "organization", module: org };
  const platform = rows.find((r) => r.scopeKey === "platform");
  return platform ? { rule: "platform", module: platform } : { rule: "none", module: null };
}

/** Each component's module and the rule that chose it, in a few queries for any number of components. */
export async function componentModules(db: Queryable, orgId: string, comps: { id: string; kind: string; customModuleId: string | null }[]): Promise<Map<string, ModuleChoice>> {
  const customIds = [...new Set(comps.map((c) => c.customModuleId).filter((m): m is string => !!m))];
  const custom = customIds.length
    ? new Map(
        (await db.select().from(iacModules).where(and(inArray(iacModules.id, customIds), or(eq(iacModules.scopeKey, orgId), eq(iacModules.scopeKey, "platform"))))).map((m) => [m.id, m]),
      )
    : new Map<string, ModuleRow>();
  const latest = new Map<string, ReturnType<typeof latestOf>>();
  for (const kind of new Set(comps.filter((c) => !c.customModuleId).map((c) => c.kind))) latest.set(kind, latestOf(await modulesForKind(db, orgId, kind), orgId));
  const out = new Map<string, ModuleChoice>();
  for (const c of comps) {
    if (c.customModuleId) {
      const m = custom.get(c.customModuleId) ?? null;
      out.set(c.id, { rule: "custom", pinned: m ? moduleRef(m) : c.customModuleId, module: m });
    } else out.set(c.id, { pinned: null, ...latest.get(c.kind)! });
  }
  return out;
}
