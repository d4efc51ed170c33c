-- A state's serial is a bigint: a Pulumi checkpoint's serial is the time of its deployment in milliseconds
-- (state-backends/rules.ts pulumiIdentity), past an integer's range. OpenTofu serials keep their values.
ALTER TABLE "state_objects" ALTER COLUMN "serial" SET DATA TYPE bigint;--> statement-breakpoint
ALTER TABLE "state_versions" ALTER COLUMN "serial" SET DATA TYPE bigint;--> statement-breakpoint
ALTER TABLE "state_journal" ALTER COLUMN "base_serial" SET DATA TYPE bigint;--> statement-breakpoint
ALTER TABLE "state_journal" ALTER COLUMN "serial" SET DATA TYPE bigint;--> statement-breakpoint
ALTER TABLE "state_move_items" ALTER COLUMN "serial" SET DATA TYPE bigint;
