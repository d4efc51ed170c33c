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

/**
 * Every request to better-auth goes through here: the client address is put where better-auth reads
 * it, and a password sign-in is refused while locked, counted when it fails, cleared when it works.
 */
export async function handleAuthRequest(db: Queryable, req: Request, handler: (req: Request) => Promise<Response>, opts: { limits: boolean }): Promise<Response> {
  const address = requestClientAddress(req.headers);
  const headers = new Headers(req.headers);
  headers.delete(CLIENT_ADDRESS_HEADER);
  if (address) headers.set(CLIENT_ADDRESS_HEADER, address);
  const signIn = req.method === "POST" && new URL(req.url).pathname.endsWith("/sign-in/email");
  if (!signIn || !opts.limits) return handler(new Request(req, { headers }));
  const body = await req.text();
  let email = "";
  try {
    const parsed = JSON.parse(body) as { email?: unknown };
    if (typeof parsed.email === "string") email = parsed.email.trim().toLowerCase();
  } catch {
    // better-auth answers a malformed body itself.
  }
  const forward = new Request(req.url, { method: req.method, headers, body });
  if (!email) return handler(forward);
  const lock = await signInLock(db, email, address);
  if (lock) {
    const retryAfter = String(Math.max(1, Math.ceil((lock.until.getTime() - Date.now()) / 1000)));
    return Response.json({ code: "TOO_MANY_FAILED_SIGN_INS", message: lock.message }, { status: 429, headers: { "Retry-After": retryAfter } });
  }
  const res = await handler(forward);
  if (res.status === 401) await recordSignInFailure(db, email, address);
  else if (res.ok) await recordSignInSuccess(db, email, address);
  return res;
}
