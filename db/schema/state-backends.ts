import { jsonb, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";
import { createdAt, updatedAt } from "./common";
import { provisionerEnum } from "./catalog";
import { organizations } from "./organizations";

/** Kinds: planton_managed (always exists), s3, gcs, azurerm, r2, terraform_cloud, pulumi_cloud. */
export const stateBackends = pgTable(
  "state_backends",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    kind: text("kind").notNull(),
    config: jsonb("config").notNull().default({}),
    credentialsEncrypted: text("credentials_encrypted"),
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
