import { sql } from "drizzle-orm";
import { bigint, customType, index, integer, interval, jsonb, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { createdAt, ts } from "./common";

const tsvector = customType<{ data: string }>({ dataType: () => "tsvector" });

/**
 * Who did what to which target, and when; written in the same transaction as the change. Rows are
 * append-only (database triggers refuse UPDATE, DELETE and TRUNCATE) and chained: at commit a
 * deferred trigger gives each row the next `seq` of its organization's chain, the previous row's
 * hash and its own hash over a canonical encoding (`audit_digest` in migration 0008).
 */
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
    /** The target's name when it was recorded (a component's, a connection's…): filters and search use it. */
    targetName: text("target_name"),
    /** The environment the target lives in, for components, jobs and what is scoped to one. */
    environment: text("environment"),
    /** "success", or "failure" for attempts that were refused (a sign-in, a preflight). */
    result: text("result").notNull().default("success"),
    summary: text("summary").notNull(),
    changes: jsonb("changes"),
    clientAddress: text("client_address"),
    createdAt: createdAt(),
    /** Position in the organization's chain, from 1; set at commit by the chain trigger. */
    seq: bigint("seq", { mode: "number" }),
    prevHash: text("prev_hash"),
    hash: text("hash"),
    /**
     * The newest created_at of the chain up to this event, set with `seq` at commit (migration 0022): it never
     * decreases along seq, so a time filter's bounds are positions (server/services/audit/list.ts). Not hashed.
     */
    chainHighAt: ts("chain_high_at"),
    /** The words a search finds the event by, and each one's prefixes up to 16 characters (audit_search_words, migration 0012). */
    search: tsvector("search").generatedAlwaysAs(
      sql`audit_search_words(coalesce("summary", '') || ' ' || "actor_label" || ' ' || coalesce("target_name", '') || ' ' || "action")`,
    ),
  },
  (t) => [
    index("audit_events_org_time_idx").on(t.orgId, t.createdAt),
    index("audit_events_target_idx").on(t.targetId),
    uniqueIndex("audit_events_org_seq_idx").on(t.orgId, t.seq),
    // In the C collation (migration 0021): a family of actions ("job": "job." up to "job/") is a range of it.
    index("audit_events_org_action_seq_idx").on(t.orgId, sql`${t.action} collate "C"`, t.seq),
    index("audit_events_org_environment_seq_idx").on(t.orgId, t.environment, t.seq),
    index("audit_events_org_target_type_seq_idx").on(t.orgId, t.targetType, t.seq),
    index("audit_events_org_actor_seq_idx").on(t.orgId, t.actorLabel, t.seq),
    index("audit_events_org_target_name_seq_idx").on(t.orgId, t.targetName, t.seq),
    index("audit_events_search_idx").using("gin", t.search),
    index("audit_events_org_high_at_seq_idx").on(t.orgId, t.chainHighAt, t.seq),
  ],
);

/** The last link of each organization's chain ("" for events outside any organization). Written only by the chain trigger. */
export const auditChainHeads = pgTable("audit_chain_heads", {
  chain: text("chain").primaryKey(),
  seq: bigint("seq", { mode: "number" }).notNull(),
  hash: text("hash").notNull(),
  /** The chain's newest created_at (migration 0022). */
  highAt: ts("high_at"),
  /** The most an event's created_at fell behind the chain's newest when it was linked (a writer's transaction that began earlier committed later). */
  lag: interval("lag").notNull().default("0"),
});

/**
 * A seal over events archived out of the table by the retention job: the archive file's name and
 * SHA-256 and the hash of the last event it holds, which the first event kept must link to.
 * Append-only like the events.
 */
export const auditCheckpoints = pgTable(
  "audit_checkpoints",
  {
    id: text("id").primaryKey(),
    chain: text("chain").notNull(),
    throughSeq: bigint("through_seq", { mode: "number" }).notNull(),
    throughHash: text("through_hash").notNull(),
    eventCount: integer("event_count").notNull(),
    archiveName: text("archive_name").notNull(),
    archiveSha256: text("archive_sha256").notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("audit_checkpoints_chain_seq_idx").on(t.chain, t.throughSeq)],
);
