CREATE TABLE "audit_chain_heads" (
	"chain" text PRIMARY KEY NOT NULL,
	"seq" bigint NOT NULL,
	"hash" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "audit_checkpoints" (
	"id" text PRIMARY KEY NOT NULL,
	"chain" text NOT NULL,
	"through_seq" bigint NOT NULL,
	"through_hash" text NOT NULL,
	"event_count" integer NOT NULL,
	"archive_name" text NOT NULL,
	"archive_sha256" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "audit_events" ADD COLUMN "target_name" text;--> statement-breakpoint
ALTER TABLE "audit_events" ADD COLUMN "environment" text;--> statement-breakpoint
ALTER TABLE "audit_events" ADD COLUMN "result" text DEFAULT 'success' NOT NULL;--> statement-breakpoint
ALTER TABLE "audit_events" ADD COLUMN "seq" bigint;--> statement-breakpoint
ALTER TABLE "audit_events" ADD COLUMN "prev_hash" text;--> statement-breakpoint
ALTER TABLE "audit_events" ADD COLUMN "hash" text;--> statement-breakpoint
ALTER TABLE "audit_events" ADD COLUMN "search" "tsvector" GENERATED ALWAYS AS (to_tsvector('simple', coalesce("summary", '') || ' ' || "actor_label" || ' ' || coalesce("target_name", '') || ' ' || "action")) STORED;--> statement-breakpoint
CREATE UNIQUE INDEX "audit_checkpoints_chain_seq_idx" ON "audit_checkpoints" USING btree ("chain","through_seq");--> statement-breakpoint
CREATE UNIQUE INDEX "audit_events_org_seq_idx" ON "audit_events" USING btree ("org_id","seq");--> statement-breakpoint
CREATE INDEX "audit_events_org_action_seq_idx" ON "audit_events" USING btree ("org_id","action","seq");--> statement-breakpoint
CREATE INDEX "audit_events_org_actor_seq_idx" ON "audit_events" USING btree ("org_id","actor_label","seq");--> statement-breakpoint
CREATE INDEX "audit_events_search_idx" ON "audit_events" USING gin ("search");--> statement-breakpoint
-- The hash of one audit event: SHA-256 over a canonical encoding (a JSON array whose text form
-- jsonb fixes) of the previous event's hash, its position and every recorded field. `planton audit
-- verify` recomputes it with this same function, so writer and verifier cannot drift apart.
CREATE FUNCTION audit_digest(prev text, pos bigint, e audit_events) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT encode(sha256(convert_to(jsonb_build_array(
    prev, pos, e.id, e.org_id, e.actor_id, e.actor_label, e.action, e.target_type, e.target_id, e.target_name,
    e.environment, e.result, e.summary, e.changes, e.client_address,
    to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
  )::text, 'UTF8')), 'hex')
$$;
--> statement-breakpoint
-- Links the events already recorded, in the order they were written.
DO $$
DECLARE
  r record;
  h text;
  prev text := '';
  pos bigint := 0;
  cur text := NULL;
BEGIN
  FOR r IN SELECT e.*, coalesce(e.org_id, '') AS chain FROM audit_events e ORDER BY coalesce(e.org_id, ''), e.created_at, e.id LOOP
    IF cur IS DISTINCT FROM r.chain THEN
      IF cur IS NOT NULL THEN INSERT INTO audit_chain_heads (chain, seq, hash) VALUES (cur, pos, prev); END IF;
      cur := r.chain; prev := repeat('0', 64); pos := 0;
    END IF;
    pos := pos + 1;
    h := audit_digest(prev, pos, (SELECT a FROM audit_events a WHERE a.id = r.id));
    UPDATE audit_events SET seq = pos, prev_hash = prev, hash = h WHERE id = r.id;
    prev := h;
  END LOOP;
  IF cur IS NOT NULL THEN INSERT INTO audit_chain_heads (chain, seq, hash) VALUES (cur, pos, prev); END IF;
END $$;
--> statement-breakpoint
-- At commit, each new event takes the next position of its organization's chain. The head row's
-- lock serializes the organization's committing writers only for the instant of their commit.
CREATE FUNCTION audit_link() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  c text := coalesce(NEW.org_id, '');
  pos bigint;
  prev text;
  h text;
BEGIN
  PERFORM set_config('planton.audit_link', NEW.id, true);
  INSERT INTO audit_chain_heads (chain, seq, hash) VALUES (c, 0, repeat('0', 64)) ON CONFLICT (chain) DO NOTHING;
  UPDATE audit_chain_heads SET seq = seq + 1 WHERE chain = c RETURNING seq, hash INTO pos, prev;
  h := audit_digest(prev, pos, NEW);
  UPDATE audit_events SET seq = pos, prev_hash = prev, hash = h WHERE id = NEW.id;
  UPDATE audit_chain_heads SET hash = h WHERE chain = c;
  PERFORM set_config('planton.audit_link', '', true);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER audit_events_link AFTER INSERT ON audit_events DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION audit_link();
--> statement-breakpoint
-- Append-only: the one update allowed is the chain trigger linking a row it has just been given;
-- a delete only of events an archive checkpoint has sealed (the retention job exports them first).
CREATE FUNCTION audit_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.hash IS NULL AND current_setting('planton.audit_link', true) = OLD.id
     AND (to_jsonb(NEW) - 'seq' - 'prev_hash' - 'hash' - 'search') = (to_jsonb(OLD) - 'seq' - 'prev_hash' - 'hash' - 'search') THEN
    RETURN NEW;
  END IF;
  IF TG_OP = 'DELETE' AND EXISTS (SELECT 1 FROM audit_checkpoints k WHERE k.chain = coalesce(OLD.org_id, '') AND k.through_seq >= OLD.seq) THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'audit events are append-only: % refused', TG_OP USING ERRCODE = '42501';
END $$;
--> statement-breakpoint
CREATE TRIGGER audit_events_guard BEFORE UPDATE OR DELETE ON audit_events FOR EACH ROW EXECUTE FUNCTION audit_guard();
--> statement-breakpoint
CREATE FUNCTION audit_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'audit_chain_heads' AND TG_OP = 'UPDATE' AND coalesce(current_setting('planton.audit_link', true), '') <> '' THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = '42501';
END $$;
--> statement-breakpoint
CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse();
--> statement-breakpoint
CREATE TRIGGER audit_checkpoints_guard BEFORE UPDATE OR DELETE ON audit_checkpoints FOR EACH ROW EXECUTE FUNCTION audit_refuse();
--> statement-breakpoint
CREATE TRIGGER audit_checkpoints_no_truncate BEFORE TRUNCATE ON audit_checkpoints FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse();
--> statement-breakpoint
CREATE TRIGGER audit_chain_heads_guard BEFORE UPDATE OR DELETE ON audit_chain_heads FOR EACH ROW EXECUTE FUNCTION audit_refuse();
--> statement-breakpoint
CREATE TRIGGER audit_chain_heads_no_truncate BEFORE TRUNCATE ON audit_chain_heads FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse();
