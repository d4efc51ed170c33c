-- The organization's module registry (issue 14): a registered version records where its files came
-- from (a git commit, an uploaded archive, or for the platform's builtin ones a folder), the checksum of
-- its bundle, and its inputs; the bundle itself is stored once, by content.
CREATE TABLE "module_bundles" (
	"sha256" text PRIMARY KEY NOT NULL,
	"files" jsonb NOT NULL,
	"size" integer NOT NULL,
	"file_count" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "iac_modules" ADD COLUMN "source_kind" text DEFAULT 'builtin' NOT NULL;--> statement-breakpoint
ALTER TABLE "iac_modules" ADD COLUMN "git_url" text;--> statement-breakpoint
ALTER TABLE "iac_modules" ADD COLUMN "git_ref" text;--> statement-breakpoint
ALTER TABLE "iac_modules" ADD COLUMN "git_commit" text;--> statement-breakpoint
ALTER TABLE "iac_modules" ADD COLUMN "git_path" text;--> statement-breakpoint
ALTER TABLE "iac_modules" ADD COLUMN "archive_name" text;--> statement-breakpoint
ALTER TABLE "iac_modules" ADD COLUMN "bundle_sha256" text;--> statement-breakpoint
ALTER TABLE "iac_modules" ADD COLUMN "size" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "iac_modules" ADD COLUMN "file_count" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "iac_modules" ADD COLUMN "readme" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "iac_modules" ADD COLUMN "inputs" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "iac_modules" ADD COLUMN "registered_by" text;--> statement-breakpoint
ALTER TABLE "iac_modules" ADD COLUMN "registered_by_label" text DEFAULT 'system' NOT NULL;--> statement-breakpoint
ALTER TABLE "iac_modules" ADD CONSTRAINT "iac_modules_source_kind_check" CHECK ("source_kind" in ('builtin', 'git', 'archive'));--> statement-breakpoint
ALTER TABLE "iac_modules" ADD CONSTRAINT "iac_modules_bundle_sha256_module_bundles_sha256_fk" FOREIGN KEY ("bundle_sha256") REFERENCES "public"."module_bundles"("sha256") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "engineers_register_modules" boolean DEFAULT false NOT NULL;--> statement-breakpoint
-- The placeholder AwsS3Bucket module (no files) gives way to the real one the platform catalog writes at start.
DELETE FROM "iac_modules" WHERE "scope_key" = 'platform' AND "source" LIKE 'registry:%';--> statement-breakpoint
-- A registered version never changes: its source and bundle are refused an UPDATE (a new commit is a new version).
CREATE FUNCTION iac_modules_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD."source_kind" <> 'builtin' AND (
    NEW."source" IS DISTINCT FROM OLD."source" OR NEW."source_kind" IS DISTINCT FROM OLD."source_kind" OR
    NEW."bundle_sha256" IS DISTINCT FROM OLD."bundle_sha256" OR NEW."git_url" IS DISTINCT FROM OLD."git_url" OR
    NEW."git_commit" IS DISTINCT FROM OLD."git_commit" OR NEW."git_path" IS DISTINCT FROM OLD."git_path" OR
    NEW."version" IS DISTINCT FROM OLD."version" OR NEW."name" IS DISTINCT FROM OLD."name" OR NEW."kind" IS DISTINCT FROM OLD."kind" OR
    NEW."provisioner" IS DISTINCT FROM OLD."provisioner"
  ) THEN
    RAISE EXCEPTION 'module %@% is registered and never changes; register a new version', OLD."name", OLD."version";
  END IF;
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER "iac_modules_immutable" BEFORE UPDATE ON "iac_modules" FOR EACH ROW EXECUTE FUNCTION iac_modules_immutable();
