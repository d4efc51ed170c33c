CREATE TABLE "state_versions" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"component_id" text NOT NULL,
	"serial" integer NOT NULL,
	"lineage" text NOT NULL,
	"checksum" text NOT NULL,
	"size" integer NOT NULL,
	"state" jsonb NOT NULL,
	"job_id" text,
	"attempt_id" text,
	"actor_label" text,
	"restored_from" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "state_versions" ADD CONSTRAINT "state_versions_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "state_versions" ADD CONSTRAINT "state_versions_component_id_infra_components_id_fk" FOREIGN KEY ("component_id") REFERENCES "public"."infra_components"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "state_versions_component_idx" ON "state_versions" USING btree ("component_id","created_at");