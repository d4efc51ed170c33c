// Invitations and sign-in throttles: how a person gets their own password, and how guessing one is slowed.
import { index, integer, pgTable, text } from "drizzle-orm/pg-core";
import { createdAt, ts } from "./common";
import { users } from "./auth";
import { organizations } from "./organizations";

export const invitations = pgTable(
  "invitations",
  {
    id: text("id").primaryKey(),
    userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    /** The organization whose admin issued it (the page names it). */
    orgId: text("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    /** `set_password`: the link sets the account's password once; `join`: it only leads an existing account to sign in. */
    kind: text("kind", { enum: ["set_password", "join"] }).notNull(),
    /** SHA-256 of the token in the link; the token itself is shown once and never stored. */
    tokenHash: text("token_hash").notNull().unique(),
    createdBy: text("created_by"),
    expiresAt: ts("expires_at").notNull(),
    usedAt: ts("used_at"),
    createdAt: createdAt(),
  },
  (t) => [index("invitations_user_idx").on(t.userId)],
);

/** One row per throttled key (`pair:<email>|<address>`, `account:<email>`, `address:<address>`). */
export const signInThrottles = pgTable("sign_in_throttles", {
  key: text("key").primaryKey(),
  failures: integer("failures").notNull().default(0),
  lastFailureAt: ts("last_failure_at").notNull(),
  lockedUntil: ts("locked_until"),
});
