ALTER TABLE "runners" ADD COLUMN "engines" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "infra_jobs" ADD COLUMN "route_runner_id" text;--> statement-breakpoint
ALTER TABLE "infra_jobs" ADD COLUMN "route_rule" text;--> statement-breakpoint
UPDATE "infra_jobs" j SET "route_runner_id" = o."default_runner_id", "route_rule" = 'default' FROM "organizations" o WHERE o."id" = j."org_id" AND o."default_runner_id" IS NOT NULL AND j."status" <> 'completed';--> statement-breakpoint
UPDATE "infra_jobs" SET "route_rule" = 'hosted' WHERE "route_rule" IS NULL AND "status" <> 'completed';
