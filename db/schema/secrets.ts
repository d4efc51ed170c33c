import { sql } from "drizzle-orm";
import { check, integer, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";
import { createdAt, updatedAt } from "./common";
import { authorizationScopeEnum } from "./connections";
import { environments, organizations } from "./organizations";

export const secrets = pgTable(
  "secrets",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    description: text("description").notNull().default(""),
    /** AES-256-GCM: base64 of iv | tag | ciphertext. Never returned in clear. */
    valueEncrypted: text("value_encrypted").notNull(),
    /** Set on a secret a job generated from a sensitive output: the component it belongs to. */
    componentId: text("component_id"),
    /** organization: every job of the organization may use it; environment: only jobs in secret_environments. */
    scope: authorizationScopeEnum("scope").notNull().default("organization"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex("secrets_org_name_uq").on(t.orgId, t.name)],
);

export const variables = pgTable(
  "variables",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    description: text("description").notNull().default(""),
    value: text("value").notNull(),
    /** organization: every job of the organization may use it; environment: only jobs in variable_environments. */
    scope: authorizationScopeEnum("scope").notNull().default("organization"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex("variables_org_name_uq").on(t.orgId, t.name)],
);

/** The environments whose jobs may use an environment-scoped secret. */
export const secretEnvironments = pgTable(
  "secret_environments",
  {
    secretId: text("secret_id").notNull().references(() => secrets.id, { onDelete: "cascade" }),
    environmentId: text("environment_id").notNull().references(() => environments.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.secretId, t.environmentId] })],
);

/** The environments whose jobs may use an environment-scoped variable. */
export const variableEnvironments = pgTable(
  "variable_environments",
  {
    variableId: text("variable_id").notNull().references(() => variables.id, { onDelete: "cascade" }),
    environmentId: text("environment_id").notNull().references(() => environments.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.variableId, t.environmentId] })],
);

/**
 * One row: a value sealed with the server key of the first console that started on this database
 * (server/server-key-check.ts). Every console after it must open it, so consoles on one database share one key
 * even when they started at once on an empty one (nothing else sealed to check against yet).
 */
export const serverKeyCheck = pgTable(
  "server_key_check",
  {
    id: integer("id").primaryKey().default(1),
    sealed: text("sealed").notNull(),
    createdAt: createdAt(),
  },
  (t) => [check("server_key_check_one_row", sql`${t.id} = 1`)],
);
