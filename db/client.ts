import path from "node:path";
import fs from "node:fs";
import os from "node:os";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import type { Sql } from "postgres";
import { MIGRATION_LOCK } from "./advisory-locks";
import * as schema from "./schema";

export type Schema = typeof schema;
/** One database type for both drivers. */
export type Database = PgDatabase<PgQueryResultHKT, Schema>;
export type Tx = Parameters<Parameters<Database["transaction"]>[0]>[0];
/** Anything queries can run on: the database or an open transaction. */
export type Queryable = Database | Tx;

export interface DatabaseHandle {
  db: Database;
  driver: "postgres" | "pglite";
  /** Subscribe to a NOTIFY channel. `onListen` runs after each (re)connect, where to re-scan. */
  listen(channel: string, onNotify: (payload: string) => void, onListen?: () => void): Promise<() => Promise<void>>;
  notify(channel: string, payload: string): Promise<void>;
  /** Connections busy with a query or transaction (not counting the one that asks), and the most the pool opens. */
  poolUse(): Promise<{ inUse: number; max: number }>;
  /** A lock that at most one process holds at a time, for as long as its own connection lives (see SessionLock); `key` is a bigint advisory-lock key, 0 ≤ key < 2^53. */
  sessionLock(key: number): SessionLock;
  /** PGlite only: its whole data folder as a tar, for `loadDataDir`. */
  dumpDataDir?: () => Promise<Blob>;
  close(): Promise<void>;
}

/**
 * A Postgres session-level advisory lock on a connection of its own: the process holding it keeps it
 * until it releases it or its connection ends (a killed process's connection ends, so the lock frees).
 * PGlite is one process's own database: its lock is always held.
 */
export interface SessionLock {
  /** Takes the lock when it is free; true while this process holds it. Asked on the lock's own connection, so a connection that broke (and reconnected) answers for what it holds now; throws when the database does not answer. */
  hold(): Promise<boolean>;
  /**
   * Whether this process has held the lock without a break since hold() last took it: false once its connection
   * broke (and another process may have taken the lock meanwhile), even when a reconnect could take it again.
   */
  held(): Promise<boolean>;
  /** Lets go of the lock and closes its connection. */
  release(): Promise<void>;
}

export interface OpenOptions {
  /** A postgres:// URL; when absent the embedded PGlite database is used. */
  url?: string;
  /** PGlite's folder; "memory://" for a throwaway in-memory database. */
  dataDir?: string;
  /** A PGlite data folder dumped by `dumpDataDir` to start from (the tests' migrated template). */
  loadDataDir?: Blob;
  /** Connections kept open to `url` (postgres.js's default, 10, when absent). */
  pool?: number;
  migrate?: boolean;
}

export const MIGRATIONS_FOLDER = path.join(/*turbopackIgnore: true*/ process.cwd(), "db", "migrations");

// Services are handed the Database alone (every context carries it); what needs a connection of its own
// (a session lock) finds the handle that database was opened with.
const handles = new WeakMap<Database, DatabaseHandle>();

/** The handle `db` was opened with by openDatabase. */
export function handleOf(db: Database): DatabaseHandle {
  const handle = handles.get(db);
  if (!handle) throw new Error("this database was not opened with openDatabase, so it has no handle");
  return handle;
}

export async function openDatabase(opts: OpenOptions = {}): Promise<DatabaseHandle> {
  if (!opts.url && !opts.dataDir) throw new Error("openDatabase needs a postgres:// url or PGlite's dataDir");
  const handle = opts.url ? await openPostgres(opts.url, opts.pool) : await openPglite(opts.dataDir!, opts.loadDataDir);
  handles.set(handle.db, handle);
  if (opts.migrate !== false) await migrateHandle(handle, opts.url);
  return handle;
}

/**
 * The client drizzle is given: a query with parameters is a prepared statement of its connection. drizzle
 * sends every query it did not name as unprepared, and postgres.js then asks the server to describe an
 * unprepared query's parameters before it binds them — two round trips for each query with a parameter
 * (Parse/Describe, then Bind/Execute), and the text parsed each time. Prepared, a statement is described
 * once per connection and then runs in one round trip. Queries without parameters go as before (the simple
 * protocol, which may carry several statements). Transactions and savepoints hand drizzle clients wrapped
 * the same way.
 */
