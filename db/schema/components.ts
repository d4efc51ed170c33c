import { sql } from "drizzle-orm";
import { index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";
import type { ComponentStatus } from "../../lib/component-lifecycle";
import { createdAt, ts, updatedAt } from "./common";
import { connections } from "./connections";
import { environments, organizations } from "./organizations";
import { users } from "./auth";

// Pages keep room for HOT updates (fillfactor 70, migration 0017): a state move updates each component three times.
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
    /** lib/component-lifecycle.ts: draft | active | deleting | delete_failed | deleted | forgotten. */
    status: text("status").$type<ComponentStatus>().notNull().default("active"),
    /** Why it is in that status, in the product's words (the failed destroy's reason); null when nothing to say. */
    statusReason: text("status_reason"),
    /** The spec version it is at: every change records the next one in infra_component_versions. */
    specVersion: integer("spec_version").notNull().default(1),
    /** The destroy job deleting it (its outcome decides deleted or delete_failed); null when not being deleted. */
    deleteJobId: text("delete_job_id"),
    deletedAt: ts("deleted_at"),
    /** Who deleted or forgot it (email or token name). */
    deletedBy: text("deleted_by"),
    createdBy: text("created_by").references(() => users.id),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    // A deleted or forgotten component's name is free again; its history keeps the old row.
    uniqueIndex("infra_components_env_name_uq").on(t.environmentId, t.name).where(sql`${t.status} not in ('deleted', 'forgotten')`),
    index("infra_components_org_idx").on(t.orgId, t.kind),
  ],
);

/**
 * Every configuration a component has had: version 1 at creation, one more per change, with the
 * field-level diff from the version before (names, not ids; spec keys as `spec.<key>`). Append-only.
 */
export const componentVersions = pgTable(
  "infra_component_versions",
  {
    componentId: text("component_id").notNull().references(() => infraComponents.id, { onDelete: "cascade" }),
    version: integer("version").notNull(),
    orgId: text("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    description: text("description").notNull().default(""),
    spec: jsonb("spec").notNull().default({}),
    connectionId: text("connection_id"),
    connectionName: text("connection_name"),
    stateBackendId: text("state_backend_id"),
    stateBackendName: text("state_backend_name"),
    customModuleId: text("custom_module_id"),
    /** From the version before: `{field: {from, to}}`; version 1 has every field from null. */
    changes: jsonb("changes").$type<Record<string, { from: unknown; to: unknown }>>().notNull().default({}),
    createdBy: text("created_by"),
    createdByLabel: text("created_by_label").notNull().default("system"),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.componentId, t.version] })],
);
