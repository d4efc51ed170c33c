-- A job's progress events keep to an existing job without a per-row foreign-key check. The foreign key on
-- progress_events.job_id ran one referential check per inserted row (a query and a row lock each): about
-- 33–48 µs a row on this project's 2-core machines, two thirds of storing a runner's batch (a walk's burst of
-- 420 events: 20 ms of 30 ms in the statement; bench/jobs.ts). These statement-level triggers keep the same
-- rules once per statement: every job a statement wrote events of exists (and is locked against deletion
-- until commit, KEY SHARE as the foreign key locked it), deleting a job deletes its events (the cascade), and
-- a job's id never changes (the foreign key refused that while events referred to it).
ALTER TABLE "progress_events" DROP CONSTRAINT "progress_events_job_id_infra_jobs_id_fk";--> statement-breakpoint
CREATE FUNCTION progress_events_job_exists() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  missing text;
BEGIN
  -- Locked first, then looked for with a new snapshot: a job deleted meanwhile is waited for, then missing.
  PERFORM 1 FROM infra_jobs j WHERE j.id IN (SELECT DISTINCT job_id FROM added) FOR KEY SHARE OF j;
  SELECT a.job_id INTO missing FROM (SELECT DISTINCT job_id FROM added) a
   WHERE NOT EXISTS (SELECT 1 FROM infra_jobs j WHERE j.id = a.job_id) LIMIT 1;
  IF missing IS NOT NULL THEN
    RAISE EXCEPTION 'insert or update on table "progress_events" refers to job % that does not exist', missing
      USING ERRCODE = 'foreign_key_violation', TABLE = 'progress_events', COLUMN = 'job_id';
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "progress_events_job_inserted" AFTER INSERT ON "progress_events"
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION progress_events_job_exists();--> statement-breakpoint
CREATE TRIGGER "progress_events_job_updated" AFTER UPDATE ON "progress_events"
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION progress_events_job_exists();--> statement-breakpoint
CREATE FUNCTION infra_jobs_drop_progress_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM progress_events p USING (SELECT DISTINCT id FROM gone) g WHERE p.job_id = g.id;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "infra_jobs_drop_progress_events" AFTER DELETE ON "infra_jobs"
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION infra_jobs_drop_progress_events();--> statement-breakpoint
CREATE FUNCTION infra_jobs_keep_id() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'a job''s id never changes (job %)', OLD.id USING ERRCODE = 'foreign_key_violation', TABLE = 'infra_jobs', COLUMN = 'id';
END $$;--> statement-breakpoint
CREATE TRIGGER "infra_jobs_keep_id" BEFORE UPDATE OF "id" ON "infra_jobs"
  FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION infra_jobs_keep_id();