function preparingParameterised(sql: Sql): Sql {
  return new Proxy(sql, {
    get(target, prop, receiver) {
      if (prop === "unsafe") {
        return (query: string, params?: unknown[], options?: { prepare?: boolean }) =>
          target.unsafe(query, params as never, params?.length ? { ...options, prepare: true } : options);
      }
      if (prop === "begin" || prop === "savepoint") {
        return (...args: unknown[]) => {
          const fn = args.pop() as (tx: Sql) => unknown;
          const method = Reflect.get(target, prop) as (...a: unknown[]) => unknown;
          return method.call(target, ...args, (tx: Sql) => fn(preparingParameterised(tx)));
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });
}

async function openPostgres(url: string, pool?: number): Promise<DatabaseHandle> {
  const { default: postgres } = await import("postgres");
  const { drizzle } = await import("drizzle-orm/postgres-js");
  // Named per process, so the pool's use can be read from pg_stat_activity (postgres.js does not expose it).
  const applicationName = `planton:${process.pid}:${os.hostname()}`.slice(0, 63);
  // Custom plans as before (each execution planned for its parameters); preparing saves the parse and a round trip.
  const sql = postgres(url, { ...(pool ? { max: pool } : {}), onnotice: () => {}, connection: { application_name: applicationName, plan_cache_mode: "force_custom_plan" } });
  const db = drizzle(preparingParameterised(sql), { schema }) as unknown as Database;
  return {
    db,
    driver: "postgres",
    async listen(channel, onNotify, onListen) {
      const sub = await sql.listen(channel, (payload) => onNotify(payload), onListen);
      return async () => sub.unlisten();
    },
    async notify(channel, payload) {
      await sql.notify(channel, payload);
    },
    async poolUse() {
      const [row] = await sql<{ n: number }[]>`select count(*)::int as n from pg_stat_activity where application_name = ${applicationName} and state <> 'idle' and pid <> pg_backend_pid()`;
      return { inUse: row?.n ?? 0, max: pool ?? 10 };
    },
    sessionLock(key) {
      // One connection, never recycled by age: recycling it would drop the lock.
      let conn: ReturnType<typeof postgres> | null = null;
      // The lock connection's backend when hold() last answered true: a reconnect is another backend.
      let holder: number | null = null;
      // A bigint key shows in pg_locks as classid = its high 32 bits, objid = its low 32, objsubid = 1.
      const ours = () =>
        conn!`exists (select 1 from pg_locks where locktype = 'advisory' and classid = ${Math.floor(key / 2 ** 32)} and objid = ${key % 2 ** 32} and objsubid = 1 and pid = pg_backend_pid() and granted)`;
      return {
        async hold() {
          conn ??= postgres(url, { max: 1, max_lifetime: 0, onnotice: () => {}, connection: { application_name: `${applicationName.slice(0, 55)}:lock` } });
          // Re-entrant in Postgres: take it only when this session does not hold it already, so one release frees it.
          const [row] = await conn<{ held: boolean; pid: number }[]>`select case when ${ours()} then true else pg_try_advisory_lock(${key}::bigint) end as held, pg_backend_pid() as pid`;
          holder = row?.held ? row.pid : null;
          return !!row?.held;
        },
        async held() {
          if (!conn || holder === null) return false;
          // A session's advisory lock lasts as long as the session (only release() lets go of it, and it closes the
          // connection): the same backend still answering means the lock was held throughout. No pg_locks read, which
          // takes every lock partition's lock and copies the cluster's whole lock table, on each check.
          const [row] = await conn<{ pid: number }[]>`select pg_backend_pid() as pid`;
          return row?.pid === holder;
        },
        async release() {
          const c = conn;
          conn = null;
          holder = null;
          await c?.end({ timeout: 5 });
        },
      };
    },
    close: () => sql.end({ timeout: 5 }),
  };
}

async function openPglite(dataDir: string, loadDataDir?: Blob): Promise<DatabaseHandle> {
  const { PGlite } = await import("@electric-sql/pglite");
  const { drizzle } = await import("drizzle-orm/pglite");
  if (!dataDir.startsWith("memory://")) fs.mkdirSync(dataDir, { recursive: true });
  const client = await PGlite.create(dataDir, loadDataDir ? { loadDataDir } : {});
  const db = drizzle(client, { schema }) as unknown as Database;
  return {
    db,
    driver: "pglite",
    async listen(channel, onNotify, onListen) {
      const unsub = await client.listen(channel, onNotify);
      onListen?.();
      return unsub;
    },
    async notify(channel, payload) {
      await client.query("select pg_notify($1, $2)", [channel, payload]);
    },
    // One exclusive connection, which the asking query holds.
    poolUse: async () => ({ inUse: 1, max: 1 }),
    // One process owns the embedded database: it always holds every lock.
    sessionLock: () => ({ hold: async () => true, held: async () => true, release: async () => {} }),
    dumpDataDir: () => client.dumpDataDir("none"),
    close: () => client.close(),
  };
}

async function migrateHandle(handle: DatabaseHandle, url?: string): Promise<void> {
  if (handle.driver === "pglite") {
    const { migrate } = await import("drizzle-orm/pglite/migrator");
    await migrate(handle.db as never, { migrationsFolder: MIGRATIONS_FOLDER });
    return;
  }
  // One connection, holding an advisory lock, so replicas starting together migrate once.
  const { default: postgres } = await import("postgres");
  const { drizzle } = await import("drizzle-orm/postgres-js");
  const { migrate } = await import("drizzle-orm/postgres-js/migrator");
  const sql = postgres(url!, { max: 1, onnotice: () => {} });
  try {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK})`;
    await migrate(drizzle(sql), { migrationsFolder: MIGRATIONS_FOLDER });
    await sql`select pg_advisory_unlock(${MIGRATION_LOCK})`;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** The rows of a raw `db.execute(sql…)`, whichever driver answered (postgres.js gives an array, PGlite `{ rows }`). */
export function rowsOf<T>(result: unknown): T[] {
  return Array.isArray(result) ? (result as T[]) : ((result as { rows?: T[] }).rows ?? []);
}
