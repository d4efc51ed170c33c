import { integer, jsonb, pgEnum, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import type { Provisioner } from "../../lib/catalog";
import { createdAt, ts } from "./common";

export const runnerKindEnum = pgEnum("runner_kind", ["hosted", "self_hosted"]);

/** A runner: Planton-hosted (orgId null, serves every organization) or an organization's own. */
export const runners = pgTable(
  "runners",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id"),
    scopeKey: text("scope_key").notNull(),
    name: text("name").notNull(),
    kind: runnerKindEnum("kind").notNull(),
    tokenHash: text("token_hash").notNull().unique(),
    labels: jsonb("labels").notNull().default({}),
    capacity: integer("capacity").notNull().default(2),
    version: text("version"),
    /** The engines it has, as it last reported them at a claim: provisioner → version (builtin always). */
    engines: jsonb("engines").$type<Partial<Record<Provisioner, string>>>().notNull().default({}),
    lastSeenAt: ts("last_seen_at"),
    /** A revoked runner's claims, heartbeats and job credentials are refused. */
    revokedAt: ts("revoked_at"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("runners_scope_name_uq").on(t.scopeKey, t.name)],
);
