// What every /jobs/{jobId}/… runner route checks first: a valid job credential for this job, and
// an attempt that is still the job's current one and has not ended.
import { eq } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { infraJobs, runnerAttempts } from "@/db/schema";
import { conflict, PlantonError } from "../../errors";
import { verifyJobCredential, type JobCredentialClaims } from "./credentials";

export interface JobAccess {
  claims: JobCredentialClaims;
  jobId: string;
  orgId: string;
  attemptId: string;
}

/** Verifies the credential for `jobId`; with `live`, also refuses an attempt that ended or was replaced. */
export async function jobAccess(db: Queryable, token: string | null, jobId: string, opts: { live?: boolean } = { live: true }): Promise<JobAccess> {
  const claims = await verifyJobCredential(token, jobId);
  if (opts.live !== false) {
    const [attempt] = await db.select().from(runnerAttempts).where(eq(runnerAttempts.id, claims.attemptId));
    if (!attempt || attempt.jobId !== jobId) throw new PlantonError("FORBIDDEN", `Nothing was done: attempt ${claims.attemptId} does not belong to job ${jobId}.`);
    if (attempt.endedAt) {
      throw conflict(`Nothing was done: attempt ${attempt.id} of job ${jobId} has ended (${attempt.reason ?? `exit ${attempt.exitCode ?? "unknown"}`}). Stop working on this job.`);
    }
  }
  return { claims, jobId, orgId: claims.orgId, attemptId: claims.attemptId };
}

/** The attempt in a request body must be the credential's. */
export function sameAttempt(access: JobAccess, attemptId: string) {
  if (attemptId !== access.attemptId) {
    throw new PlantonError("FORBIDDEN", `Nothing was done: this credential is for attempt ${access.attemptId}, not ${attemptId}.`);
  }
}

export async function currentJob(db: Queryable, jobId: string) {
  const [job] = await db.select().from(infraJobs).where(eq(infraJobs.id, jobId));
  return job;
}
