// The end of a runner attempt: recorded with its exit code; a job it leaves running fails with the
// reason, and a lock it left (on a job it paused) is released, so the next attempt never waits on it.
import { eq } from "drizzle-orm";
import type { Database } from "@/db/client";
import { runnerAttempts } from "@/db/schema";
import { failRunningJob, lockJob, releaseStateLocks } from "../jobs/transitions";
import { sameAttempt, type JobAccess } from "./job-access";

export async function endAttempt(db: Database, access: JobAccess, body: { attemptId: string; exitCode: number; reason?: string }) {
  sameAttempt(access, body.attemptId);
  await db.transaction(async (tx) => {
    const job = await lockJob(tx, access.jobId);
    const [attempt] = await tx.select().from(runnerAttempts).where(eq(runnerAttempts.id, access.attemptId)).for("update");
    if (!attempt || attempt.endedAt) return; // ended already (a retry, or the scheduler declared it lost)
    await tx.update(runnerAttempts).set({ endedAt: new Date(), exitCode: body.exitCode, reason: body.reason ?? null }).where(eq(runnerAttempts.id, attempt.id));
    if (job?.currentAttemptId !== attempt.id) return;
    if (job.status === "running") await failRunningJob(tx, job, body.reason ?? `The runner ended attempt ${attempt.id} with exit code ${body.exitCode} before the job finished.`);
    else await releaseStateLocks(tx, job.id);
  });
  return { ok: true };
}
