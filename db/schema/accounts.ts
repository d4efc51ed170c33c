// Invitations and sign-in throttles: how a person gets their own password, and how guessing one is slowed.
import { index, integer, pgTable, text } from "drizzle-orm/pg-core";
import { createdAt, ts } from "./common";
import { users } from "./auth";
import { organizations, roleEnum } from "./organizations";

export const invitations = pgTable(
  "invitations",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    /** `member`: joins `email` to the organization as `role` once accepted; `reset`: lets `userId` choose a new password. */
    kind: text("kind", { enum: ["member", "reset"] }).notNull(),
    email: text("email").notNull(),
    role: roleEnum("role"),
    userId: text("user_id").references(() => users.id, { onDelete: "cascade" }),
    /** SHA-256 of the token in the link; the token itself is shown once and never stored. */
    tokenHash: text("token_hash").notNull().unique(),
    createdBy: text("created_by"),
    expiresAt: ts("expires_at").notNull(),
    usedAt: ts("used_at"),
    createdAt: createdAt(),
  },
  (t) => [index("invitations_org_email_idx").on(t.orgId, t.email)],
);

/** One row per throttled key (`pair:<email>|<address>`, `account:<email>`, `address:<address>`). */
export const signInThrottles = pgTable("sign_in_throttles", {
  key: text("key").primaryKey(),
  failures: integer("failures").notNull().default(0),
  lastFailureAt: ts("last_failure_at").notNull(),
  lockedUntil: ts("locked_until"),
});
