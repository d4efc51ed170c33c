// Heartbeat: extends the job's lease, answers `cancel` when cancel was asked for, and renews the
// job credential when it is close to expiry, only while the job runs (jobAccess refuses the rest).
import { eq, sql } from "drizzle-orm";
import type { Database } from "@/db/client";
import { infraJobs, runners } from "@/db/schema";
import type { HeartbeatResponse } from "@/lib/runner-protocol";
import { LEASE_SECONDS } from "./claim";
import { issueJobCredential } from "./credentials";
import { lockLiveJob, sameAttempt, type JobAccess } from "./job-access";
import { metrics } from "../../metrics";

const RENEW_WITHIN_MS = 15 * 60 * 1000;

export async function heartbeat(db: Database, access: JobAccess, body: { attemptId: string }): Promise<HeartbeatResponse> {
  sameAttempt(access, body.attemptId);
  const res = await db.transaction(async (tx) => {
    await lockLiveJob(tx, access);
    const [job] = await tx
      .update(infraJobs)
      .set({ leaseExpiresAt: sql`now() + ${sql.raw(`interval '${Math.max(1, Math.round(LEASE_SECONDS))} seconds'`)}` })
      .where(eq(infraJobs.id, access.jobId))
      .returning();
    const [runner] = await tx.select({ tokenHash: runners.tokenHash }).from(runners).where(eq(runners.id, job.runnerId!));
    const answer: HeartbeatResponse = { signal: job.cancelRequestedAt ? "cancel" : "none", leaseExpiresAt: job.leaseExpiresAt!.toISOString() };
    // Renewed when close to expiry, and at once when a previous server key signed it (a key rotation: the old key can go
    // as soon as everything it sealed is re-sealed, without waiting out the hour a credential lasts).
    if (access.claims.expiresAt.getTime() - Date.now() < RENEW_WITHIN_MS || access.claims.signedWithPrevious) {
      const c = await issueJobCredential({ jobId: job.id, orgId: job.orgId, attemptId: access.attemptId, runnerTokenHash: runner.tokenHash, credentialId: access.claims.credentialId });
      answer.credential = { token: c.token, expiresAt: c.expiresAt };
    }
    return { answer, runnerId: job.runnerId! };
  });
  // After the job's row lock is let go: revoking takes the runner's row, then its jobs'.
  const [seen] = await db.update(runners).set({ lastSeenAt: new Date() }).where(eq(runners.id, res.runnerId)).returning({ name: runners.name });
  metrics().heartbeats.inc({ runner: seen?.name ?? res.runnerId });
  return res.answer;
}
