// Failed sign-ins slow down guessing without letting anyone lock someone else out:
// - per (account, client address): 5 failures, then a lock that doubles with each further failure;
//   this is the limit one person's typos meet, and it never touches the account from another address.
// - per account, from any address: a generous ceiling (50) with the same backoff, capped at 15
//   minutes, so guessing from many addresses is slowed but the owner is never locked out for long.
// - per client address, over every account: 30 failures, so one address cannot spray many accounts.
// An address the account has signed in from before (in the last 90 days) meets only the pair limit:
// the owner at their usual address is never locked out by anyone else's attempts.
// Only failures count (a refused attempt is not tried against the password and not counted); a
// success clears that pair. The client address is server/client-address.ts's, so X-Forwarded-For
// from an untrusted client cannot spread attempts over made-up addresses.
import { eq, inArray, sql } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { signInThrottles } from "@/db/schema";
import { requestClientAddress } from "../client-address";
import { utcMinute } from "../services/accounts/invitations";
import { auditSignIn, auditSignInFailure, auditSignOut, type SignedInSession } from "./sign-in-audit";

export const SIGN_IN_LIMITS = {
  pair: { after: 5 },
  account: { after: 50 },
  address: { after: 30 },
  firstLockSeconds: 60,
  maxLockSeconds: 15 * 60,
  /** Failures are forgotten once a key has had none for this long. */
  forgetAfterSeconds: 60 * 60,
  knownAddressDays: 90,
} as const;

type Scope = "pair" | "account" | "address";

const knownKey = (email: string, address: string | null) => (address ? `known:${email}|${address}` : null);
const keysOf = (email: string, address: string | null): Record<Scope, string | null> => ({
  pair: `pair:${email}|${address ?? "unknown"}`,
  account: `account:${email}`,
  // An unknown address (not served by scripts/serve.mjs) is nobody's in particular: no shared bucket for it.
  address: address ? `address:${address}` : null,
});

export interface SignInLock {
  scope: Scope;
  until: Date;
  message: string;
}

/** "HH:MM UTC", rounded up so that trying at that minute works. */
const tryAgainAt = (until: Date) => utcMinute(new Date(Math.ceil(until.getTime() / 60_000) * 60_000)).slice(11);

function lockMessage(scope: Scope, until: Date): string {
  return scope === "address"
    ? `Too many failed sign-ins from your network address. Try again after ${tryAgainAt(until)}`
    : `Too many failed sign-ins for this account. Try again after ${tryAgainAt(until)}`;
}

/** The lock that stops this attempt before its password is checked, if any. */
export async function signInLock(db: Queryable, email: string, address: string | null, now = new Date()): Promise<SignInLock | null> {
  const keys = keysOf(email, address);
  const known = knownKey(email, address);
  const wanted = [...Object.values(keys), known].filter((k): k is string => !!k);
  const rows = await db.select().from(signInThrottles).where(inArray(signInThrottles.key, wanted));
  const seen = rows.find((r) => r.key === known);
  const isKnown = !!seen && seen.lastFailureAt.getTime() > now.getTime() - SIGN_IN_LIMITS.knownAddressDays * 86_400_000;
  let lock: SignInLock | null = null;
  for (const scope of isKnown ? (["pair"] as const) : (["pair", "account", "address"] as const)) {
    const row = rows.find((r) => r.key === keys[scope]);
    if (row?.lockedUntil && row.lockedUntil > now && (!lock || row.lockedUntil > lock.until)) lock = { scope, until: row.lockedUntil, message: lockMessage(scope, row.lockedUntil) };
  }
  return lock;
}

/** Counts a failed sign-in against each key; a key past its threshold is locked for a doubling while. */
export async function recordSignInFailure(db: Queryable, email: string, address: string | null, now = new Date()): Promise<void> {
  const keys = keysOf(email, address);
  const forgetBefore = new Date(now.getTime() - SIGN_IN_LIMITS.forgetAfterSeconds * 1000);
  for (const scope of ["pair", "account", "address"] as const) {
    const key = keys[scope];
    if (!key) continue;
    // One statement, so concurrent failures all count.
    const [row] = await db
      .insert(signInThrottles)
      .values({ key, failures: 1, lastFailureAt: now })
      .onConflictDoUpdate({
        target: signInThrottles.key,
        set: {
          failures: sql`case when ${signInThrottles.lastFailureAt} < ${forgetBefore.toISOString()}::timestamptz then 1 else ${signInThrottles.failures} + 1 end`,
          lastFailureAt: now,
        },
      })
      .returning({ failures: signInThrottles.failures });
    const over = row.failures - SIGN_IN_LIMITS[scope].after;
    if (over >= 0) {
      const seconds = Math.min(SIGN_IN_LIMITS.firstLockSeconds * 2 ** Math.min(over, 20), SIGN_IN_LIMITS.maxLockSeconds);
      await db.update(signInThrottles).set({ lockedUntil: new Date(now.getTime() + seconds * 1000) }).where(eq(signInThrottles.key, key));
    }
  }
}

