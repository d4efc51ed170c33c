-- A job's state changes at resource level, kept until compacted into one full state write (issue 15).
CREATE TABLE "state_journal" (
	"attempt_id" text NOT NULL,
	"step" text NOT NULL,
	"seq" integer NOT NULL,
	"job_id" text NOT NULL,
	"org_id" text NOT NULL,
	"component_id" text NOT NULL,
	"lock_id" text NOT NULL,
	"lineage" text NOT NULL,
	"base_serial" integer NOT NULL,
	"serial" integer NOT NULL,
	"addresses" text[] NOT NULL,
	"change" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "state_journal_attempt_id_step_seq_pk" PRIMARY KEY("attempt_id","step","seq")
);
--> statement-breakpoint
ALTER TABLE "state_journal" ADD CONSTRAINT "state_journal_job_id_infra_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."infra_jobs"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "state_journal" ADD CONSTRAINT "state_journal_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "state_journal" ADD CONSTRAINT "state_journal_component_id_infra_components_id_fk" FOREIGN KEY ("component_id") REFERENCES "public"."infra_components"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "state_journal_job_idx" ON "state_journal" USING btree ("job_id");
--> statement-breakpoint
CREATE INDEX "state_journal_component_idx" ON "state_journal" USING btree ("component_id");
