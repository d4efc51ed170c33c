// Replicas on one Postgres must share one server key (PLANTON_SECRET_KEY): a console whose key came
// from its own data folder could not read the secrets another wrote, nor accept its sessions and job
// credentials. At start, the newest sealed value in the database is opened with this console's key;
// when it does not open, the console stops and says which key to set, before it serves anything.
import { desc, isNotNull } from "drizzle-orm";
import type { Database } from "@/db/client";
import { connections, secrets } from "@/db/schema";
import { decryptSecret } from "./crypto";

/** Why this console's server key cannot be the database's, or null when it opens what is there (or nothing is sealed yet). */
export async function serverKeyMismatch(db: Database): Promise<string | null> {
  const [secret] = await db.select({ name: secrets.name, sealed: secrets.valueEncrypted }).from(secrets).orderBy(desc(secrets.createdAt), desc(secrets.id)).limit(1);
  const [connection] = secret
    ? []
    : await db.select({ name: connections.name, sealed: connections.credentialsEncrypted }).from(connections).where(isNotNull(connections.credentialsEncrypted)).orderBy(desc(connections.createdAt), desc(connections.id)).limit(1);
  const sealed = secret ? { what: `secret ${secret.name}`, value: secret.sealed } : connection?.sealed ? { what: `connection ${connection.name}'s credentials`, value: connection.sealed } : null;
  if (!sealed) return null;
  try {
    decryptSecret(sealed.value);
    return null;
  } catch {
    return (
      `The console did not start: its server key does not decrypt what is already in the database (${sealed.what}), so it could not read secrets, ` +
      "sessions or job credentials that another console wrote. Every console on one database needs the same key: set PLANTON_SECRET_KEY to the key " +
      "the other replicas use (or the one in the data folder, secret.key, of the console that wrote them), then start it again."
    );
  }
}
