// Replicas on one Postgres must share one server key (PLANTON_SECRET_KEY): a console whose key came
// from its own data folder could not read the secrets another wrote, nor accept its sessions and job
// credentials. At start, the newest sealed value in the database is opened with this console's key, and
// so is the database's key check (a value the first console to start sealed: consoles started at once on
// an empty database have nothing else to check against); when either does not open, the console stops and
// says which key to set, before it serves anything.
import { and, desc, eq, isNotNull } from "drizzle-orm";
import type { Database } from "@/db/client";
import { connections, secrets, serverKeyCheck } from "@/db/schema";
import { encryptSecret, openedWith, previousServerKeys, serverKey } from "./crypto";

/** What the key check seals. */
const KEY_CHECK = "planton server key check";

const opens = (sealed: string, key: Buffer, plain?: string) => {
  const opened = openedWith(sealed, key);
  return opened !== null && (plain === undefined || opened.toString("utf8") === plain);
};

/**
 * Why this console's server key (`key`) cannot be the database's, or null when it opens what is there. The first console
 * whose key passes writes the database's key check; every console after it, even one started at the same moment, must open it.
 */
export async function serverKeyMismatch(db: Database, key: Buffer = serverKey(), previous: Buffer[] = previousServerKeys()): Promise<string | null> {
  const [secret] = await db.select({ name: secrets.name, sealed: secrets.valueEncrypted }).from(secrets).orderBy(desc(secrets.createdAt), desc(secrets.id)).limit(1);
  const [connection] = secret
    ? []
    : await db.select({ name: connections.name, sealed: connections.credentialsEncrypted }).from(connections).where(isNotNull(connections.credentialsEncrypted)).orderBy(desc(connections.createdAt), desc(connections.id)).limit(1);
  const sealed = secret ? { what: `secret ${secret.name}`, value: secret.sealed } : connection?.sealed ? { what: `connection ${connection.name}'s credentials`, value: connection.sealed } : null;
  // During a rotation (PLANTON_SECRET_KEY_PREVIOUS) what a previous key sealed is still the database's.
  if (sealed && ![key, ...previous].some((k) => opens(sealed.value, k))) return refusal(sealed.what);
  // One row: the insert of the first console to get here wins; the others read its check.
  await db.insert(serverKeyCheck).values({ id: 1, sealed: encryptSecret(KEY_CHECK, key) }).onConflictDoNothing();
  const [check] = await db.select({ sealed: serverKeyCheck.sealed }).from(serverKeyCheck);
  if (check && opens(check.sealed, key, KEY_CHECK)) return null;
  // Sealed with a previous key: the check moves to the new key (only if no other console moved it meanwhile).
  if (check && previous.some((k) => opens(check.sealed, k, KEY_CHECK))) {
    await db.update(serverKeyCheck).set({ sealed: encryptSecret(KEY_CHECK, key) }).where(and(eq(serverKeyCheck.id, 1), eq(serverKeyCheck.sealed, check.sealed)));
    const [moved] = await db.select({ sealed: serverKeyCheck.sealed }).from(serverKeyCheck);
    if (moved && opens(moved.sealed, key, KEY_CHECK)) return null;
  }
  return refusal("the key check that the first console started on it wrote");
}

const refusal = (what: string) =>
  `The console did not start: its server key does not decrypt what is already in the database (${what}), so it could not read secrets, ` +
  "sessions or job credentials that another console wrote. Every console on one database needs the same key: set PLANTON_SECRET_KEY to the key " +
  "the other replicas use (or the one in the data folder, secret.key, of the console that wrote them), then start it again. " +
  "To change keys, keep the old one in PLANTON_SECRET_KEY_PREVIOUS until the console has re-sealed everything under the new one.";
