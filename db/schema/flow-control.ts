import { boolean, pgEnum, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { createdAt, updatedAt } from "./common";

export const policySelectorEnum = pgEnum("policy_selector", ["platform", "organization", "environment", "component"]);

/**
 * A flow-control policy. The most specific one that applies wins (component, then environment,
 * then organization, then platform); policies are never merged.
 */
export const flowControlPolicies = pgTable(
  "flow_control_policies",
  {
    id: text("id").primaryKey(),
    selector: policySelectorEnum("selector").notNull(),
    /** null for the platform policy. */
    orgId: text("org_id"),
    /** "platform", the org id, the environment id or the component id. */
    selectorId: text("selector_id").notNull(),
    manualStart: boolean("manual_start").notNull().default(false),
    skipRefresh: boolean("skip_refresh").notNull().default(false),
    previewBeforeApply: boolean("preview_before_apply").notNull().default(true),
    pauseBeforeApply: boolean("pause_before_apply").notNull().default(false),
    protectDeletes: boolean("protect_deletes").notNull().default(false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex("flow_control_policies_selector_uq").on(t.selector, t.selectorId)],
);
