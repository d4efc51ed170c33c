-- The state move (issue 10, bench/state-move.ts) updates each component, its state row and its move item several
-- times (held, locked, copied, switched, done). Room left on each page lets those updates be HOT — the new row
-- version on the same page, no new index entries — where every update wrote an entry in each of the table's indexes;
-- and the move items' index no longer carries the step, which each step changes (an indexed column rules HOT out).
-- Every reader of state_move_items asks by move_id. On the move's benchmark Postgres did about half the work.
-- (fillfactor applies to pages written from now on; existing pages fill up as before until their rows move.)
DROP INDEX "state_move_items_move_idx";--> statement-breakpoint
CREATE INDEX "state_move_items_move_idx" ON "state_move_items" USING btree ("move_id");--> statement-breakpoint
ALTER TABLE "state_move_items" SET (fillfactor = 70);--> statement-breakpoint
ALTER TABLE "state_objects" SET (fillfactor = 70);--> statement-breakpoint
ALTER TABLE "infra_components" SET (fillfactor = 70);
