-- A job's log is archived once the job has ended, as an immutable artifact with its SHA-256 (kind `log`), and
-- the job row names it. Jobs that ended before are archived by the scheduler from their events.
ALTER TABLE "infra_jobs" ADD COLUMN "log_artifact_id" text;--> statement-breakpoint
CREATE INDEX "infra_jobs_log_unarchived_idx" ON "infra_jobs" USING btree ("completed_at") WHERE "infra_jobs"."status" = 'completed' and "infra_jobs"."log_artifact_id" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "artifacts_job_log_uq" ON "artifacts" USING btree ("job_id") WHERE "artifacts"."kind" = 'log';
