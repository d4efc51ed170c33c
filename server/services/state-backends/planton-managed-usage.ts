// What is still on Planton-managed storage: every component whose state is kept there and was not
// moved, with its environment, its module's provisioner, size and serial; totals and per environment.
import { and, eq, isNotNull, isNull } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { environments, infraComponents, stateObjects } from "@/db/schema";
import type { Actor } from "../../actor";
import { plantonStateBytes } from "./planton-managed-store";
import { servedComponents } from "./served";

export async function plantonManagedUsage(db: Queryable, actor: Actor) {
  const rows = await db
    .select({
      componentId: stateObjects.componentId,
      component: infraComponents.name,
      environment: environments.name,
      kind: infraComponents.kind,
      key: stateObjects.key,
      state: stateObjects.state,
      serial: stateObjects.serial,
      checksum: stateObjects.checksum,
      updatedAt: stateObjects.updatedAt,
    })
    .from(stateObjects)
    .innerJoin(infraComponents, eq(infraComponents.id, stateObjects.componentId))
    .innerJoin(environments, eq(environments.id, infraComponents.environmentId))
    .where(and(eq(stateObjects.orgId, actor.orgId), isNotNull(stateObjects.state), isNull(stateObjects.movedToBackendId)))
    .orderBy(environments.name, infraComponents.name);
  const provisioners = new Map((await servedComponents(db, actor.orgId)).map((s) => [s.componentId, s.provisioner]));
  const states = rows.map(({ state, ...r }) => ({
    ...r,
    // A component whose module no longer resolves wrote its state with the builtin engine, the catalog's own.
    provisioner: provisioners.get(r.componentId) ?? ("builtin" as const),
    // The bytes a move copies (plantonStateBytes), so a dry run's sizes and these agree.
    size: plantonStateBytes(state).byteLength,
  }));
  const byEnv = new Map<string, { environment: string; count: number; size: number }>();
  for (const s of states) {
    const e = byEnv.get(s.environment) ?? { environment: s.environment, count: 0, size: 0 };
    e.count += 1;
    e.size += s.size;
    byEnv.set(s.environment, e);
  }
  return {
    states,
    totals: { count: states.length, size: states.reduce((n, s) => n + s.size, 0) },
    byEnvironment: [...byEnv.values()],
  };
}
