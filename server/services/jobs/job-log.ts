// A job's log, archived once the job has ended: its log lines and status changes as one text file, stored as an
// immutable artifact (kind `log`) with its SHA-256, downloadable with `Digest: sha-256=…` like every artifact
// (runs-and-plans-api.md: plans, logs, state snapshots and IaC inputs are immutable artifacts). The lines are the
// ones the job page shows — secret values were masked by the runner before they were sent.
//
// The scheduler's leader archives ended jobs a batch at a time, off the path of any step: a job whose attempt has
// ended (its runner sends its last lines before it ends the attempt), or that had no attempt, or that ended long
// enough ago that its runner, if it never ended the attempt, is gone. One log per job (a unique index), however
// many archivers race for it.
import { stripVTControlCharacters } from "node:util";
import { and, asc, eq, inArray, isNull, sql } from "drizzle-orm";
import type { Database, Queryable } from "@/db/client";
import { artifacts, infraComponents, infraJobs, progressEvents } from "@/db/schema";
import type { LogPayload } from "@/lib/runner-protocol";
import { storeArtifact } from "../runners/artifacts";

export const JOB_LOG_NAME = "job.log";
/** An ended job whose attempt never ended (its runner died between its last step and the attempt's end) is archived this long after it ended. */
const ATTEMPT_GRACE = "10 minutes";

/** The job's log as text: one line per log line or status change, `<time> [<step>] <line>`, colours removed. */
export async function renderJobLog(db: Queryable, jobId: string): Promise<string> {
  const [job] = await db
    .select({ id: infraJobs.id, operation: infraJobs.operation, result: infraJobs.result, reason: infraJobs.reason, completedAt: infraJobs.completedAt, component: infraComponents.name })
    .from(infraJobs)
    .innerJoin(infraComponents, eq(infraComponents.id, infraJobs.componentId))
    .where(eq(infraJobs.id, jobId));
  if (!job) return "";
  const events = await db
    .select({ ts: progressEvents.ts, operation: progressEvents.operation, type: progressEvents.type, payload: progressEvents.payload })
    .from(progressEvents)
    .where(and(eq(progressEvents.jobId, jobId), inArray(progressEvents.type, ["log", "job_status"])))
    .orderBy(asc(progressEvents.seq));
  const lines = [`# Infra Job ${job.id}: ${job.operation} of ${job.component}, ${job.result}${job.reason ? ` (${job.reason})` : ""}; ended ${job.completedAt?.toISOString() ?? "—"}`];
  for (const e of events) {
    const at = `${e.ts.toISOString()} [${e.operation ?? "job"}]`;
    if (e.type === "log") {
      const { line, stream } = e.payload as LogPayload;
      for (const part of stripVTControlCharacters(String(line ?? "")).split("\n")) lines.push(`${at}${stream === "stderr" ? " (stderr)" : ""} ${part}`);
    } else {
      const { status, result, reason } = e.payload as { status?: string; result?: string; reason?: string };
      lines.push(`${at} status ${status}${result && result !== "tbd" ? `, ${result}` : ""}${reason ? `: ${reason}` : ""}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

/** Archives the log of one ended job, once: answers the artifact's id (the one archived before, if any). */
export async function archiveJobLog(db: Database, jobId: string): Promise<string | null> {
  const text = await renderJobLog(db, jobId);
  if (!text) return null;
  return db.transaction(async (tx) => {
    const stored = await storeArtifact(tx, { jobId, kind: "log", name: JOB_LOG_NAME, bytes: new TextEncoder().encode(text) }, true);
    const [kept] = stored.stored ? [{ id: stored.id }] : await tx.select({ id: artifacts.id }).from(artifacts).where(and(eq(artifacts.jobId, jobId), eq(artifacts.kind, "log")));
    await tx.update(infraJobs).set({ logArtifactId: kept!.id }).where(and(eq(infraJobs.id, jobId), isNull(infraJobs.logArtifactId)));
    return kept!.id;
  });
}

/** Archives the logs of up to `limit` ended jobs not archived yet (oldest first); answers their ids. */
export async function archiveEndedJobLogs(db: Database, limit = 20): Promise<string[]> {
  const due = await db
    .select({ id: infraJobs.id })
    .from(infraJobs)
    .where(
      and(
        eq(infraJobs.status, "completed"),
        isNull(infraJobs.logArtifactId),
        sql`(${infraJobs.currentAttemptId} is null
          or exists (select 1 from runner_attempts r where r.id = ${infraJobs.currentAttemptId} and r.ended_at is not null)
          or ${infraJobs.completedAt} < now() - ${ATTEMPT_GRACE}::interval)`,
      ),
    )
    .orderBy(asc(infraJobs.completedAt))
    .limit(limit);
  const archived: string[] = [];
  for (const { id } of due) if (await archiveJobLog(db, id)) archived.push(id);
  return archived;
}
