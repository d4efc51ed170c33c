// Which module a component's job runs, by the spec's rule: the component's custom module, else the
// latest version in the organization's registry for its kind, else the platform's. Preflight, the
// component views and the registry's "used by" all answer from here.
import { and, eq, inArray, or } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { iacModules } from "@/db/schema";
import type { ModuleRule } from "@/lib/modules";
import { PlantonError } from "../../errors";
import { modulesForKind, newestModuleFirst } from "../catalog";

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

/** The registered version a component pins (`name@version`), for its kind: the organization's or the platform's; the refusal names what exists. */
export async function pinnedModule(db: Queryable, orgId: string, kind: string, ref: string): Promise<ModuleRow> {
  const at = ref.lastIndexOf("@");
  const [name, version] = [ref.slice(0, at), ref.slice(at + 1)];
  const forKind = await modulesForKind(db, orgId, kind);
  const found = forKind.find((m) => m.name === name && m.version === version);
  if (found) return found;
  const named = await db.select().from(iacModules).where(and(eq(iacModules.name, name), or(eq(iacModules.scopeKey, orgId), eq(iacModules.scopeKey, "platform"))));
  const choices = forKind.map(moduleRef).join(", ");
  const why = named.some((m) => m.version === version)
    ? `${ref} provisions ${named.find((m) => m.version === version)!.kind}, not ${kind}`
    : named.length
      ? `${name} has no version ${version} (it has ${named.sort(newestModuleFirst).map((m) => m.version).join(", ")})`
      : `no module ${name} is registered`;
  throw new PlantonError(
    "BAD_REQUEST",
    `Nothing was saved: ${why}. ${choices ? `Pick one of ${kind}'s versions (${choices})` : `Register a module for ${kind} first (planton module register --kind ${kind} …)`}, or leave the module out to follow the registry's latest.`,
    "module",
  );
}
