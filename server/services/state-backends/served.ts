// Which backend keeps each component's state, resolved one way for the list, delete, force-unlock and
// Planton-managed usage: the component's own backend, else its state still on Planton-managed storage
// (not moved), else the organization's default for its module's provisioner, else Planton-managed.
import { and, eq, inArray, isNotNull, isNull } from "drizzle-orm";
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
}

/** The provisioner of each component's module: its custom module, else the newest in the org's registry, else the platform's. */
async function provisionersOf(db: Queryable, orgId: string, comps: { id: string; kind: string; customModuleId: string | null }[]) {
  const out = new Map<string, Provisioner | null>();
  const custom = [...new Set(comps.map((c) => c.customModuleId).filter((id): id is string => !!id))];
  const customRows = custom.length ? await db.select({ id: iacModules.id, provisioner: iacModules.provisioner }).from(iacModules).where(inArray(iacModules.id, custom)) : [];
  const byKind = new Map<string, Provisioner | null>();
  for (const c of comps) {
    if (c.customModuleId) {
      out.set(c.id, customRows.find((m) => m.id === c.customModuleId)?.provisioner ?? null);
      continue;
    }
    if (!byKind.has(c.kind)) {
      const rows = await modulesForKind(db, orgId, c.kind);
      byKind.set(c.kind, (rows.find((r) => r.scopeKey === orgId) ?? rows[0])?.provisioner ?? null);
    }
    out.set(c.id, byKind.get(c.kind)!);
  }
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
  const planton = backends.find((b) => b.kind === PLANTON_MANAGED_KIND);
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
    .where(only ? and(eq(infraComponents.orgId, orgId), eq(infraComponents.id, only.componentId)) : eq(infraComponents.orgId, orgId))
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
  const known = new Set(backends.map((b) => b.id));
  return comps.map((c) => {
    const provisioner = provisioners.get(c.id) ?? null;
    const backendId =
      (c.stateBackendId && known.has(c.stateBackendId) ? c.stateBackendId : null) ??
      (onPlanton.has(c.id) ? planton?.id : null) ??
      (provisioner ? defaults.get(provisioner) : null) ??
      planton?.id ??
      "";
    const backend = backends.find((b) => b.id === backendId);
    const key = c.stateKey ?? (backend?.kind === PLANTON_MANAGED_KIND ? plantonManagedKey(orgId, c.id) : defaultStateKey(c.environment, c.name));
    return { componentId: c.id, component: c.name, environment: c.environment, provisioner, backendId, key };
  });
}
