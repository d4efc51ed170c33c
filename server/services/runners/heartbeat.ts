// Heartbeat: extends the job's lease, answers `cancel` when cancel was asked for, and renews the
// job credential when it is close to expiry, only while the job runs.
import { and, eq, sql } from "drizzle-orm";
import type { Database } from "@/db/client";
import { infraJobs, runnerAttempts, runners } from "@/db/schema";
import type { HeartbeatResponse } from "@/lib/runner-protocol";
import { conflict } from "../../errors";
import { LEASE_SECONDS } from "./claim";
import { issueJobCredential } from "./credentials";
import type { JobAccess } from "./job-access";
import { sameAttempt } from "./job-access";

const RENEW_WITHIN_MS = 15 * 60 * 1000;

export async function heartbeat(db: Database, access: JobAccess, body: { attemptId: string }): Promise<HeartbeatResponse> {
  sameAttempt(access, body.attemptId);
  const [job] = await db
    .update(infraJobs)
    .set({ leaseExpiresAt: sql`now() + ${sql.raw(`interval '${Math.max(1, Math.round(LEASE_SECONDS))} seconds'`)}` })
    .where(and(eq(infraJobs.id, access.jobId), eq(infraJobs.status, "running"), eq(infraJobs.currentAttemptId, access.attemptId)))
    .returning();
  const [attempt] = await db.select({ runnerId: runnerAttempts.runnerId }).from(runnerAttempts).where(eq(runnerAttempts.id, access.attemptId));
  if (attempt) await db.update(runners).set({ lastSeenAt: new Date() }).where(eq(runners.id, attempt.runnerId));
  if (!job) {
    const [now] = await db.select().from(infraJobs).where(eq(infraJobs.id, access.jobId));
    if (now?.currentAttemptId !== access.attemptId) throw conflict(`Job ${access.jobId} is no longer held by attempt ${access.attemptId}: its lease lapsed. Stop working on it.`);
    // Paused or completed: nothing to extend.
    return { signal: now.status === "completed" && now.result === "cancelled" ? "cancel" : "none", leaseExpiresAt: new Date().toISOString() };
  }
  const res: HeartbeatResponse = { signal: job.cancelRequestedAt ? "cancel" : "none", leaseExpiresAt: job.leaseExpiresAt!.toISOString() };
  if (access.claims.expiresAt.getTime() - Date.now() < RENEW_WITHIN_MS) {
    const c = await issueJobCredential({ jobId: job.id, orgId: job.orgId, attemptId: access.attemptId, credentialId: access.claims.credentialId });
    res.credential = { token: c.token, expiresAt: c.expiresAt };
  }
  return res;
}
