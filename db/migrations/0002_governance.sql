CREATE TABLE "secret_environments" (
	"secret_id" text NOT NULL,
	"environment_id" text NOT NULL,
	CONSTRAINT "secret_environments_secret_id_environment_id_pk" PRIMARY KEY("secret_id","environment_id")
);
--> statement-breakpoint
CREATE TABLE "variable_environments" (
	"variable_id" text NOT NULL,
	"environment_id" text NOT NULL,
	CONSTRAINT "variable_environments_variable_id_environment_id_pk" PRIMARY KEY("variable_id","environment_id")
);
--> statement-breakpoint
ALTER TABLE "secrets" ADD COLUMN "component_id" text;--> statement-breakpoint
ALTER TABLE "secrets" ADD COLUMN "scope" "authorization_scope" DEFAULT 'organization' NOT NULL;--> statement-breakpoint
ALTER TABLE "variables" ADD COLUMN "scope" "authorization_scope" DEFAULT 'organization' NOT NULL;--> statement-breakpoint
ALTER TABLE "runners" ADD COLUMN "revoked_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "message" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "artifacts" ADD COLUMN "encrypted" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "secret_environments" ADD CONSTRAINT "secret_environments_secret_id_secrets_id_fk" FOREIGN KEY ("secret_id") REFERENCES "public"."secrets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "secret_environments" ADD CONSTRAINT "secret_environments_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "variable_environments" ADD CONSTRAINT "variable_environments_variable_id_variables_id_fk" FOREIGN KEY ("variable_id") REFERENCES "public"."variables"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "variable_environments" ADD CONSTRAINT "variable_environments_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
-- Generated secrets: `<component>-<output>` (refused by the name rule, shared across environments) becomes
-- lib/secrets.ts generatedSecretName(environment, component, output), scoped to the environment, with its component.
CREATE FUNCTION "planton_0002_secret_name"(env text, component text, output text) RETURNS text LANGUAGE sql IMMUTABLE AS $fn$
  SELECT replace(regexp_replace(upper(env), '-(?=-|$)', '_x', 'g'), '-', '_')
    || '__' || replace(regexp_replace(upper(component), '-(?=-|$)', '_x', 'g'), '-', '_')
    || '__' || replace(replace(upper(regexp_replace(output, '([A-Z])', '~\1', 'g')), '~', 'u'), '-', 'd')
$fn$;
--> statement-breakpoint
CREATE TABLE "planton_0002_generated" AS
  SELECT s.id AS secret_id, s.org_id, s.name AS old_name, "planton_0002_secret_name"(e.name, c.name, m.p[1]) AS new_name,
         c.id AS component_id, e.id AS environment_id, e.name AS environment
  FROM secrets s
  CROSS JOIN LATERAL (SELECT regexp_match(s.description, '^Output (.+) of (.+) \(job ([^)]+)\)$') AS p) m
  JOIN infra_jobs j ON j.id = m.p[3]
  JOIN infra_components c ON c.id = j.component_id AND c.name = m.p[2]
  JOIN environments e ON e.id = c.environment_id
  WHERE m.p IS NOT NULL AND s.component_id IS NULL AND s.name = m.p[2] || '-' || m.p[1];
--> statement-breakpoint
DELETE FROM "planton_0002_generated" g WHERE EXISTS (SELECT 1 FROM secrets s WHERE s.org_id = g.org_id AND s.name = g.new_name);
--> statement-breakpoint
UPDATE infra_jobs j SET outputs = (
  SELECT jsonb_object_agg(o.key, CASE WHEN g.new_name IS NULL THEN o.value ELSE jsonb_set(o.value, '{value}', to_jsonb('$secret/' || g.new_name)) END)
  FROM jsonb_each(j.outputs) o
  LEFT JOIN "planton_0002_generated" g ON g.org_id = j.org_id AND o.value->>'value' = '$secret/' || g.old_name
)
WHERE jsonb_typeof(j.outputs) = 'object'
  AND EXISTS (SELECT 1 FROM jsonb_each(j.outputs) o JOIN "planton_0002_generated" g ON g.org_id = j.org_id AND o.value->>'value' = '$secret/' || g.old_name);
--> statement-breakpoint
UPDATE infra_components c SET spec = (
  SELECT jsonb_object_agg(f.key, COALESCE((SELECT to_jsonb('$secret/' || g.new_name) FROM "planton_0002_generated" g WHERE g.org_id = c.org_id AND f.value = to_jsonb('$secret/' || g.old_name)), f.value))
  FROM jsonb_each(c.spec) f
)
WHERE jsonb_typeof(c.spec) = 'object'
  AND EXISTS (SELECT 1 FROM jsonb_each(c.spec) f JOIN "planton_0002_generated" g ON g.org_id = c.org_id AND f.value = to_jsonb('$secret/' || g.old_name));
--> statement-breakpoint
UPDATE secrets s SET name = g.new_name, scope = 'environment', component_id = g.component_id,
  description = regexp_replace(s.description, ' \(job ', ' in ' || g.environment || ' (job ')
FROM "planton_0002_generated" g WHERE g.secret_id = s.id;
--> statement-breakpoint
INSERT INTO secret_environments (secret_id, environment_id) SELECT secret_id, environment_id FROM "planton_0002_generated" ON CONFLICT DO NOTHING;
--> statement-breakpoint
DROP TABLE "planton_0002_generated";
--> statement-breakpoint
DROP FUNCTION "planton_0002_secret_name"(text, text, text);
