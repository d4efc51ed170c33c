CREATE TABLE "approvals" (
	"id" text PRIMARY KEY NOT NULL,
	"job_id" text NOT NULL,
	"pause_ordinal" integer NOT NULL,
	"user_id" text,
	"user_label" text NOT NULL,
	"plan_sha256" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "artifacts" (
	"id" text PRIMARY KEY NOT NULL,
	"job_id" text NOT NULL,
	"kind" text NOT NULL,
	"name" text NOT NULL,
	"sha256" text NOT NULL,
	"size" integer NOT NULL,
	"content" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "infra_jobs" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"component_id" text NOT NULL,
	"operation" text NOT NULL,
	"status" text NOT NULL,
	"result" text NOT NULL,
	"reason" text,
	"version_message" text DEFAULT '' NOT NULL,
	"created_by" text,
	"created_by_label" text DEFAULT 'system' NOT NULL,
	"rerun_of" text,
	"preflight" jsonb NOT NULL,
	"iac_input" jsonb,
	"module_sha256" text,
	"backend_id" text,
	"policy" jsonb,
	"import_target" jsonb,
	"outputs" jsonb,
	"event_seq" integer DEFAULT 0 NOT NULL,
	"cancel_requested_at" timestamp with time zone,
	"cancel_requested_by" text,
	"runner_id" text,
	"lease_expires_at" timestamp with time zone,
	"current_attempt_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"paused_at" timestamp with time zone,
	"resumed_at" timestamp with time zone,
	"completed_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "job_operations" (
	"id" text PRIMARY KEY NOT NULL,
	"job_id" text NOT NULL,
	"step" text NOT NULL,
	"ordinal" integer NOT NULL,
	"status" text NOT NULL,
	"result" text NOT NULL,
	"reason" text,
	"plan" jsonb,
	"pause_after" integer DEFAULT 0 NOT NULL,
	"started_at" timestamp with time zone,
	"ended_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "progress_events" (
	"job_id" text NOT NULL,
	"seq" integer NOT NULL,
	"ts" timestamp with time zone NOT NULL,
	"operation" text,
	"type" text NOT NULL,
	"payload" jsonb NOT NULL,
	"attempt_id" text,
	"runner_seq" integer,
	CONSTRAINT "progress_events_job_id_seq_pk" PRIMARY KEY("job_id","seq")
);
--> statement-breakpoint
CREATE TABLE "runner_attempts" (
	"id" text PRIMARY KEY NOT NULL,
	"job_id" text NOT NULL,
	"runner_id" text NOT NULL,
	"credential_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"ended_at" timestamp with time zone,
	"exit_code" integer,
	"reason" text
);
--> statement-breakpoint
CREATE TABLE "state_objects" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"component_id" text NOT NULL,
	"backend_id" text NOT NULL,
	"key" text NOT NULL,
	"lineage" text,
	"serial" integer,
	"checksum" text,
	"state" jsonb,
	"lock_info" jsonb,
	"locked_by_job" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "state_objects_component_id_unique" UNIQUE("component_id")
);
--> statement-breakpoint
ALTER TABLE "approvals" ADD CONSTRAINT "approvals_job_id_infra_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."infra_jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "artifacts" ADD CONSTRAINT "artifacts_job_id_infra_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."infra_jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "infra_jobs" ADD CONSTRAINT "infra_jobs_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "infra_jobs" ADD CONSTRAINT "infra_jobs_component_id_infra_components_id_fk" FOREIGN KEY ("component_id") REFERENCES "public"."infra_components"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "job_operations" ADD CONSTRAINT "job_operations_job_id_infra_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."infra_jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "progress_events" ADD CONSTRAINT "progress_events_job_id_infra_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."infra_jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "runner_attempts" ADD CONSTRAINT "runner_attempts_job_id_infra_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."infra_jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "state_objects" ADD CONSTRAINT "state_objects_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "state_objects" ADD CONSTRAINT "state_objects_component_id_infra_components_id_fk" FOREIGN KEY ("component_id") REFERENCES "public"."infra_components"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "approvals_job_pause_uq" ON "approvals" USING btree ("job_id","pause_ordinal");--> statement-breakpoint
CREATE INDEX "artifacts_job_idx" ON "artifacts" USING btree ("job_id");--> statement-breakpoint
CREATE INDEX "infra_jobs_org_time_idx" ON "infra_jobs" USING btree ("org_id","created_at");--> statement-breakpoint
CREATE INDEX "infra_jobs_component_idx" ON "infra_jobs" USING btree ("component_id","created_at");--> statement-breakpoint
CREATE INDEX "infra_jobs_status_idx" ON "infra_jobs" USING btree ("status","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "job_operations_job_ordinal_uq" ON "job_operations" USING btree ("job_id","ordinal");--> statement-breakpoint
CREATE UNIQUE INDEX "progress_events_runner_seq_uq" ON "progress_events" USING btree ("job_id","attempt_id","runner_seq");--> statement-breakpoint
CREATE INDEX "runner_attempts_job_idx" ON "runner_attempts" USING btree ("job_id");