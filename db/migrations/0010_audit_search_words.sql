-- The search words take an action apart ("job.approve" → "job approve") so a search for "approve" finds approvals.
ALTER TABLE "audit_events" drop column "search";--> statement-breakpoint
ALTER TABLE "audit_events" ADD COLUMN "search" "tsvector" GENERATED ALWAYS AS (to_tsvector('simple', coalesce("summary", '') || ' ' || "actor_label" || ' ' || coalesce("target_name", '') || ' ' || translate("action", '._', '  '))) STORED;--> statement-breakpoint
-- Dropping the column dropped its index; the search needs it back. Actions are searched by their words ("approve" finds job.approve).
CREATE INDEX "audit_events_search_idx" ON "audit_events" USING gin ("search");
