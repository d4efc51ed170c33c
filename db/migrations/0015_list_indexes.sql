-- The Jobs list at a million jobs (issue 15): keyset pages on (created_at, id) within the organization,
-- with the filters' columns in the index keys after those, so that a filter (status, result, operation,
-- component, environment by component, who started it) is checked in the index and the page's ids come
-- from it alone; the few rows of the page are read after. Replaces (org_id, created_at), which had no id
-- to break ties on and made every filter read each job's row.
DROP INDEX "infra_jobs_org_time_idx";--> statement-breakpoint
CREATE INDEX "infra_jobs_org_time_idx" ON "infra_jobs" USING btree ("org_id","created_at","id","component_id","status","result","operation","created_by_label");--> statement-breakpoint
-- "Started by" pages, and the skip scan that lists who started jobs (one probe per person).
CREATE INDEX "infra_jobs_org_starter_time_idx" ON "infra_jobs" USING btree ("org_id","created_by_label","created_at","id","component_id","status","result","operation");--> statement-breakpoint
-- Queued, running, awaiting approval: few jobs among a million completed ones.
CREATE INDEX "infra_jobs_org_status_time_idx" ON "infra_jobs" USING btree ("org_id","status","created_at","id") WHERE "infra_jobs"."status" <> 'completed';--> statement-breakpoint
-- Failed, cancelled, skipped: the results one looks for.
CREATE INDEX "infra_jobs_org_result_time_idx" ON "infra_jobs" USING btree ("org_id","result","created_at","id","component_id","operation","created_by_label") WHERE "infra_jobs"."result" <> 'succeeded';--> statement-breakpoint
DROP INDEX "infra_jobs_component_idx";--> statement-breakpoint
CREATE INDEX "infra_jobs_component_idx" ON "infra_jobs" USING btree ("component_id","created_at","id");
