// Resume a paused job: an approval recorded with who, when and the checksum of the plan they
// reviewed. A different checksum is refused and nothing runs; two approvals of one pause apply once.
import { z } from "zod";
import type { Database } from "@/db/client";
import { approvals } from "@/db/schema";
import { resumeBody } from "@/lib/api/schemas";
import { newId } from "@/lib/ids";
import type { Actor } from "../../actor";
import { recordAudit } from "../../audit";
import { conflict, isUniqueViolation, notFound, PlantonError } from "../../errors";
import { jobActions } from "./lifecycle";
import { jobAuditTarget } from "./queries";
import { lockJob, moveJob, stepsOf } from "./transitions";

export const resumeJobInput = resumeBody.extend({ jobId: z.string().min(1) });

export async function resumeJob(db: Database, actor: Actor, raw: z.input<typeof resumeJobInput>) {
  const input = resumeJobInput.parse(raw);
  try {
    return await db.transaction(async (tx) => {
      const job = await lockJob(tx, input.jobId);
      if (!job || job.orgId !== actor.orgId) throw notFound(`Infra Job ${input.jobId}`, "Check the id, or find it in the component's Infra Jobs tab.");
      const { approve } = jobActions(job, actor.role);
      if (!approve.allowed) throw conflict(`Nothing was approved: ${approve.why}.`);
      const steps = await stepsOf(tx, job.id);
      const next = steps.find((s) => s.status === "queued");
      const reviewed = [...steps].reverse().find((s) => s.status === "completed" && s.result === "succeeded" && s.plan);
      const plan = job.startedAt && reviewed ? reviewed.plan : null;
      if (plan) {
        if (!input.expectedChecksum) {
          throw new PlantonError("PRECONDITION_FAILED", `Nothing was approved: send the checksum of the plan you reviewed (sha256 ${plan.sha256}) so the apply runs exactly that plan.`, "expectedChecksum");
        }
        if (input.expectedChecksum.toLowerCase() !== plan.sha256.toLowerCase()) {
          throw new PlantonError(
            "PRECONDITION_FAILED",
            `Nothing was approved and nothing ran: the plan you reviewed (sha256 ${input.expectedChecksum}) is not this job's plan (sha256 ${plan.sha256}). Review the current plan, then resume with its checksum.`,
            "expectedChecksum",
          );
        }
      }
      const [approval] = await tx
        .insert(approvals)
        .values({ id: newId("approval"), jobId: job.id, pauseOrdinal: next?.ordinal ?? steps.length, userId: actor.userId, userLabel: actor.label, planSha256: plan?.sha256 ?? null, message: input.message })
        .returning();
      const row = await moveJob(tx, job, "approve", { pausedAt: job.pausedAt });
      await recordAudit(tx, actor, {
        action: "job.approve",
        targetId: job.id,
        ...(await jobAuditTarget(tx, job.id)),
        summary: (plan ? `Approved job ${job.id} to carry on with ${next?.step ?? "its next step"} from plan sha256 ${plan.sha256}` : `Started job ${job.id} (manual start)`) + (input.message ? `: “${input.message}”` : ""),
        changes: { approvalId: approval.id, step: next?.step ?? null, planSha256: plan?.sha256 ?? null, message: input.message ?? null },
      });
      return { job: row, approval };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`Nothing more was approved: job ${input.jobId} was approved by someone else at the same moment, and it carries on once.`);
    throw err;
  }
}
