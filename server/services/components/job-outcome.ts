// The end of a component's destroy job decides what becomes of the component: removed when it
// succeeded, kept as delete_failed (with the job's reason and a retry) when it failed or was cancelled.
import { and, eq } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { environments, infraComponents } from "@/db/schema";
import { systemActor } from "../../actor";
import { recordAudit } from "../../audit";
import { endRemainingSteps, lockJob, moveJob, type JobRow } from "../jobs/transitions";
import { unfinishedJobs } from "./queries";

/** Called where a job ends (moveJob, and a destroy born failed by preflight). Does nothing for other jobs. */
export async function onComponentJobCompleted(tx: Queryable, job: JobRow): Promise<void> {
  if (job.operation !== "destroy" || job.status !== "completed") return;
  const [c] = await tx
    .select({ id: infraComponents.id, name: infraComponents.name, kind: infraComponents.kind, environment: environments.name })
    .from(infraComponents)
    .innerJoin(environments, eq(environments.id, infraComponents.environmentId))
    .where(and(eq(infraComponents.id, job.componentId), eq(infraComponents.deleteJobId, job.id), eq(infraComponents.status, "deleting")));
  if (!c) return;
  const now = new Date();
  const target = { targetId: c.id, targetName: c.name, environment: c.environment };
  if (job.result === "succeeded") {
    await tx.update(infraComponents).set({ status: "deleted", statusReason: null, deletedAt: now, deletedBy: job.createdByLabel, updatedAt: now }).where(eq(infraComponents.id, c.id));
    await recordAudit(tx, systemActor(job.orgId), {
      action: "component.remove",
      ...target,
      summary: `Removed ${c.kind} ${c.name} from ${c.environment}: destroy job ${job.id}, asked for by ${job.createdByLabel}, deleted its resources`,
      changes: { jobId: job.id, deletedBy: job.createdByLabel },
    });
    // A job made before the delete that never started (one waiting for its manual start) would otherwise run on what is gone.
    const reason = `Cancelled: ${c.name} was deleted by destroy job ${job.id} before this job started; nothing ran.`;
    for (const other of await unfinishedJobs(tx, c.id)) {
      const row = await lockJob(tx, other.id);
      if (!row || row.status === "running") continue;
      await endRemainingSteps(tx, row.id, "cancel", reason);
      await moveJob(tx, row, "cancel", { reason });
    }
    return;
  }
  const reason = job.reason ?? `the destroy job ended ${job.result}`;
  await tx.update(infraComponents).set({ status: "delete_failed", statusReason: reason, updatedAt: now }).where(eq(infraComponents.id, c.id));
  await recordAudit(tx, systemActor(job.orgId), {
    action: "component.delete_failed",
    ...target,
    result: "failure",
    summary: `${c.kind} ${c.name} in ${c.environment} was not deleted: destroy job ${job.id} ${job.result === "cancelled" ? "was cancelled" : "failed"} (${reason.replace(/\.$/, "")}); it stays, and the delete can be retried`,
    changes: { jobId: job.id, result: job.result, reason },
  });
}
