-- A move's items keep to an existing move and component without per-row foreign-key checks. The two foreign keys on
-- state_move_items ran a referential check per inserted row (a query and a row lock each): at a move's start that
-- inserts 10 000 items, 172 ms and 192 ms of a 465 ms statement (`explain analyze`, bench/state-move.ts). As
-- migration 0023 does for progress events, statement-level triggers keep the same rules once per statement: every
-- move and component a statement's items name exist (and are locked against deletion until commit, KEY SHARE as the
-- foreign keys locked them); deleting a move or a component deletes its items (the cascades); and neither an item's
-- move and component nor a move's or a component's id ever change (the foreign keys refused changes that orphaned
-- an item; nothing changes them). The functions take the table and column they guard as trigger arguments, so one
-- serves each reference (0023's stay written out: on the event path a plan cached beats dynamic SQL's per call).
ALTER TABLE "state_move_items" DROP CONSTRAINT "state_move_items_move_id_state_moves_id_fk";--> statement-breakpoint
ALTER TABLE "state_move_items" DROP CONSTRAINT "state_move_items_component_id_infra_components_id_fk";--> statement-breakpoint
-- Arguments: the written table's column, the table whose id it names, and what a row of that table is called.
CREATE FUNCTION planton_references_exist() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  missing text;
BEGIN
  -- Locked first, then looked for with a new snapshot: a row deleted meanwhile is waited for, then missing.
  EXECUTE format('SELECT 1 FROM %I p WHERE p.id IN (SELECT DISTINCT %I FROM added) FOR KEY SHARE OF p', TG_ARGV[1], TG_ARGV[0]);
  EXECUTE format('SELECT a.ref FROM (SELECT DISTINCT %I AS ref FROM added) a WHERE NOT EXISTS (SELECT 1 FROM %I p WHERE p.id = a.ref) LIMIT 1', TG_ARGV[0], TG_ARGV[1]) INTO missing;
  IF missing IS NOT NULL THEN
    RAISE EXCEPTION 'insert on table "%" refers to % % that does not exist', TG_TABLE_NAME, TG_ARGV[2], missing
      USING ERRCODE = 'foreign_key_violation', TABLE = TG_TABLE_NAME, COLUMN = TG_ARGV[0];
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "state_move_items_move_exists" AFTER INSERT ON "state_move_items"
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION planton_references_exist('move_id', 'state_moves', 'state move');--> statement-breakpoint
CREATE TRIGGER "state_move_items_component_exists" AFTER INSERT ON "state_move_items"
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION planton_references_exist('component_id', 'infra_components', 'component');--> statement-breakpoint
-- Arguments: the table whose rows name the deleted ones, and its column that names them.
CREATE FUNCTION planton_delete_referrers() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('DELETE FROM %I r WHERE r.%I IN (SELECT DISTINCT id FROM gone)', TG_ARGV[0], TG_ARGV[1]);
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "state_moves_delete_items" AFTER DELETE ON "state_moves"
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION planton_delete_referrers('state_move_items', 'move_id');--> statement-breakpoint
CREATE TRIGGER "infra_components_delete_move_items" AFTER DELETE ON "infra_components"
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION planton_delete_referrers('state_move_items', 'component_id');--> statement-breakpoint
CREATE FUNCTION planton_keep_references() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'what a row of % refers to, and its id, never change (%)', TG_TABLE_NAME, OLD.id
    USING ERRCODE = 'foreign_key_violation', TABLE = TG_TABLE_NAME;
END $$;--> statement-breakpoint
CREATE TRIGGER "state_move_items_keep_references" BEFORE UPDATE OF "move_id", "component_id" ON "state_move_items"
  FOR EACH ROW WHEN (OLD.move_id IS DISTINCT FROM NEW.move_id OR OLD.component_id IS DISTINCT FROM NEW.component_id)
  EXECUTE FUNCTION planton_keep_references();--> statement-breakpoint
CREATE TRIGGER "state_moves_keep_id" BEFORE UPDATE OF "id" ON "state_moves"
  FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION planton_keep_references();--> statement-breakpoint
CREATE TRIGGER "infra_components_keep_id" BEFORE UPDATE OF "id" ON "infra_components"
  FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION planton_keep_references();
