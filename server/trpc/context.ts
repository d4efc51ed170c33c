import { and, eq, gt, isNull, or } from "drizzle-orm";
import type { Database } from "@/db/client";
import { apiTokens, users } from "@/db/schema";
import type { Auth } from "../auth/auth";
import { requestClientAddress } from "../client-address";
import { sha256Hex } from "../crypto";
import { CREDENTIAL_PREFIX } from "../services/runners/credentials";
import { RUNNER_TOKEN_PREFIX } from "../services/runners/register-runner";

export interface Caller {
  userId: string;
  email: string;
  name: string;
  /** Set when the caller signed in with an API token: the token works in that organization only. */
  tokenOrgId?: string;
  tokenName?: string;
}

export interface Context {
  db: Database;
  caller: Caller | null;
  clientAddress: string | null;
  /** Why the request's bearer token was not taken, when it is a runner's (said instead of NOT_SIGNED_IN). */
  bearerRefused?: string;
}

export const NOT_SIGNED_IN = "You are not signed in. Sign in, or send an API token as Authorization: Bearer <token>.";
export const TOKEN_REFUSED =
  "The API token was refused: it is unknown, revoked or expired. Nothing was done. Create a new one in Settings → API Tokens, then run planton auth login --token <token>.";

/** A runner's token or a job credential works only on the runner API: sent to the console's API, the refusal says what it is, rather than calling it unknown. */
export function runnerBearerRefusal(headers: Headers): string | undefined {
  const bearer = headers.get("authorization")?.match(/^Bearer\s+(\S+)$/i)?.[1];
  const what = bearer?.startsWith(CREDENTIAL_PREFIX)
    ? "a job credential (jcr_…), which works only on the runner API (/api/runner/v1) for its own job"
    : bearer?.startsWith(RUNNER_TOKEN_PREFIX)
      ? "a runner token (rnr_…), which works only on the runner API (/api/runner/v1)"
      : null;
  return what ? `Nothing was done: the bearer token is ${what}, not on the console's API. Sign in, or send an API token (Settings → API Tokens).` : undefined;
}

export function clientAddressOf(headers: Headers): string | null {
  return requestClientAddress(headers);
}

/** The caller, from an API token (`Authorization: Bearer plt_…`) or the browser's session cookie. */
export async function resolveCaller(db: Database, auth: Auth, headers: Headers): Promise<Caller | null> {
  const bearer = headers.get("authorization")?.match(/^Bearer\s+(plt_\S+)$/i)?.[1];
  if (bearer) return callerFromApiToken(db, bearer);
  const session = await auth.api.getSession({ headers });
  if (!session) return null;
  return { userId: session.user.id, email: session.user.email, name: session.user.name };
}

/**
 * How fresh a token's "last used" is kept: a call writes it only when it is older than this, so a CLI
 * following a job (or a script's burst of calls) does not write the token's row on every request. The
 * API tokens page shows it as relative time ("2 minutes ago").
 */
export const TOKEN_LAST_USED_PRECISION_MS = 60_000;

export async function callerFromApiToken(db: Database, token: string): Promise<Caller | null> {
  const [row] = await db
    .select({ id: apiTokens.id, orgId: apiTokens.orgId, name: apiTokens.name, lastUsedAt: apiTokens.lastUsedAt, userId: users.id, email: users.email, userName: users.name })
    .from(apiTokens)
    .innerJoin(users, eq(users.id, apiTokens.userId))
    .where(
      and(
        eq(apiTokens.tokenHash, sha256Hex(token)),
        isNull(apiTokens.revokedAt),
        or(isNull(apiTokens.expiresAt), gt(apiTokens.expiresAt, new Date())),
      ),
    );
  if (!row) return null;
  const now = new Date();
  if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() >= TOKEN_LAST_USED_PRECISION_MS) await db.update(apiTokens).set({ lastUsedAt: now }).where(eq(apiTokens.id, row.id));
  return { userId: row.userId, email: row.email, name: row.userName, tokenOrgId: row.orgId, tokenName: row.name };
}
