import { index, jsonb, pgEnum, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { createdAt, updatedAt } from "./common";
import { environments, organizations } from "./organizations";

export const connectionModeEnum = pgEnum("connection_mode", ["stored", "runner"]);
export const authorizationScopeEnum = pgEnum("authorization_scope", ["organization", "environment"]);

export const connections = pgTable(
  "connections",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    provider: text("provider").notNull(),
    description: text("description").notNull().default(""),
    /** Non-secret settings, e.g. region or the local provider's root folder. */
    config: jsonb("config").notNull().default({}),
    /** AES-256-GCM ciphertext of the credential fields; null in runner mode. */
    credentialsEncrypted: text("credentials_encrypted"),
    mode: connectionModeEnum("mode").notNull().default("stored"),
    runnerId: text("runner_id"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex("connections_org_name_uq").on(t.orgId, t.name)],
);

export const connectionAuthorizations = pgTable(
  "connection_authorizations",
  {
    id: text("id").primaryKey(),
    connectionId: text("connection_id").notNull().references(() => connections.id, { onDelete: "cascade" }),
    scope: authorizationScopeEnum("scope").notNull(),
    /** Set when scope is environment. */
    environmentId: text("environment_id").references(() => environments.id, { onDelete: "cascade" }),
    createdAt: createdAt(),
  },
  (t) => [
    index("connection_authorizations_conn_idx").on(t.connectionId),
    uniqueIndex("connection_authorizations_uq").on(t.connectionId, t.scope, t.environmentId),
  ],
);
