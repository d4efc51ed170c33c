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
