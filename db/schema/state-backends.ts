import { sql } from "drizzle-orm";
import { bigint, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";
import { createdAt, ts, updatedAt } from "./common";
import { provisionerEnum } from "./catalog";
import { connections } from "./connections";
import { organizations } from "./organizations";

/**
 * Where states live (kinds: lib/state-backend-kinds.ts; planton_managed always exists). Credentials
 * are never on this row: they come from the connection it names.
 */
export const stateBackends = pgTable(
  "state_backends",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    kind: text("kind").notNull(),
    config: jsonb("config").notNull().default({}),
    connectionId: text("connection_id").references(() => connections.id),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex("state_backends_org_name_uq").on(t.orgId, t.name)],
);

/** One default backend per provisioner per organization. */
export const stateBackendDefaults = pgTable(
  "state_backend_defaults",
  {
    orgId: text("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    provisioner: provisionerEnum("provisioner").notNull(),
    backendId: text("backend_id").notNull().references(() => stateBackends.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.provisioner] })],
);

/**
 * A move of states between backends (off Planton-managed storage for every component, or one
 * component's migrate-backend). At most one runs per organization at a time (partial unique index).
 */
export const stateMoves = pgTable(
  "state_moves",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    /** running | succeeded | failed (some items failed; they can be retried). */
    status: text("status").notNull().default("running"),
    /** move_off_planton | migrate_backend */
    scope: text("scope").notNull(),
    /** Destination backend id per provisioner. */
    destinations: jsonb("destinations").$type<Record<string, string>>().notNull(),
    startedBy: text("started_by"),
    startedByLabel: text("started_by_label").notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    finishedAt: ts("finished_at"),
  },
  (t) => [uniqueIndex("state_moves_one_running_uq").on(t.orgId).where(sql`status = 'running'`)],
);

/**
 * One component's state in a move, with the step it reached. Steps, in order: pending → held →
 * locked → copied → switched → done; or failed (with the reason), or rolled_back.
 */
export const stateMoveItems = pgTable(
  "state_move_items",
  {
    id: text("id").primaryKey(),
    /**
     * The move and the component. Not foreign keys: the rules they kept (both exist and are locked against deletion
     * until the writer commits; deleting either deletes the item; neither changes) are kept by statement-level
     * triggers (migration 0025), once per statement rather than twice per item.
     */
    moveId: text("move_id").notNull(),
    // No org_id: an item's organization is its move's (migration 0018).
    componentId: text("component_id").notNull(),
    provisioner: text("provisioner").notNull(),
    fromBackendId: text("from_backend_id").notNull(),
    toBackendId: text("to_backend_id").notNull(),
    fromKey: text("from_key").notNull(),
    toKey: text("to_key").notNull(),
    size: integer("size").notNull().default(0),
    serial: bigint("serial", { mode: "number" }),
    checksum: text("checksum"),
    step: text("step").notNull().default("pending"),
    error: text("error"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  // By move only: each step changes `step`, and an indexed column would rule out HOT updates (migration 0017, which
  // also leaves room on the pages of this table, state_objects and infra_components: fillfactor 70).
  (t) => [index("state_move_items_move_idx").on(t.moveId), index("state_move_items_component_idx").on(t.componentId)],
);
