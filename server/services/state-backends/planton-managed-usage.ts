// What is still on Planton-managed storage: every component whose state is kept there and was not
// moved, with its environment, its module's provisioner, size and serial; totals and per environment.
import { and, asc, eq, isNotNull, isNull, sql } from "drizzle-orm";
import type { z } from "zod";
import type { Queryable } from "@/db/client";
import { firstOf, plantonManagedUsageInput } from "@/lib/api/state-schemas";
import { environments, infraComponents, stateObjects } from "@/db/schema";
import type { Actor } from "../../actor";
import { plantonStateSize, plantonStoredState } from "./planton-managed-store";
import { provisionersOf } from "./served";

/** Every state on Planton-managed storage not moved yet, with its component's provisioner. */
export async function unmovedPlantonStates(db: Queryable, orgId: string, exact: boolean) {
  const rows = await db
    .select({
      componentId: stateObjects.componentId,
      key: stateObjects.key,
      serial: stateObjects.serial,
      size: plantonStateSize,
      checksum: stateObjects.checksum,
      // Every write keeps the state's size and checksum on its row; a row not written since they were kept (migration
      // 0024) is measured from its document: read for the exact figures (the dry run, the usage), estimated for a start.
      state: exact ? sql<unknown>`case when ${stateObjects.size} is null or ${stateObjects.checksum} is null then ${stateObjects.state} end` : sql<unknown>`null`,
      component: infraComponents.name,
      kind: infraComponents.kind,
      customModuleId: infraComponents.customModuleId,
      environment: environments.name,
      updatedAt: stateObjects.updatedAt,
    })
    .from(stateObjects)
    .innerJoin(infraComponents, eq(infraComponents.id, stateObjects.componentId))
    .innerJoin(environments, eq(environments.id, infraComponents.environmentId))
    .where(and(eq(stateObjects.orgId, orgId), isNotNull(stateObjects.state), isNull(stateObjects.movedToBackendId)))
    .orderBy(asc(environments.name), asc(infraComponents.name));
  const provisioners = await provisionersOf(db, orgId, rows.map((r) => ({ id: r.componentId, kind: r.kind, customModuleId: r.customModuleId })));
  return rows.map((r) => {
    const stored = r.state == null ? null : plantonStoredState(r.state);
    return { ...r, provisioner: provisioners.get(r.componentId) ?? null, size: stored?.bytes.byteLength ?? Number(r.size), checksum: stored?.checksum ?? r.checksum };
  });
}

/** Count and size of `states` per `group`, in the order the groups first come. */
function tally<T extends { size: number }, K extends string>(states: T[], group: (s: T) => K): [K, { count: number; size: number }][] {
  const by = new Map<K, { count: number; size: number }>();
  for (const s of states) {
    const t = by.get(group(s)) ?? { count: 0, size: 0 };
    t.count += 1;
    t.size += s.size;
    by.set(group(s), t);
  }
  return [...by];
}

export async function plantonManagedUsage(db: Queryable, actor: Actor, raw: z.input<typeof plantonManagedUsageInput> = {}) {
  const { limit } = plantonManagedUsageInput.parse(raw);
  const states = (await unmovedPlantonStates(db, actor.orgId, true)).map((s) => ({
    componentId: s.componentId,
    component: s.component,
    environment: s.environment,
    kind: s.kind,
    key: s.key,
    serial: s.serial,
    checksum: s.checksum,
    updatedAt: s.updatedAt,
    // A component whose module no longer resolves wrote its state with the builtin engine, the catalog's own.
    provisioner: s.provisioner ?? ("builtin" as const),
    size: s.size,
  }));
  return {
    states: firstOf(states, limit),
    totals: { count: states.length, size: states.reduce((n, s) => n + s.size, 0) },
    // The states come by environment (its name as Postgres orders it); the provisioners are put in order of name.
    byEnvironment: tally(states, (s) => s.environment).map(([environment, t]) => ({ environment, ...t })),
    byProvisioner: tally(states, (s) => s.provisioner)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([provisioner, t]) => ({ provisioner, ...t })),
  };
}
