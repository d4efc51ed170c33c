// Deleting an Infra Component: a destroy job deletes its resources under the flow control that applies
// (prod may pause with the destroy plan to review); its end (job-outcome.ts) removes the component or
// leaves it delete_failed with the reason. A component that never ran anything is removed at once.
import { eq } from "drizzle-orm";
import type { z } from "zod";
import type { Database } from "@/db/client";
import { infraComponents } from "@/db/schema";
import { deleteComponentBody } from "@/lib/api/component-schemas";
import type { Actor } from "../../actor";
import { recordAudit } from "../../audit";
import { createJob } from "../jobs/create-job";
import { onComponentJobCompleted } from "./job-outcome";
import { getComponent, jobAhead, mayHaveResources, unfinishedJobs } from "./queries";
import { assertComponentAction, lockComponent } from "./refusals";
import { getComponentView, type ComponentChange } from "./views";

/** Runs a destroy job for the component (one that never ran a job is removed at once); also the retry of a failed delete. */
export async function deleteComponent(db: Database, actor: Actor, raw: z.input<typeof deleteComponentBody>, opts: { rerunOf?: string } = {}): Promise<ComponentChange> {
  const input = deleteComponentBody.parse(raw);
  const c = await getComponent(db, actor.orgId, input.id);
  assertComponentAction("delete", c, actor.role);
  const target = { targetId: c.id, targetName: c.name, environment: c.environment };
  const out = await db.transaction(async (tx) => {
    // Under the lock no job of it can be created; one already queued would show below.
    const locked = await lockComponent(tx, c.id);
    assertComponentAction("delete", locked, actor.role);
    const now = new Date();
    if (!(await unfinishedJobs(tx, c.id)).length && !(await mayHaveResources(tx, c.id))) {
      await tx.update(infraComponents).set({ status: "deleted", statusReason: null, deletedAt: now, deletedBy: actor.label, updatedAt: now }).where(eq(infraComponents.id, c.id));
      await recordAudit(tx, actor, {
        action: "component.delete",
        ...target,
        summary: `Deleted ${c.kind} ${c.name} in ${c.environment} at once: no job of it ever ran, so there was nothing to destroy`,
        changes: { status: { from: locked.status, to: "deleted" }, jobId: null },
      });
      return { job: null, queuedBehind: null };
    }
    const queuedBehind = await jobAhead(tx, c.id);
    const job = await createJob(tx, actor, { componentId: c.id, operation: "destroy", versionMessage: input.versionMessage }, opts);
    await tx.update(infraComponents).set({ status: "deleting", statusReason: null, deleteJobId: job.id, updatedAt: now }).where(eq(infraComponents.id, c.id));
    const retry = locked.status === "delete_failed";
    await recordAudit(tx, actor, {
      action: "component.delete",
      ...target,
      summary: `${retry ? "Retried the delete of" : "Asked to delete"} ${c.kind} ${c.name} in ${c.environment}: destroy job ${job.id} deletes its resources${queuedBehind ? ` after job ${queuedBehind}` : ""}, then the component is removed`,
      changes: { status: { from: locked.status, to: "deleting" }, jobId: job.id, ...(retry ? { retryOf: locked.deleteJobId } : {}), ...(queuedBehind ? { queuedBehind } : {}) },
    });
    // A destroy refused by preflight is born ended (no moveJob): its outcome is decided now.
    if (job.status === "completed") await onComponentJobCompleted(tx, job);
    return { job, queuedBehind };
  });
  return { component: await getComponentView(db, actor, c.id), ...out };
}