/** A successful sign-in clears its own (account, address) pair and marks the address as the account's; the wider counters run their course. */
export async function recordSignInSuccess(db: Queryable, email: string, address: string | null, now = new Date()): Promise<void> {
  await db.delete(signInThrottles).where(eq(signInThrottles.key, keysOf(email, address).pair!));
  const known = knownKey(email, address);
  // For a `known:` row, lastFailureAt holds the last successful sign-in.
  if (known) await db.insert(signInThrottles).values({ key: known, failures: 0, lastFailureAt: now }).onConflictDoUpdate({ target: signInThrottles.key, set: { lastFailureAt: now } });
}

/** The header better-auth reads for a session's address (advanced.ipAddress): set here, never taken from the client. */
export const CLIENT_ADDRESS_HEADER = "x-planton-client-address";

/** The signed-in session a request carries, if any (better-auth's, read before a sign-out ends it). */
export type SessionOfRequest = (headers: Headers) => Promise<SignedInSession | null>;

/**
 * Every request to better-auth goes through here: the client address is put where better-auth reads
 * it; a password sign-in is refused while locked, counted when it fails, cleared when it works; and
 * sign-ins (either way) and sign-outs are recorded in the audit history.
 */
export async function handleAuthRequest(
  db: Queryable,
  req: Request,
  handler: (req: Request) => Promise<Response>,
  opts: { limits: boolean; sessionOf?: SessionOfRequest },
): Promise<Response> {
  const address = requestClientAddress(req.headers);
  const headers = new Headers(req.headers);
  headers.delete(CLIENT_ADDRESS_HEADER);
  if (address) headers.set(CLIENT_ADDRESS_HEADER, address);
  const path = new URL(req.url).pathname;
  if (req.method === "POST" && path.endsWith("/sign-out")) {
    const session = (await opts.sessionOf?.(headers).catch(() => null)) ?? null;
    const res = await handler(new Request(req, { headers }));
    if (res.ok && session) await audited(auditSignOut(db, session, address));
    return res;
  }
  const signIn = req.method === "POST" && path.endsWith("/sign-in/email");
  if (!signIn) return handler(new Request(req, { headers }));
  const body = await req.text();
  let typed = "";
  try {
    const parsed = JSON.parse(body) as { email?: unknown };
    if (typeof parsed.email === "string") typed = parsed.email.trim();
  } catch {
    // better-auth answers a malformed body itself.
  }
  const email = typed.toLowerCase();
  const forward = new Request(req.url, { method: req.method, headers, body });
  if (!email) return handler(forward);
  const lock = opts.limits ? await signInLock(db, email, address) : null;
  if (lock) {
    await audited(auditSignInFailure(db, typed, address, "too many failed sign-ins (the sign-in limits); the password was not checked"));
    const retryAfter = String(Math.max(1, Math.ceil((lock.until.getTime() - Date.now()) / 1000)));
    return Response.json({ code: "TOO_MANY_FAILED_SIGN_INS", message: lock.message }, { status: 429, headers: { "Retry-After": retryAfter } });
  }
  const res = await handler(forward);
  if (res.status === 401) {
    if (opts.limits) await recordSignInFailure(db, email, address);
    await audited(auditSignInFailure(db, typed, address, "wrong email or password"));
  } else if (res.status >= 400 && res.status < 500) {
    // Refused before the password was checked (a malformed email, an unverified account): a failure, in better-auth's words.
    const answer = (await res.clone().json().catch(() => null)) as { message?: unknown } | null;
    const words = typeof answer?.message === "string" ? answer.message.slice(0, 200) : `refused (${res.status})`;
    await audited(auditSignInFailure(db, typed, address, words.charAt(0).toLowerCase() + words.slice(1)));
  } else if (res.ok) {
    if (opts.limits) await recordSignInSuccess(db, email, address);
    const answer = (await res.clone().json().catch(() => null)) as { token?: string; user?: { id?: string } } | null;
    if (answer?.user?.id) await audited(auditSignIn(db, answer.user.id, answer.token, address));
  }
  return res;
}

/** A sign-in's answer does not wait on, or fail with, its audit event: a failure to record it is logged. */
async function audited(write: Promise<void>): Promise<void> {
  await write.catch((err: unknown) => console.error(`[audit] a sign-in event was not recorded: ${(err as Error).message}`));
}
