import { check, index, integer, jsonb, pgEnum, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import { createdAt } from "./common";
import { organizations } from "./organizations";
import { PROVISIONERS } from "../../lib/catalog";
import { MODULE_SOURCE_KINDS } from "../../lib/modules";

/** A module bundle, stored once by its checksum: path → UTF-8 text. Never changes. */
export const moduleBundles = pgTable("module_bundles", {
  sha256: text("sha256").primaryKey(),
  files: jsonb("files").$type<Record<string, string>>().notNull(),
  size: integer("size").notNull(),
  fileCount: integer("file_count").notNull(),
  createdAt: createdAt(),
});

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
    /** Where the module's files are: `catalog/modules/<name>` for builtin platform modules; a description of the git or archive source for registered ones. */
    source: text("source").notNull(),
    /** builtin: a folder the server ships (platform); git and archive: fetched once at registration into `module_bundles`. */
    sourceKind: text("source_kind", { enum: MODULE_SOURCE_KINDS }).notNull().default("builtin"),
    gitUrl: text("git_url"),
    gitRef: text("git_ref"),
    /** The commit the ref resolved to when the version was registered. */
    gitCommit: text("git_commit"),
    /** The subfolder of the repository the module is in ("" or null: its root). */
    gitPath: text("git_path"),
    archiveName: text("archive_name"),
    /** The bundle's checksum (lib/module-bundle.ts); for git and archive versions, its row in module_bundles. */
    bundleSha256: text("bundle_sha256").references(() => moduleBundles.sha256, { onDelete: "restrict" }),
    size: integer("size").notNull().default(0),
    fileCount: integer("file_count").notNull().default(0),
    readme: text("readme").notNull().default(""),
    /** The module's inputs, from its `variable` blocks (lib/api/module-schemas.ts moduleInputSchema). */
    inputs: jsonb("inputs").notNull().default([]),
    registeredBy: text("registered_by"),
    registeredByLabel: text("registered_by_label").notNull().default("system"),
    createdAt: createdAt(),
  },
  (t) => [
    check("iac_modules_source_kind_check", sql`${t.sourceKind} in ('builtin', 'git', 'archive')`),
    uniqueIndex("iac_modules_scope_name_version_uq").on(t.scopeKey, t.name, t.version),
    index("iac_modules_kind_idx").on(t.scopeKey, t.kind),
  ],
);
