// Changing the server key (PLANTON_SECRET_KEY) without losing what the old one sealed: the old key stays in
// PLANTON_SECRET_KEY_PREVIOUS, so everything it sealed still opens (crypto.ts decryptBytes), and at start the console
// re-seals each such value under the new key — a page at a time, each row only if it is unchanged since it was read,
// so replicas doing it at once, or a secret edited meanwhile, lose nothing. Once it reports nothing left under a
// previous key, PLANTON_SECRET_KEY_PREVIOUS can be removed.
import { and, asc, eq, gt, isNotNull, sql } from "drizzle-orm";
import { rowsOf, type Database } from "@/db/client";
import { artifacts, connections, secrets } from "@/db/schema";
import { encryptBytes, openedWith, previousServerKeys, serverKey } from "./crypto";

/** One kind of sealed value: how to read a page of them after a key, and to re-seal one if it is unchanged. */
interface SealedColumn {
  what: string;
  page: (db: Database, after: string | null, limit: number) => Promise<{ key: string; sealed: string }[]>;
  reseal: (db: Database, key: string, was: string, sealed: string) => Promise<boolean>;
}

const SEALED: SealedColumn[] = [
  {
    what: "secrets",
    page: (db, after, limit) =>
      db.select({ key: secrets.id, sealed: secrets.valueEncrypted }).from(secrets).where(after === null ? undefined : gt(secrets.id, after)).orderBy(asc(secrets.id)).limit(limit),
    reseal: async (db, key, was, sealed) =>
      (await db.update(secrets).set({ valueEncrypted: sealed }).where(and(eq(secrets.id, key), eq(secrets.valueEncrypted, was))).returning({ id: secrets.id })).length > 0,
  },
  {
    what: "connection credentials",
    page: async (db, after, limit) =>
      (
        await db
          .select({ key: connections.id, sealed: connections.credentialsEncrypted })
          .from(connections)
          .where(and(isNotNull(connections.credentialsEncrypted), after === null ? undefined : gt(connections.id, after)))
          .orderBy(asc(connections.id))
          .limit(limit)
      ).map((r) => ({ key: r.key, sealed: r.sealed! })),
    reseal: async (db, key, was, sealed) =>
      (await db.update(connections).set({ credentialsEncrypted: sealed }).where(and(eq(connections.id, key), eq(connections.credentialsEncrypted, was))).returning({ id: connections.id })).length > 0,
  },
  {
    what: "encrypted artifacts (plans)",
    page: (db, after, limit) =>
      db
        .select({ key: artifacts.id, sealed: artifacts.content })
        .from(artifacts)
        .where(and(eq(artifacts.encrypted, true), after === null ? undefined : gt(artifacts.id, after)))
        .orderBy(asc(artifacts.id))
        .limit(limit),
    reseal: async (db, key, was, sealed) =>
      (await db.update(artifacts).set({ content: sealed }).where(and(eq(artifacts.id, key), eq(artifacts.content, was))).returning({ id: artifacts.id })).length > 0,
  },
  {
    // Keyed by attempt, step and seq (its primary key), as one text.
    what: "state journal entries",
    page: async (db, after, limit) =>
      rowsOf<{ key: string; sealed: string }>(
        await db.execute(sql`
          select attempt_id || ' ' || step || ' ' || lpad(seq::text, 10, '0') as key, change as sealed from state_journal
          ${after === null ? sql`` : sql`where attempt_id || ' ' || step || ' ' || lpad(seq::text, 10, '0') > ${after}`}
          order by 1 limit ${limit}`),
      ),
    reseal: async (db, key, was, sealed) =>
      rowsOf(
        await db.execute(sql`
          update state_journal set change = ${sealed}
          where attempt_id || ' ' || step || ' ' || lpad(seq::text, 10, '0') = ${key} and change = ${was} returning 1`),
      ).length > 0,
  },
];

const PAGE = 200;

export interface ResealReport {
  /** Re-sealed under the server key, by kind. */
  resealed: Record<string, number>;
  /** Opened by no configured key, by kind (left as they are). */
  unreadable: Record<string, number>;
  /** Changed by someone else between the read and the re-seal (left to what they wrote; a later start re-seals it if needed). */
  changedMeanwhile: number;
}

/**
 * Re-seals under `key` every value that only a `previous` key opens. Does nothing (answers null) when no previous
 * key is configured: without one, every value already opens with the server key, or with none.
 */
export async function resealUnderServerKey(db: Database, key: Buffer = serverKey(), previous: Buffer[] = previousServerKeys()): Promise<ResealReport | null> {
  if (!previous.length) return null;
  const report: ResealReport = { resealed: {}, unreadable: {}, changedMeanwhile: 0 };
  for (const column of SEALED) {
    let after: string | null = null;
    for (;;) {
      const rows = await column.page(db, after, PAGE);
      if (!rows.length) break;
      after = rows.at(-1)!.key;
      for (const row of rows) {
        if (openedWith(row.sealed, key)) continue;
        let plain: Buffer | null = null;
        for (const k of previous) if ((plain = openedWith(row.sealed, k))) break;
        if (!plain) {
          report.unreadable[column.what] = (report.unreadable[column.what] ?? 0) + 1;
          continue;
        }
        if (await column.reseal(db, row.key, row.sealed, encryptBytes(plain, key))) report.resealed[column.what] = (report.resealed[column.what] ?? 0) + 1;
        else report.changedMeanwhile += 1;
      }
    }
  }
  return report;
}

/** The report in a sentence for the console's log. */
export function resealSentence(r: ResealReport): string {
  const list = (counts: Record<string, number>) => Object.entries(counts).map(([what, n]) => `${n} ${what}`).join(", ");
  const resealed = list(r.resealed);
  const unreadable = list(r.unreadable);
  return (
    `[key-rotation] ${resealed ? `re-sealed under the server key: ${resealed}` : "nothing was sealed under a previous key"}` +
    (r.changedMeanwhile ? `; ${r.changedMeanwhile} changed by someone else meanwhile (left as they wrote it; the next start re-seals what still needs it)` : "") +
    (unreadable
      ? `; opened by no configured key, left as they are: ${unreadable} — keep PLANTON_SECRET_KEY_PREVIOUS and add the key that sealed them.`
      : r.changedMeanwhile
        ? "."
        : ". Nothing is left under a previous key: PLANTON_SECRET_KEY_PREVIOUS can be removed.")
  );
}
