-- The Jobs list filtered by an operation that is rare or absent (no imports yet, or none older than the page):
-- the (org_id, created_at, …) index checked the operation on every entry of the organization's history, 48–59 ms
-- at 850 000 jobs (bench/lists.ts, "operation: import, past the oldest"). Read by operation, it finds them, or
-- that there are none, at once.
CREATE INDEX "infra_jobs_org_operation_time_idx" ON "infra_jobs" USING btree ("org_id","operation","created_at","id");
