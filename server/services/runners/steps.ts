// A runner reports each step's start and finish; the server decides what the job does next
// (continue, pause for approval, complete, or finish cancelled) through the lifecycle.
import { and, eq } from "drizzle-orm";
import type { Database, Queryable } from "@/db/client";
import { approvals, infraJobs } from "@/db/schema";
import type { StepFinishResponse, StepName, StepStartResponse } from "@/lib/runner-protocol";
import { stepFinishRequest } from "@/lib/runner-protocol";
import type { z } from "zod";
import { conflict, PlantonError } from "../../errors";
import { REASONS } from "@/lib/job-reasons";
import { afterStep, approvalGatesChanges, CHANGING_STEPS } from "../jobs/lifecycle";
import { appendEvents } from "../jobs/events";
import { carryOut, lockJob, moveStep, stepsOf, type JobRow } from "../jobs/transitions";
import { sameAttempt, type JobAccess } from "./job-access";
import { observeStep } from "../../metrics";

async function clearOutputs(tx: Queryable, jobId: string) {
  await tx.update(infraJobs).set({ outputs: {} }).where(eq(infraJobs.id, jobId));
  await appendEvents(tx, jobId, [{ operation: "destroy", type: "outputs", payload: { outputs: {} } }]);
}

function assertHolds(job: JobRow | undefined, access: JobAccess): asserts job is JobRow {
  if (!job || job.currentAttemptId !== access.attemptId) {
    throw conflict(`Nothing was done: job ${access.jobId} is no longer held by attempt ${access.attemptId}. Stop working on it.`);
  }
}

export async function startStep(db: Database, access: JobAccess, step: StepName, body: { attemptId: string }): Promise<StepStartResponse> {
  sameAttempt(access, body.attemptId);
  return db.transaction(async (tx) => {
    const job = await lockJob(tx, access.jobId);
    assertHolds(job, access);
    if (job.status === "completed" && job.result === "cancelled") return { proceed: false };
    if (job.status !== "running") throw conflict(`Nothing was started: job ${job.id} is ${job.status}, not running.`);
    const steps = await stepsOf(tx, job.id);
    const running = steps.find((s) => s.status === "running");
    if (running?.step === step) return { proceed: true }; // a retried start
    if (job.cancelRequestedAt) {
      // Cancel lands at the step boundary: nothing more starts.
      await carryOut(tx, job, { job: "finish_cancelled", rest: "cancel" }, { step, result: "succeeded", jobReason: REASONS.cancelledRest(job.cancelRequestedBy) });
      return { proceed: false };
    }
    const next = steps.find((s) => s.status === "queued");
    if (running || !next || next.step !== step) {
      throw conflict(`Nothing was started: the next step of job ${job.id} is ${running ? `${running.step} (still running)` : (next?.step ?? "none")}, not ${step}.`);
    }
    if (CHANGING_STEPS.includes(step) && job.policy !== null && approvalGatesChanges(job.operation, job.policy)) {
      // The gate holds whatever the runner does: no apply or destroy without an approval of this job's reviewed plan.
      const preview = [...steps].reverse().find((s) => s.step === "preview" && s.result === "succeeded" && s.plan);
      const [approval] = await tx.select().from(approvals).where(and(eq(approvals.jobId, job.id), eq(approvals.pauseOrdinal, next.ordinal)));
      const reviewed = preview?.plan?.sha256;
      if (!approval?.planSha256 || !reviewed || approval.planSha256 !== reviewed) {
        throw new PlantonError(
          "PRECONDITION_FAILED",
          `Nothing was started: ${step} of job ${job.id} needs an approval of its reviewed plan first (flow control pauses before apply). Approve the job in the console or with planton infra job resume ${job.id}.`,
        );
      }
    }
    await moveStep(tx, next, "start");
    return { proceed: true };
  });
}

export async function finishStep(db: Database, access: JobAccess, step: StepName, body: z.infer<typeof stepFinishRequest>): Promise<StepFinishResponse> {
  sameAttempt(access, body.attemptId);
  let startedAt: Date | null | undefined;
  const answer = await db.transaction(async (tx): Promise<StepFinishResponse> => {
    const job = await lockJob(tx, access.jobId);
    assertHolds(job, access);
    const steps = await stepsOf(tx, job.id);
    const current = steps.find((s) => s.step === step && s.status === "running");
    if (!current) {
      const done = steps.find((s) => s.step === step && s.status === "completed" && s.result === body.result);
      if (done) return { next: job.status === "running" ? "continue" : "stop" }; // a retried finish
      throw conflict(`Nothing was recorded: step ${step} of job ${job.id} is not running.`);
    }
    const reason = body.result === "failed" ? (body.reason ?? REASONS.earlierFailed(step)) : null;
    startedAt = current.startedAt;
    await moveStep(tx, current, body.result === "succeeded" ? "succeed" : "fail", { reason, ...(body.plan ? { plan: body.plan } : {}) });
    // What a destroy removed has no outputs any more, whatever an earlier step of the job reported.
    if (step === "destroy" && body.result === "succeeded") await clearOutputs(tx, job.id);
    const remaining = steps.filter((s) => s.status === "queued").length;
    const next = afterStep({ result: body.result, cancelRequested: !!job.cancelRequestedAt, pauseAfter: current.pauseAfter === 1, remaining });
    return { next: await carryOut(tx, job, next, { step, result: body.result, reason, planSha256: body.plan?.sha256 }) };
  });
  // Only a finish that recorded the step (not a retried one) is a step's duration.
  if (startedAt !== undefined) observeStep(step, body.result, startedAt);
  return answer;
}
