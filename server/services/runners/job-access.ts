// What every /jobs/{jobId}/… runner route checks first: a valid job credential for this job, issued
// under the runner's current token to a runner that is not revoked, for the job's current attempt,
// while the job runs. Each refusal says which of those failed and that the runner should stop.
import { eq, sql, type SQL } from "drizzle-orm";
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
  /**
   * Set when the check's own read was left out (jobAccessUnconfirmed): the route's one statement must write only
   * while `stillHolds` (what this credential's last check here passed on is unchanged), and when it did not,
   * `confirm()` checks in full — it throws the refusal, or passes and the write goes on after it, as any route's does.
   */
  unconfirmed?: { stillHolds: SQL; confirm: () => Promise<void> };
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
  return accessOf(claims, jobId);
}

const accessOf = (claims: JobCredentialClaims, jobId: string): JobAccess => ({ claims, jobId, orgId: claims.orgId, attemptId: claims.attemptId });

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

/**
 * As jobAccess, but a credential that passed its check in this process before skips the check's read while what
 * that check passed on is unchanged: the runner's event uploads, many a second while a job runs, then take one
 * statement (the append, which tests `stillHolds` in the same round trip) instead of two. A change (the runner
 * revoked or its token rotated, the attempt replaced or ended, the job's status moved) fails `stillHolds`, and the
 * caller's `confirm()` is the full check, with its refusal's words.
 */
export async function jobAccessUnconfirmed(db: Queryable, token: string | null, jobId: string, use: JobRouteUse = "running"): Promise<JobAccess> {
  const claims = await verifyJobCredential(token, jobId);
  const key = `${claims.attemptId} ${claims.runnerTokenFingerprint} ${use}`;
  const check = async () => {
    passed.delete(key);
    const facts = await checkAttempt(db, claims, jobId, use);
    if (facts) keepPassed(key, facts);
    return facts;
  };
  const facts = passed.get(key) ?? (await check());
  const access = accessOf(claims, jobId);
  return facts ? { ...access, unconfirmed: { stillHolds: stillHolds(facts), confirm: async () => void (await check()) } } : access;
}

/** What a check passed on: the attempt's job, its runner and that runner's token, the job's status (the attempt live and the job's current one, the runner not revoked). */
interface PassedFacts {
  attemptId: string;
  jobId: string;
  runnerId: string;
  tokenHash: string;
  status: string;
}
/** Checks passed in this process, by credential (attempt, runner token) and use; bounded, as the credentials' own caches are. */
const passed = new Map<string, PassedFacts>();
const PASSED_KEPT = 10_000;
function keepPassed(key: string, facts: PassedFacts) {
  if (passed.size >= PASSED_KEPT) passed.delete(passed.keys().next().value!);
  passed.set(key, facts);
}

/** True in a statement while the facts a check passed on still hold (read in the statement's own snapshot; the attempt's end and the runner's revocation were none). */
function stillHolds(f: PassedFacts): SQL {
  return sql`exists (select 1 from ${runnerAttempts} a join ${runners} r on r.id = a.runner_id join ${infraJobs} j on j.id = a.job_id
    where a.id = ${f.attemptId} and a.job_id = ${f.jobId} and a.ended_at is null and r.id = ${f.runnerId} and r.revoked_at is null
      and r.token_hash = ${f.tokenHash} and j.current_attempt_id = a.id and j.status = ${f.status})`;
}

/** Refuses unless the attempt may act on the job as `use` allows; answers what it passed on (none for an attempt that ended, which only `ending` lets by). */
async function checkAttempt(db: Queryable, claims: JobCredentialClaims, jobId: string, use: JobRouteUse): Promise<PassedFacts | undefined> {
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
  if (claims.runnerTokenFingerprint !== runnerTokenFingerprint(runner.tokenHash, claims.signedWithPrevious)) {
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
  if (attempt.endedAt) return undefined;
  return { attemptId: attempt.id, jobId, runnerId: runner.id, tokenHash: runner.tokenHash, status: job.status };
}

/** The attempt in a request body must be the credential's. */
export function sameAttempt(access: JobAccess, attemptId: string) {
  if (attemptId !== access.attemptId) {
    throw new PlantonError("FORBIDDEN", `Nothing was done: this credential is for attempt ${access.attemptId}, not ${attemptId}.`);
  }
}
