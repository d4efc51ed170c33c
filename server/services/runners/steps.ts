// A runner reports each step's start and finish; the server decides what the job does next
// (continue, pause for approval, complete, or finish cancelled) through the lifecycle.
import type { Database } from "@/db/client";
import type { StepFinishResponse, StepName, StepStartResponse } from "@/lib/runner-protocol";
import { stepFinishRequest } from "@/lib/runner-protocol";
import type { z } from "zod";
import { conflict } from "../../errors";
import { afterStep } from "../jobs/lifecycle";
import { endRemainingSteps, lockJob, moveJob, moveStep, stepsOf, type JobRow } from "../jobs/transitions";
import { sameAttempt, type JobAccess } from "./job-access";

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
      await endRemainingSteps(tx, job.id, "cancel", `cancelled by ${job.cancelRequestedBy ?? "a user"}`);
      await moveJob(tx, job, "finish_cancelled", { reason: `Cancelled by ${job.cancelRequestedBy ?? "a user"}; the remaining operations did not run.` });
      return { proceed: false };
    }
    const next = steps.find((s) => s.status === "queued");
    if (running || !next || next.step !== step) {
      throw conflict(`Nothing was started: the next step of job ${job.id} is ${running ? `${running.step} (still running)` : (next?.step ?? "none")}, not ${step}.`);
    }
    await moveStep(tx, next, "start");
    return { proceed: true };
  });
}

export async function finishStep(db: Database, access: JobAccess, step: StepName, body: z.infer<typeof stepFinishRequest>): Promise<StepFinishResponse> {
  sameAttempt(access, body.attemptId);
  return db.transaction(async (tx) => {
    const job = await lockJob(tx, access.jobId);
    assertHolds(job, access);
    const steps = await stepsOf(tx, job.id);
    const current = steps.find((s) => s.step === step && s.status === "running");
    if (!current) {
      const done = steps.find((s) => s.step === step && s.status === "completed" && s.result === body.result);
      if (done) return { next: job.status === "running" ? "continue" : "stop" }; // a retried finish
      throw conflict(`Nothing was recorded: step ${step} of job ${job.id} is not running.`);
    }
    const reason = body.result === "failed" ? (body.reason ?? `${step} failed`) : null;
    await moveStep(tx, current, body.result === "succeeded" ? "succeed" : "fail", { reason, ...(body.plan ? { plan: body.plan } : {}) });
    const remaining = steps.filter((s) => s.status === "queued").length;
    const next = afterStep({ result: body.result, cancelRequested: !!job.cancelRequestedAt, pauseAfter: current.pauseAfter === 1, remaining });
    switch (next.job) {
      case "continue":
        return { next: "continue" };
      case "pause":
        await moveJob(tx, job, "pause", { reason: `Waiting for approval of the plan (sha256 ${body.plan?.sha256 ?? "unknown"}) before ${steps.find((s) => s.status === "queued")?.step}.` });
        return { next: "stop" };
      case "succeed":
        await moveJob(tx, job, "succeed", { reason: null });
        return { next: "stop" };
      case "fail":
        await endRemainingSteps(tx, job.id, "skip", `${step} failed`);
        await moveJob(tx, job, "fail", { reason: `${step} failed: ${reason}` });
        return { next: "stop" };
      case "finish_cancelled":
        await endRemainingSteps(tx, job.id, "cancel", `cancelled by ${job.cancelRequestedBy ?? "a user"}`);
        await moveJob(tx, job, "finish_cancelled", { reason: `Cancelled by ${job.cancelRequestedBy ?? "a user"}: ${step} finished (${body.result}); the remaining operations did not run.` });
        return { next: "stop" };
    }
  });
}
