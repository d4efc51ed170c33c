// An admin's force-unlock of a component's state, on the backend that keeps it (OpenTofu's
// `force-unlock`): the lock is removed whatever its ID, and the lock info removed is recorded.
import { and, eq } from "drizzle-orm";
import type { Database } from "@/db/client";
import { stateBackends } from "@/db/schema";
import type { Actor } from "../../actor";
import { recordAudit } from "../../audit";
import { notFound, PlantonError } from "../../errors";
import { accessErrorSentence } from "./access-test";
import { withBackend } from "./open-store";
import { servedComponents } from "./served";

export async function forceUnlockComponentState(db: Database, actor: Actor, input: { componentId: string }) {
  const [served] = await servedComponents(db, actor.orgId, { componentId: input.componentId });
  if (!served) throw notFound(`Infra Component ${input.componentId}`, "Nothing was unlocked. Check the component's id in Infra Components.");
  const [backend] = await db.select().from(stateBackends).where(and(eq(stateBackends.orgId, actor.orgId), eq(stateBackends.id, served.backendId)));
  if (!backend) throw notFound(`The state backend of ${served.component}`, "Nothing was unlocked. Set a state backend on the component, or a default in Settings → State Backends.");
  const released = await withBackend(db, backend, (b) => b.forceUnlock(served.key)).catch((err: unknown) => {
    if (err instanceof PlantonError) throw err;
    throw new PlantonError("PRECONDITION_FAILED", `The state of ${served.component} was not unlocked: backend ${backend.name} answered that ${accessErrorSentence(err)}. Fix that, then force-unlock again.`);
  });
  if (released) {
    await recordAudit(db, actor, {
      action: "state.force_unlock",
      targetId: served.componentId,
      targetName: served.component,
      environment: served.environment,
      summary: `Force-unlocked the state of ${served.component} (${served.environment}) in ${backend.name}: lock ${released.ID} held by ${released.Who} for ${released.Operation || "an operation"} since ${released.Created}`,
      changes: { backend: backend.name, key: served.key, released },
    });
  }
  return { componentId: served.componentId, released: released ? { ...released } : null };
}
