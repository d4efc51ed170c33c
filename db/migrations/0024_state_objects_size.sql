-- A Planton-managed state's size (its canonical JSON's bytes, as state_versions.size) kept on its row with every
-- write, so what is on Planton-managed storage (Settings → State Backends, the move's dry run and plan) is read
-- from the rows instead of turning every state document into its bytes: at 10 000 states that read took
-- 0.7 s of the console's CPU on every visit. A row written before this keeps a null size until its next write;
-- readers measure its state then. The backfill takes the size of a kept version with the same checksum.
ALTER TABLE "state_objects" ADD COLUMN "size" integer;--> statement-breakpoint
UPDATE "state_objects" o SET "size" = v."size"
  FROM (SELECT DISTINCT ON (component_id, checksum) component_id, checksum, "size" FROM "state_versions" ORDER BY component_id, checksum, id DESC) v
 WHERE v.component_id = o.component_id AND v.checksum = o.checksum AND o.state IS NOT NULL;
