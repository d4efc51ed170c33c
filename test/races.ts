// Race tests' signals: a transaction held open with its locks until the test commits it, and the wait until
// another session is seen waiting for a lock (pg_stat_activity) — so a test opens gates instead of sleeping.
import { sql } from "drizzle-orm";
import { rowsOf, type Database, type Tx } from "@/db/client";

/** Until `n` sessions on this database (whose query is like `query`) wait for a lock: the signal a race test waits on. */
export async function lockWaiters(db: Database, n: number, query = "%"): Promise<void> {
  for (;;) {
    const [{ waiting }] = rowsOf<{ waiting: number }>(
      await db.execute(sql`select count(*)::int as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like ${query}`),
    );
    if (waiting >= n) return;
    await new Promise((r) => setImmediate(r));
  }
}

/** A transaction that does `work`, then stays open with its locks until `commit()`; resolves once `work` is done: a race test's other side. */
export async function heldOpen(db: Database, work: (tx: Tx) => Promise<unknown>) {
  let commit!: () => void;
  let ready!: () => void;
  const committing = new Promise<void>((r) => (commit = r));
  const worked = new Promise<void>((r) => (ready = r));
  const done = db.transaction(async (tx) => {
    await work(tx);
    ready();
    await committing;
  });
  await worked;
  return { commit, done };
}
