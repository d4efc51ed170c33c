import { and, desc, eq, isNull } from "drizzle-orm";
import { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { apiTokens, users } from "@/db/schema";
import { newId } from "@/lib/ids";
import { recordAudit } from "../../audit";
import { newBearerToken } from "../../crypto";
import { badRequest, conflict, forbidden, notFound } from "../../errors";
import type { Actor } from "../../actor";

export const createApiTokenInput = z.object({
  name: z.string().trim().min(1, { error: "Name the token after where it is used, like laptop-cli or ci" }).max(64, { error: "Name must be at most 64 characters" }),
  /** Days until the token stops working; left out, it works until revoked. */
  expiresInDays: z.number({ error: "Expiry must be a number of days" }).int({ error: "Expiry must be a whole number of days" }).min(1, { error: "Expiry must be at least 1 day" }).max(3650, { error: "Expiry must be at most 3650 days" }).optional(),
});

function userOf(actor: Actor): string {
  if (!actor.userId) throw badRequest("API tokens belong to a person; sign in as one to create or list tokens.");
  return actor.userId;
}

/** The caller's own live tokens in this organization; with `all`, an admin sees every member's. Never the token itself. */
export async function listApiTokens(db: Queryable, actor: Actor, opts: { all?: boolean } = {}) {
  const userId = userOf(actor);
  if (opts.all && actor.role !== "admin") throw forbidden(`Only admins can see every member's tokens; you are ${actor.role === "engineer" ? "an" : "a"} ${actor.role}. Your own tokens are listed without that option.`);
  const conds = [eq(apiTokens.orgId, actor.orgId), isNull(apiTokens.revokedAt)];
  if (!opts.all) conds.push(eq(apiTokens.userId, userId));
  const rows = await db
    .select({
      id: apiTokens.id,
      name: apiTokens.name,
      prefix: apiTokens.displayPrefix,
      userId: apiTokens.userId,
      owner: users.email,
      createdAt: apiTokens.createdAt,
      lastUsedAt: apiTokens.lastUsedAt,
      expiresAt: apiTokens.expiresAt,
    })
    .from(apiTokens)
    .innerJoin(users, eq(users.id, apiTokens.userId))
    .where(and(...conds))
    .orderBy(desc(apiTokens.createdAt));
  const now = Date.now();
  return rows.map((r) => ({ ...r, mine: r.userId === userId, expired: !!r.expiresAt && r.expiresAt.getTime() <= now }));
}

/** Creates a token for the caller in this organization. The token is in the answer once; only its hash is kept. */
export async function createApiToken(db: Database, actor: Actor, raw: z.input<typeof createApiTokenInput>) {
  const input = createApiTokenInput.parse(raw);
  const userId = userOf(actor);
  return db.transaction(async (tx) => {
    const [same] = await tx
      .select({ id: apiTokens.id })
      .from(apiTokens)
      .where(and(eq(apiTokens.orgId, actor.orgId), eq(apiTokens.userId, userId), eq(apiTokens.name, input.name), isNull(apiTokens.revokedAt)));
    if (same) throw conflict(`You already have a token named ${input.name}. No token was created. Choose another name, or revoke the old one first.`, "name");
    const { token, hash, displayPrefix } = newBearerToken("plt");
    const id = newId("apiToken");
    const expiresAt = input.expiresInDays ? new Date(Date.now() + input.expiresInDays * 86_400_000) : null;
    await tx.insert(apiTokens).values({ id, orgId: actor.orgId, userId, name: input.name, tokenHash: hash, displayPrefix, expiresAt });
    await recordAudit(tx, actor, {
      action: "api_token.create",
      targetId: id,
      targetName: input.name,
      summary: `Created API token ${input.name} (${displayPrefix}…)${expiresAt ? `, expiring ${expiresAt.toISOString().slice(0, 10)}` : ", without expiry"}`,
      changes: { name: input.name, prefix: displayPrefix, expiresAt },
    });
    return { id, name: input.name, prefix: displayPrefix, expiresAt, token };
  });
}

/** Revokes a token: the caller's own, or any in the organization for an admin. */
export async function revokeApiToken(db: Database, actor: Actor, id: string) {
  const userId = userOf(actor);
  return db.transaction(async (tx) => {
    const [row] = await tx
      .select({ id: apiTokens.id, name: apiTokens.name, userId: apiTokens.userId, prefix: apiTokens.displayPrefix, revokedAt: apiTokens.revokedAt, owner: users.email })
      .from(apiTokens)
      .innerJoin(users, eq(users.id, apiTokens.userId))
      .where(and(eq(apiTokens.id, id), eq(apiTokens.orgId, actor.orgId)));
    if (!row || (row.userId !== userId && actor.role !== "admin")) throw notFound(`API token ${id}`, "It may have been revoked already; reload the list.");
    if (row.revokedAt) return;
    await tx.update(apiTokens).set({ revokedAt: new Date() }).where(eq(apiTokens.id, id));
    await recordAudit(tx, actor, {
      action: "api_token.revoke",
      targetId: id,
      targetName: row.name,
      summary: `Revoked API token ${row.name} (${row.prefix}…)${row.userId === userId ? "" : ` of ${row.owner}`}`,
    });
  });
}
