-- Audit search at a million events (issue 12). The search words, one rule for what is recorded and
-- what is searched for:
-- 1. Punctuation separates words: "component-4217" is "component" and "4217" (the text parser alone made
--    it "component" and "-4217", so a target's name did not find its events), user7@acme.example has "acme".
-- 2. `search` holds every word's prefixes (up to 16 characters) as words of their own, so a search for
--    "appro" looks up one entry of the index. Matching prefixes in the index instead read every posting
--    list they cover (all million rows for "component") before a row was read: tens of milliseconds.
CREATE FUNCTION audit_words(t text) RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT tsvector_to_array(to_tsvector('simple', regexp_replace(t, '[[:punct:]]+', ' ', 'g')))
$$;
--> statement-breakpoint
-- A word longer than 16 characters is kept whole besides its first 16 prefixes; the search matches it as a prefix.
CREATE FUNCTION audit_search_words(t text) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT array_to_tsvector(ARRAY(SELECT left(w, n) FROM unnest(audit_words(t)) w, generate_series(1, length(w)) n WHERE n <= 16 OR n = length(w)))
$$;
--> statement-breakpoint
-- What a search for `q` matches: every word of it starts a word of the event. The words carry no quote
-- or backslash (punctuation is gone), so they can be quoted into a tsquery as they are.
CREATE FUNCTION audit_search_query(q text) RETURNS tsquery LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT array_to_string(ARRAY(SELECT '''' || w || CASE WHEN length(w) <= 16 THEN '''' ELSE ''':*' END FROM unnest(audit_words(q)) w), ' & ')::tsquery
$$;
--> statement-breakpoint
ALTER TABLE "audit_events" DROP COLUMN "search";--> statement-breakpoint
ALTER TABLE "audit_events" ADD COLUMN "search" "tsvector" GENERATED ALWAYS AS (audit_search_words(coalesce("summary", '') || ' ' || "actor_label" || ' ' || coalesce("target_name", '') || ' ' || "action")) STORED;--> statement-breakpoint
-- Dropping the column dropped its index.
CREATE INDEX "audit_events_search_idx" ON "audit_events" USING gin ("search");
