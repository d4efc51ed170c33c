// Revoking a runner: from now on its token claims nothing and its job credentials do nothing; the
// jobs it is running fail with the reason, and the organization's default runner is cleared if it was this one.
import { and, eq, inArray, isNull } from "drizzle-orm";
import { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { infraJobs, organizations, runnerAttempts, runners } from "@/db/schema";
import { REASONS } from "@/lib/job-reasons";
import type { Actor } from "../../actor";
import { recordAudit } from "../../audit";
import { conflict, notFound } from "../../errors";
import { endRemainingSteps, failRunningJob, lockJob, moveJob } from "../jobs/transitions";
import type { RunnerRow } from "./register-runner";

export const runnerIdInput = z.object({ id: z.string().min(1) });

/** The organization's own runner, row-locked; Planton-hosted runners are not an organization's to change. */
export async function lockOwnRunner(tx: Queryable, actor: Actor, id: string): Promise<RunnerRow> {
  const [runner] = await tx.select().from(runners).where(and(eq(runners.id, id), eq(runners.orgId, actor.orgId))).for("update");
  if (!runner) throw notFound(`Runner ${id}`, "Check the id in Settings → Runners; Planton-hosted runners are not an organization's to change.");
  return runner;
}

/** Ends every attempt the runner has not ended; a job it is running fails with `reason`. Returns the failed jobs' ids. */
export async function endRunnerAttempts(tx: Queryable, runner: RunnerRow, reason: string): Promise<string[]> {
  const open = await tx.select().from(runnerAttempts).where(and(eq(runnerAttempts.runnerId, runner.id), isNull(runnerAttempts.endedAt)));
  const failed: string[] = [];
  for (const attempt of open) {
    const job = await lockJob(tx, attempt.jobId);
    await tx.update(runnerAttempts).set({ endedAt: new Date(), reason }).where(eq(runnerAttempts.id, attempt.id));
    if (job?.status === "running" && job.currentAttemptId === attempt.id) {
      await failRunningJob(tx, job, reason);
      failed.push(job.id);
    }
  }
  return failed;
}

export async function revokeRunner(db: Database, actor: Actor, raw: z.input<typeof runnerIdInput>) {
  const input = runnerIdInput.parse(raw);
  return db.transaction(async (tx) => {
    const runner = await lockOwnRunner(tx, actor, input.id);
    if (runner.revokedAt) throw conflict(`Nothing was changed: runner ${runner.name} was already revoked at ${runner.revokedAt.toISOString()}.`);
    const [row] = await tx.update(runners).set({ revokedAt: new Date() }).where(eq(runners.id, runner.id)).returning();
    const failedJobs = await endRunnerAttempts(tx, runner, `runner ${runner.name} was revoked by ${actor.label}`);
    // Jobs routed to it that it has not run (or paused mid-run) would wait for it forever: they end, saying why.
    const waiting = await tx.select().from(infraJobs).where(and(eq(infraJobs.routeRunnerId, runner.id), inArray(infraJobs.status, ["queued", "awaiting_approval"])));
    const cancelledJobs: string[] = [];
    for (const w of waiting) {
      const job = (await lockJob(tx, w.id))!;
      if (job.status !== "queued" && job.status !== "awaiting_approval") continue;
      const reason = REASONS.runnerRevokedBeforeRun(runner.name, actor.label, job.status);
      await endRemainingSteps(tx, job.id, "cancel", reason);
      await moveJob(tx, job, "cancel", { reason, cancelRequestedAt: new Date(), cancelRequestedBy: actor.label });
      cancelledJobs.push(job.id);
    }
    const cleared = await tx
      .update(organizations)
      .set({ defaultRunnerId: null })
      .where(and(eq(organizations.id, actor.orgId), eq(organizations.defaultRunnerId, runner.id)))
      .returning({ id: organizations.id });
    await recordAudit(tx, actor, {
      action: "runner.revoke",
      targetId: runner.id,
      targetName: runner.name,
      summary:
        `Revoked runner ${runner.name}` +
        (failedJobs.length ? `; its running jobs ${failedJobs.join(", ")} failed` : "") +
        (cancelledJobs.length ? `; the jobs waiting for it ${cancelledJobs.join(", ")} were cancelled` : "") +
        (cleared.length ? "; it is no longer the organization's default runner" : ""),
      changes: { failedJobs, cancelledJobs, defaultRunnerCleared: cleared.length > 0 },
    });
    return { runner: { ...row, tokenHash: undefined }, failedJobs };
  });
}

