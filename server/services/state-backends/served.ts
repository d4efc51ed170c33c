// Which backend keeps each component's state, resolved one way for the list, delete, force-unlock and
// Planton-managed usage: the component's own backend, else its state still on Planton-managed storage
// (not moved), else the organization's default for its module's provisioner, else Planton-managed.
import { and, eq, inArray, isNotNull, isNull, ne } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { environments, iacModules, infraComponents, stateBackendDefaults, stateBackends, stateObjects } from "@/db/schema";
import type { Provisioner } from "@/lib/catalog";
import { defaultStateKey, PLANTON_MANAGED_KIND } from "@/lib/state-backend-kinds";
import { modulesForKind } from "../catalog";
import { plantonManagedKey } from "./planton-managed-store";

export type BackendRow = typeof stateBackends.$inferSelect;

export interface ServedComponent {
  componentId: string;
  component: string;
  environment: string;
  /** The provisioner of the component's module; null when no module resolves. */
  provisioner: Provisioner | null;
  backendId: string;
  /** The state's key in that backend. */
  key: string;
  /** Which step of the rule chose the backend. */
  rule: BackendRuleStep;
}

/** Each component's provisioner, as preflight resolves its module: the custom module, else the organization's registry, else the platform's. */
export async function provisionersOf(db: Queryable, orgId: string, comps: { id: string; kind: string; customModuleId: string | null }[]): Promise<Map<string, Provisioner | null>> {
  const out = new Map<string, Provisioner | null>();
  const custom = [...new Set(comps.map((c) => c.customModuleId).filter((m): m is string => !!m))];
  const customRows = custom.length ? await db.select({ id: iacModules.id, provisioner: iacModules.provisioner }).from(iacModules).where(inArray(iacModules.id, custom)) : [];
  const byModule = new Map(customRows.map((r) => [r.id, r.provisioner as Provisioner]));
  const byKind = new Map<string, Provisioner | null>();
  for (const kind of new Set(comps.filter((c) => !c.customModuleId).map((c) => c.kind))) {
    const rows = await modulesForKind(db, orgId, kind);
    const pick = rows.find((r) => r.scopeKey === orgId) ?? rows.find((r) => r.scopeKey === "platform");
    byKind.set(kind, (pick?.provisioner as Provisioner) ?? null);
  }
  for (const c of comps) out.set(c.id, c.customModuleId ? (byModule.get(c.customModuleId) ?? null) : (byKind.get(c.kind) ?? null));
  return out;
}

/** The organization's backends and its default backend id per provisioner. */
export async function backendsAndDefaults(db: Queryable, orgId: string) {
  const backends = await db.select().from(stateBackends).where(eq(stateBackends.orgId, orgId)).orderBy(stateBackends.name);
  const defaults = await db.select().from(stateBackendDefaults).where(eq(stateBackendDefaults.orgId, orgId));
  return { backends, defaults: new Map(defaults.map((d) => [d.provisioner as Provisioner, d.backendId])) };
}

/** Every component of the organization (or the ones named) with the backend and key its state is kept under. */
export async function servedComponents(db: Queryable, orgId: string, only?: { componentId: string }): Promise<ServedComponent[]> {
  const { backends, defaults } = await backendsAndDefaults(db, orgId);
  const comps = await db
    .select({
      id: infraComponents.id,
      name: infraComponents.name,
      kind: infraComponents.kind,
      customModuleId: infraComponents.customModuleId,
      stateBackendId: infraComponents.stateBackendId,
      stateKey: infraComponents.stateKey,
      environment: environments.name,
    })
    .from(infraComponents)
    .innerJoin(environments, eq(environments.id, infraComponents.environmentId))
    // A deleted component's destroy emptied its state, so it holds no backend (asked by id, it is still found).
    .where(only ? and(eq(infraComponents.orgId, orgId), eq(infraComponents.id, only.componentId)) : and(eq(infraComponents.orgId, orgId), ne(infraComponents.status, "deleted")))
    .orderBy(environments.name, infraComponents.name);
  if (!comps.length) return [];
  const onPlanton = new Set(
    (
      await db
        .select({ componentId: stateObjects.componentId })
        .from(stateObjects)
        .where(and(eq(stateObjects.orgId, orgId), isNotNull(stateObjects.state), isNull(stateObjects.movedToBackendId)))
    ).map((r) => r.componentId),
  );
  const provisioners = await provisionersOf(db, orgId, comps);
  return comps.map((c) => {
    const provisioner = provisioners.get(c.id) ?? null;
    const { backend, rule } = backendRule({ backends, defaults }, { stateBackendId: c.stateBackendId, stateOnPlanton: onPlanton.has(c.id), provisioner });
    const key = stateKeyOf(orgId, { id: c.id, name: c.name, environment: c.environment, stateKey: c.stateKey }, backend);
    return { componentId: c.id, component: c.name, environment: c.environment, provisioner, backendId: backend?.id ?? "", key, rule };
  });
}

/** Which step of the rule chose a component's backend. */
export type BackendRuleStep = "component" | "existing_state" | "default" | "planton_managed" | "none";

/**
 * The one rule for where a component's state is kept: the component's own backend; else its state
 * still on Planton-managed storage (a default changed later is for new components); else the
 * organization's default for its module's provisioner; else Planton-managed.
 */
export function backendRule(
  org: { backends: BackendRow[]; defaults: Map<Provisioner, string> },
  c: { stateBackendId: string | null; stateOnPlanton: boolean; provisioner: string | null },
): { backend: BackendRow | null; rule: BackendRuleStep } {
  const byId = (id: string | null | undefined) => (id ? (org.backends.find((b) => b.id === id) ?? null) : null);
  const planton = org.backends.find((b) => b.kind === PLANTON_MANAGED_KIND) ?? null;
  const own = byId(c.stateBackendId);
  if (own) return { backend: own, rule: "component" };
  if (c.stateBackendId) return { backend: null, rule: "none" };
  if (c.stateOnPlanton && planton) return { backend: planton, rule: "existing_state" };
  const fallback = c.provisioner ? byId(org.defaults.get(c.provisioner as Provisioner)) : null;
  if (fallback) return { backend: fallback, rule: "default" };
  return planton ? { backend: planton, rule: "planton_managed" } : { backend: null, rule: "none" };
}

/** The key a component's state has in its backend: Planton-managed's per-component key; else the one a move chose, else `<environment>/<component>/terraform.tfstate`. */
export function stateKeyOf(orgId: string, c: { id: string; name: string; environment: string; stateKey: string | null }, backend: Pick<BackendRow, "kind"> | null): string {
  if (backend?.kind === PLANTON_MANAGED_KIND) return plantonManagedKey(orgId, c.id);
  return c.stateKey ?? defaultStateKey(c.environment, c.name);
}
