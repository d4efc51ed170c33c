-- The IaC module version a job runs and the registry it came from, on the job's record (its bundle's SHA-256 is
-- module_sha256). Jobs made before keep null: their IaC input still names the version.
ALTER TABLE "infra_jobs" ADD COLUMN "module" jsonb;
