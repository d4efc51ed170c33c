-- The Audit page's time filters at a million events. Positions (seq) follow commits, times (created_at) follow
-- the start of each writer's transaction, so the planner cannot tell where "before <date>" begins in the
-- (org_id, seq) index: it read every newer event (bench/audit.ts, "before a day 300 days ago": 80–100 ms at
-- 200 000 events, linear in the record). Each event now carries its chain's newest created_at up to itself
-- (chain_high_at, set by the chain trigger: never decreasing along seq), and each chain head the most any event's
-- created_at fell behind that when it was linked (lag). Then every event created at or after F has seq at or past
-- the first with chain_high_at >= F, and every event created before T has seq at most one past the last with
-- chain_high_at < T + lag: two index probes bound the positions a time filter reads, exactly. Neither is hashed
-- (like seq, both are the chain's bookkeeping, not the record). Existing events are filled in here.
ALTER TABLE "audit_events" ADD COLUMN "chain_high_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "audit_chain_heads" ADD COLUMN "high_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "audit_chain_heads" ADD COLUMN "lag" interval DEFAULT '0' NOT NULL;--> statement-breakpoint
ALTER TABLE "audit_events" DISABLE TRIGGER "audit_events_guard";--> statement-breakpoint
UPDATE "audit_events" e SET "chain_high_at" = r.high FROM (
  SELECT id, max(created_at) OVER (PARTITION BY coalesce(org_id, '') ORDER BY seq) AS high FROM audit_events WHERE seq IS NOT NULL
) r WHERE e.id = r.id;--> statement-breakpoint
ALTER TABLE "audit_events" ENABLE TRIGGER "audit_events_guard";--> statement-breakpoint
ALTER TABLE "audit_chain_heads" DISABLE TRIGGER "audit_chain_heads_guard";--> statement-breakpoint
UPDATE "audit_chain_heads" h SET "high_at" = r.high, "lag" = r.lag FROM (
  SELECT chain, max(created_at) AS high, coalesce(max(prev_high - created_at) FILTER (WHERE prev_high > created_at), interval '0') AS lag
  FROM (
    SELECT coalesce(org_id, '') AS chain, created_at,
           max(created_at) OVER (PARTITION BY coalesce(org_id, '') ORDER BY seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_high
    FROM audit_events WHERE seq IS NOT NULL
  ) x GROUP BY chain
) r WHERE h.chain = r.chain;--> statement-breakpoint
ALTER TABLE "audit_chain_heads" ENABLE TRIGGER "audit_chain_heads_guard";--> statement-breakpoint
CREATE INDEX "audit_events_org_high_at_seq_idx" ON "audit_events" USING btree ("org_id","chain_high_at","seq");--> statement-breakpoint
-- At commit, as before, and the chain's newest created_at and lag carried along.
CREATE OR REPLACE FUNCTION audit_link() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  c text := coalesce(NEW.org_id, '');
  pos bigint;
  prev text;
  high timestamptz;
  behind interval;
  h text;
BEGIN
  PERFORM set_config('planton.audit_link', NEW.id, true);
  INSERT INTO audit_chain_heads (chain, seq, hash) VALUES (c, 0, repeat('0', 64)) ON CONFLICT (chain) DO NOTHING;
  UPDATE audit_chain_heads SET seq = seq + 1 WHERE chain = c RETURNING seq, hash, high_at, lag INTO pos, prev, high, behind;
  h := audit_digest(prev, pos, NEW);
  UPDATE audit_events SET seq = pos, prev_hash = prev, hash = h, chain_high_at = greatest(high, NEW.created_at) WHERE id = NEW.id;
  UPDATE audit_chain_heads SET hash = h, high_at = greatest(high, NEW.created_at), lag = greatest(behind, high - NEW.created_at) WHERE chain = c;
  PERFORM set_config('planton.audit_link', '', true);
  RETURN NULL;
END $$;
--> statement-breakpoint
-- The one update allowed is still the chain trigger linking a row it has just been given: now its bookkeeping too.
CREATE OR REPLACE FUNCTION audit_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.hash IS NULL AND current_setting('planton.audit_link', true) = OLD.id
     AND (to_jsonb(NEW) - 'seq' - 'prev_hash' - 'hash' - 'search' - 'chain_high_at') = (to_jsonb(OLD) - 'seq' - 'prev_hash' - 'hash' - 'search' - 'chain_high_at') THEN
    RETURN NEW;
  END IF;
  IF TG_OP = 'DELETE' AND EXISTS (SELECT 1 FROM audit_checkpoints k WHERE k.chain = coalesce(OLD.org_id, '') AND k.through_seq >= OLD.seq) THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'audit events are append-only: % refused', TG_OP USING ERRCODE = '42501';
END $$;
