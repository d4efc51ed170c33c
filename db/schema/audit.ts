import { index, jsonb, pgTable, text } from "drizzle-orm/pg-core";
import { createdAt } from "./common";

/** Who did what to which target, and when; written in the same transaction as the change. */
export const auditEvents = pgTable(
  "audit_events",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id"),
    actorId: text("actor_id"),
    /** Email, token name or "system": readable even after the actor is gone. */
    actorLabel: text("actor_label").notNull(),
    action: text("action").notNull(),
    targetType: text("target_type").notNull(),
    targetId: text("target_id"),
    summary: text("summary").notNull(),
    changes: jsonb("changes"),
    clientAddress: text("client_address"),
    createdAt: createdAt(),
  },
  (t) => [index("audit_events_org_time_idx").on(t.orgId, t.createdAt), index("audit_events_target_idx").on(t.targetId)],
);
