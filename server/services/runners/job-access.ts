// What every /jobs/{jobId}/… runner route checks first: a valid job credential for this job, issued
// under the runner's current token to a runner that is not revoked, for the job's current attempt,
// while the job runs. Each refusal says which of those failed and that the runner should stop.
import { eq } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { infraJobs, runnerAttempts, runners } from "@/db/schema";
import { conflict, PlantonError } from "../../errors";
import { lockJob } from "../jobs/transitions";
import { runnerTokenFingerprint, verifyJobCredential, type JobCredentialClaims } from "./credentials";

export interface JobAccess {
  claims: JobCredentialClaims;
  jobId: string;
  orgId: string;
  attemptId: string;
}

/**
 * Which calls a route takes. `running`: only while the job runs. `closing`: also the current
 * attempt's own last calls after its last step completed or paused the job (the final events flush,
 * a retried step start or finish). `ending`: as closing, and an attempt that already ended passes
 * (ending it again is a quiet no-op).
 */
export type JobRouteUse = "running" | "closing" | "ending";

/** Verifies the credential for `jobId` and refuses it unless it is the live attempt's, as `use` allows. */
export async function jobAccess(db: Queryable, token: string | null, jobId: string, use: JobRouteUse = "running"): Promise<JobAccess> {
  const claims = await verifyJobCredential(token, jobId);
  await checkAttempt(db, claims, jobId, use);
  return { claims, jobId, orgId: claims.orgId, attemptId: claims.attemptId };
}

/**
 * Inside a transaction that writes for the job: row-locks the job and checks again that this attempt
 * still runs it, since it may have been replaced, revoked or declared lost after `jobAccess`.
 * `key share` is enough for writes that only need the job not to end under them (every path that ends,
 * requeues or replaces an attempt takes `lockJob`'s FOR UPDATE, which waits for it), and lets event
 * uploads (`no key update`) go on meanwhile.
 */
export async function lockLiveJob(tx: Queryable, access: JobAccess, strength: "update" | "key share" = "update") {
  const job = await lockJob(tx, access.jobId, strength);
  await checkAttempt(tx, access.claims, access.jobId, "running");
  return job!;
}

async function checkAttempt(db: Queryable, claims: JobCredentialClaims, jobId: string, use: JobRouteUse) {
  const [row] = await db
    .select({ attempt: runnerAttempts, runner: runners, job: { status: infraJobs.status, result: infraJobs.result, currentAttemptId: infraJobs.currentAttemptId } })
    .from(runnerAttempts)
    .innerJoin(infraJobs, eq(infraJobs.id, runnerAttempts.jobId))
    .leftJoin(runners, eq(runners.id, runnerAttempts.runnerId))
    .where(eq(runnerAttempts.id, claims.attemptId));
  const stop = `Stop working on job ${jobId}.`;
  if (!row || row.attempt.jobId !== jobId) throw new PlantonError("FORBIDDEN", `Nothing was done: attempt ${claims.attemptId} does not belong to job ${jobId}. ${stop}`);
  const { attempt, runner, job } = row;
  if (!runner) throw new PlantonError("UNAUTHORIZED", `Nothing was done: the runner that held attempt ${attempt.id} was removed, so its job credentials no longer work. ${stop}`);
  if (runner.revokedAt) {
    throw new PlantonError("FORBIDDEN", `Nothing was done: runner ${runner.name} was revoked at ${runner.revokedAt.toISOString()}, so its job credentials no longer work. ${stop}`);
  }
  if (claims.runnerTokenFingerprint !== runnerTokenFingerprint(runner.tokenHash)) {
    throw new PlantonError(
      "UNAUTHORIZED",
      `Nothing was done: this job credential was issued under a runner token of ${runner.name} that has since been rotated, so it no longer works. ${stop} Start the runner with its new token to claim new work.`,
    );
  }
  if (job.currentAttemptId !== attempt.id) {
    throw conflict(`Nothing was done: attempt ${attempt.id} of job ${jobId} was replaced by attempt ${job.currentAttemptId}; only the current attempt works on a job. ${stop}`);
  }
  const where = job.status === "completed" ? `is completed (${job.result})` : `is ${job.status.replace("_", " ")}`;
  if (attempt.endedAt && use !== "ending") {
    throw conflict(`Nothing was done: job ${jobId} ${where} and its attempt ${attempt.id} has ended (${attempt.reason ?? `exit ${attempt.exitCode ?? "unknown"}`}), so its credential no longer works. ${stop}`);
  }
  if (use === "running" && job.status !== "running") throw conflict(`Nothing was done: job ${jobId} ${where}; a job credential works only while its job runs. ${stop}`);
}

/** The attempt in a request body must be the credential's. */
export function sameAttempt(access: JobAccess, attemptId: string) {
  if (attemptId !== access.attemptId) {
    throw new PlantonError("FORBIDDEN", `Nothing was done: this credential is for attempt ${access.attemptId}, not ${attemptId}.`);
  }
}
