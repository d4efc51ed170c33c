-- The direct path (issue 13): a component's status (draft … deleted), its spec versions, and the version each job ran.
CREATE TABLE "infra_component_versions" (
	"component_id" text NOT NULL,
	"version" integer NOT NULL,
	"org_id" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"spec" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"connection_id" text,
	"connection_name" text,
	"state_backend_id" text,
	"state_backend_name" text,
	"custom_module_id" text,
	"changes" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_by" text,
	"created_by_label" text DEFAULT 'system' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "infra_component_versions_component_id_version_pk" PRIMARY KEY("component_id","version")
);
--> statement-breakpoint
DROP INDEX "infra_components_env_name_uq";--> statement-breakpoint
ALTER TABLE "infra_components" ADD COLUMN "status" text DEFAULT 'active' NOT NULL;--> statement-breakpoint
ALTER TABLE "infra_components" ADD COLUMN "status_reason" text;--> statement-breakpoint
ALTER TABLE "infra_components" ADD COLUMN "spec_version" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "infra_components" ADD COLUMN "delete_job_id" text;--> statement-breakpoint
ALTER TABLE "infra_components" ADD COLUMN "deleted_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "infra_components" ADD COLUMN "deleted_by" text;--> statement-breakpoint
ALTER TABLE "infra_jobs" ADD COLUMN "spec_version" integer;--> statement-breakpoint
ALTER TABLE "infra_component_versions" ADD CONSTRAINT "infra_component_versions_component_id_infra_components_id_fk" FOREIGN KEY ("component_id") REFERENCES "public"."infra_components"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "infra_component_versions" ADD CONSTRAINT "infra_component_versions_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "infra_components_env_name_uq" ON "infra_components" USING btree ("environment_id","name") WHERE "infra_components"."status" not in ('deleted', 'forgotten');--> statement-breakpoint
-- Every component made before versions were kept starts at version 1, its configuration as it is now.
INSERT INTO "infra_component_versions" ("component_id", "version", "org_id", "description", "spec", "connection_id", "connection_name", "state_backend_id", "state_backend_name", "custom_module_id", "changes", "created_by", "created_by_label", "created_at")
SELECT c."id", 1, c."org_id", c."description", c."spec", c."connection_id", cn."name", c."state_backend_id", sb."name", c."custom_module_id", '{}'::jsonb, c."created_by", coalesce(u."email", 'system'), c."created_at"
FROM "infra_components" c
LEFT JOIN "connections" cn ON cn."id" = c."connection_id"
LEFT JOIN "state_backends" sb ON sb."id" = c."state_backend_id"
LEFT JOIN "users" u ON u."id" = c."created_by";
