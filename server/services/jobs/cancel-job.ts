// Cancel: a queued or paused job ends at once; a running job is flagged, finishes its in-flight
// step (the runner hears `cancel` in its heartbeat), and the rest are marked cancelled.
import { and, eq, isNull } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "@/db/client";
import type { Actor } from "../../actor";
import { recordAudit } from "../../audit";
import { conflict, notFound } from "../../errors";
import { REASONS } from "@/lib/job-reasons";
import { jobActions } from "./lifecycle";
import { jobAuditTarget } from "./queries";
import { endRemainingSteps, lockJob, moveJob } from "./transitions";
import { infraJobs, runnerAttempts } from "@/db/schema";

export const cancelJobInput = z.object({ jobId: z.string().min(1) });

export async function cancelJob(db: Database, actor: Actor, raw: z.input<typeof cancelJobInput>) {
  const { jobId } = cancelJobInput.parse(raw);
  return db.transaction(async (tx) => {
    const job = await lockJob(tx, jobId);
    if (!job || job.orgId !== actor.orgId) throw notFound(`Infra Job ${jobId}`, "Check the id, or find it in the component's Infra Jobs tab.");
    if (job.status === "running" && job.cancelRequestedAt) return job; // asked twice: one cancel
    const { cancel } = jobActions(job, actor.role);
    if (!cancel.allowed) throw conflict(`Nothing was cancelled: ${cancel.why}.`);
    if (cancel.when === "after_step") {
      const [row] = await tx
        .update(infraJobs)
        .set({ cancelRequestedAt: new Date(), cancelRequestedBy: actor.label, updatedAt: new Date() })
        .where(and(eq(infraJobs.id, jobId), eq(infraJobs.status, "running")))
        .returning();
      await recordAudit(tx, actor, {
        action: "job.cancel",
        targetId: jobId,
        ...(await jobAuditTarget(tx, jobId)),
        summary: `Asked running job ${jobId} to cancel: its in-flight operation finishes, the rest are cancelled`,
      });
      return row;
    }
    await endRemainingSteps(tx, jobId, "cancel", REASONS.cancelledBy(actor.label));
    // A paused job's runner may have died without ending its attempt: the attempt ends with the job.
    await tx.update(runnerAttempts).set({ endedAt: new Date(), reason: REASONS.cancelledWhile(actor.label, job.status) }).where(and(eq(runnerAttempts.jobId, jobId), isNull(runnerAttempts.endedAt)));
    const row = await moveJob(tx, job, "cancel", { reason: REASONS.cancelledWhile(actor.label, job.status), cancelRequestedAt: new Date(), cancelRequestedBy: actor.label });
    await recordAudit(tx, actor, { action: "job.cancel", targetId: jobId, ...(await jobAuditTarget(tx, jobId)), summary: `Cancelled ${job.status} job ${jobId}`, changes: { from: job.status } });
    return row;
  });
}
