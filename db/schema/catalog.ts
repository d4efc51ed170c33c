import { index, jsonb, pgEnum, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { createdAt } from "./common";
import { organizations } from "./organizations";
import { PROVISIONERS } from "../../lib/catalog";

export const provisionerEnum = pgEnum("provisioner", PROVISIONERS);

/** A catalog kind: platform-wide (orgId null) or an organization's own. */
export const catalogKinds = pgTable(
  "catalog_kinds",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").references(() => organizations.id, { onDelete: "cascade" }),
    /** "platform" or the org id, so uniqueness holds for platform rows too. */
    scopeKey: text("scope_key").notNull(),
    kind: text("kind").notNull(),
    title: text("title").notNull(),
    description: text("description").notNull().default(""),
    /** The connection provider this kind deploys through (local, aws, gcp, …). */
    provider: text("provider").notNull(),
    /** Field definitions the spec editor renders and the service validates against. */
    specSchema: jsonb("spec_schema").notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("catalog_kinds_scope_kind_uq").on(t.scopeKey, t.kind)],
);

/** An IaC module registered for a kind: the platform registry (orgId null) or an organization's. */
export const iacModules = pgTable(
  "iac_modules",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").references(() => organizations.id, { onDelete: "cascade" }),
    scopeKey: text("scope_key").notNull(),
    kind: text("kind").notNull(),
    name: text("name").notNull(),
    provisioner: provisionerEnum("provisioner").notNull(),
    version: text("version").notNull(),
    /** Where the module's files are: `catalog/modules/<name>` for builtin platform modules. */
    source: text("source").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("iac_modules_scope_name_version_uq").on(t.scopeKey, t.name, t.version),
    index("iac_modules_kind_idx").on(t.scopeKey, t.kind),
  ],
);
