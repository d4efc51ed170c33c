import { index, jsonb, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { createdAt, updatedAt } from "./common";
import { connections } from "./connections";
import { environments, organizations } from "./organizations";
import { users } from "./auth";

export const infraComponents = pgTable(
  "infra_components",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    environmentId: text("environment_id").notNull().references(() => environments.id),
    kind: text("kind").notNull(),
    name: text("name").notNull(),
    description: text("description").notNull().default(""),
    spec: jsonb("spec").notNull().default({}),
    connectionId: text("connection_id").references(() => connections.id),
    customModuleId: text("custom_module_id"),
    stateBackendId: text("state_backend_id"),
    /** The state's key in its backend when not the default (a move sets the key it copied to). */
    stateKey: text("state_key"),
    /** The state move holding this component's job queue (its jobs wait until it ends); null when none. */
    stateHold: text("state_hold"),
    createdBy: text("created_by").references(() => users.id),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex("infra_components_env_name_uq").on(t.environmentId, t.name),
    index("infra_components_org_idx").on(t.orgId, t.kind),
  ],
);
