CREATE TABLE "state_move_items" (
	"id" text PRIMARY KEY NOT NULL,
	"move_id" text NOT NULL,
	"org_id" text NOT NULL,
	"component_id" text NOT NULL,
	"provisioner" text NOT NULL,
	"from_backend_id" text NOT NULL,
	"to_backend_id" text NOT NULL,
	"from_key" text NOT NULL,
	"to_key" text NOT NULL,
	"size" integer DEFAULT 0 NOT NULL,
	"serial" integer,
	"checksum" text,
	"step" text DEFAULT 'pending' NOT NULL,
	"error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "state_moves" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"status" text DEFAULT 'running' NOT NULL,
	"scope" text NOT NULL,
	"destinations" jsonb NOT NULL,
	"started_by" text,
	"started_by_label" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "state_backends" ADD COLUMN "connection_id" text;--> statement-breakpoint
ALTER TABLE "infra_components" ADD COLUMN "state_key" text;--> statement-breakpoint
ALTER TABLE "infra_components" ADD COLUMN "state_hold" text;--> statement-breakpoint
ALTER TABLE "state_objects" ADD COLUMN "moved_to_backend_id" text;--> statement-breakpoint
ALTER TABLE "state_objects" ADD COLUMN "moved_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "state_move_items" ADD CONSTRAINT "state_move_items_move_id_state_moves_id_fk" FOREIGN KEY ("move_id") REFERENCES "public"."state_moves"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "state_move_items" ADD CONSTRAINT "state_move_items_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "state_move_items" ADD CONSTRAINT "state_move_items_component_id_infra_components_id_fk" FOREIGN KEY ("component_id") REFERENCES "public"."infra_components"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "state_moves" ADD CONSTRAINT "state_moves_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "state_move_items_move_idx" ON "state_move_items" USING btree ("move_id","step");--> statement-breakpoint
CREATE INDEX "state_move_items_component_idx" ON "state_move_items" USING btree ("component_id");--> statement-breakpoint
CREATE UNIQUE INDEX "state_moves_one_running_uq" ON "state_moves" USING btree ("org_id") WHERE status = 'running';--> statement-breakpoint
ALTER TABLE "state_backends" ADD CONSTRAINT "state_backends_connection_id_connections_id_fk" FOREIGN KEY ("connection_id") REFERENCES "public"."connections"("id") ON DELETE no action ON UPDATE no action;