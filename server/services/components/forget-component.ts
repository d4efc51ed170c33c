// Forgetting an Infra Component (admins): Planton lets go of it without destroying anything. Its
// resources keep running, unmanaged; its state (and state history) is kept, readable and exportable.
import { eq } from "drizzle-orm";
import type { z } from "zod";
import type { Database } from "@/db/client";
import { infraComponents } from "@/db/schema";
import { forgetComponentBody } from "@/lib/api/component-schemas";
import type { Actor } from "../../actor";
import { recordAudit } from "../../audit";
import { badRequest, conflict } from "../../errors";
import { stateResourceAddresses } from "../state/component-state";
import { getComponent, unfinishedJobs } from "./queries";
import { assertComponentAction, lockComponent } from "./refusals";
import { getComponentView, type ComponentView } from "./views";
import { firstAndMore } from "@/lib/display";


/** Without confirmName equal to the component's name nothing is forgotten, and the refusal names what would keep running. */
export async function forgetComponent(db: Database, actor: Actor, raw: z.input<typeof forgetComponentBody>): Promise<{ component: ComponentView; unmanaged: string[] }> {
  const input = forgetComponentBody.parse(raw);
  const c = await getComponent(db, actor.orgId, input.id);
  assertComponentAction("forget", c, actor.role);
  await refuseWhileJobsPending(db, c);
  const state = await stateResourceAddresses(db, actor.orgId, c.id);
  if (input.confirmName !== c.name) {
    const what = state.unreadable
      ? `whatever its state in backend ${state.backend} holds (it could not be read: ${state.unreadable})`
      : state.addresses.length
        ? `${state.addresses.length} resource(s) of its state keep running unmanaged: ${firstAndMore(state.addresses, 10)}`
        : "its state holds no resources, so nothing keeps running";
    throw badRequest(
      `Nothing was forgotten: forgetting ${c.name} removes it from Planton without destroying anything, and ${what}. Its state is kept for export. ` +
        `To go ahead, confirm with its name: planton infra component forget ${c.id} --confirm ${c.name} (confirmName in the API); to destroy its resources instead, delete it.`,
      "confirmName",
    );
  }
  await db.transaction(async (tx) => {
    const locked = await lockComponent(tx, c.id);
    assertComponentAction("forget", locked, actor.role);
    await refuseWhileJobsPending(tx, c);
    const now = new Date();
    await tx.update(infraComponents).set({ status: "forgotten", statusReason: null, deletedAt: now, deletedBy: actor.label, updatedAt: now }).where(eq(infraComponents.id, c.id));
    await recordAudit(tx, actor, {
      action: "component.forget",
      targetId: c.id,
      targetName: c.name,
      environment: c.environment,
      summary: `Forgot ${c.kind} ${c.name} in ${c.environment}: nothing was destroyed; ${state.addresses.length} resource(s) keep running unmanaged, and its state is kept`,
      changes: { status: { from: locked.status, to: "forgotten" }, unmanaged: state.addresses, stateBackend: state.backend },
    });
  });
  return { component: await getComponentView(db, actor, c.id), unmanaged: state.addresses };
}

/** A job of a forgotten component would still run against its resources: it ends first. */
async function refuseWhileJobsPending(db: Parameters<typeof unfinishedJobs>[0], c: { id: string; name: string }) {
  const [job] = await unfinishedJobs(db, c.id);
  if (job) {
    throw conflict(
      `Nothing was changed: job ${job.id} of ${c.name} is ${job.status.replace("_", " ")}, and it would go on changing resources Planton no longer manages. Cancel it (planton infra job cancel ${job.id}) or wait for it to end, then forget ${c.name}.`,
    );
  }
}
