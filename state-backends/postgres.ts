// The `postgres` kind, in OpenTofu's `pg` backend layout (internal/backend/remote-state/pg in
// OpenTofu 1.10: backend.go, client.go), so a state written here is where `tofu` with
// `backend "pg" { schema_name = ... }` reads it, and the reverse:
// - schema `terraform_remote_state` by default; table `states (id bigint default
//   nextval('public.global_states_id_seq') primary key, name text unique, data text)` and the unique
//   index `states_by_name`, created as OpenTofu creates them (the schema only when it is missing);
// - a state is the row whose `name` is the key, `data` the state JSON as text;
// - the lock is a session advisory lock on the row's id (`pg_try_advisory_lock(states.id)`), and a row
//   is created under OpenTofu's schema creation lock (-fnv32(schema name)).
// OpenTofu keeps the lock info in the locking process's memory only, so no other process can say who
// holds a lock or release it. Planton needs both (lockHolder, force-unlock), so the lock info is kept
// in a side table of the same schema, `planton_locks (name, info, pid)`, written in one transaction
// with a session advisory lock on a 64-bit hash of the name: the advisory lock is the lock (Postgres
// releases it when the holder's session ends, however it ends), the row only says who holds it; a row
// whose session no longer holds the advisory lock is stale and ignored.
import { createHash, randomUUID } from "node:crypto";
import postgres, { type ReservedSql, type Sql } from "postgres";
import { lockInfoOf, StateLockedError, StateWriteRefused } from "./rules";
import { STORE_VERSION, storedStateRead, whoAmI } from "./store-common";
import type { LockInfo, LockRequest, StateObjectInfo, StateStore, StoredState } from "./types";

/** OpenTofu's default `schema_name`. */
export const DEFAULT_SCHEMA = "terraform_remote_state";

export interface PostgresStoreOptions {
  /** A postgres:// URL; the store opens (and closes) its own pool. */
  url?: string;
  /** Or a pool the caller owns; the store reserves one connection of it for its locks. */
  sql?: Sql;
  /** OpenTofu's `schema_name`. */
  schema?: string;
}

/** A bigint advisory-lock key from bytes of a SHA-256: Planton's keys, far from OpenTofu's row ids. */
const keyOf = (...parts: string[]) => createHash("sha256").update(parts.join("\0")).digest().readBigInt64BE(0).toString();

/** OpenTofu's schema creation lock: FNV-1 32-bit of the schema name, negated (client.go, composeCreationLockID). */
export function creationLockKey(schema: string): string {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(schema, "utf8")) hash = (Math.imul(hash, 0x01000193) ^ byte) >>> 0;
  return String(-hash);
}

// An advisory lock on a bigint key shows in pg_locks as classid = high 32 bits, objid = low 32, objsubid = 1.
const heldAdvisory = (key: string) =>
  `p.locktype = 'advisory' and p.granted and p.objsubid = 1 and p.database = (select oid from pg_database where datname = current_database())
   and p.classid = ((${key} >> 32) & 4294967295)::oid and p.objid = (${key} & 4294967295)::oid`;

interface Holder {
  info: LockInfo;
  pid: number;
  /** Whether Planton holds it (an info row), or another program (OpenTofu) holds the row's advisory lock. */
  planton: boolean;
}

export class PostgresStateStore implements StateStore {
  readonly kind = "postgres" as const;
  readonly schema: string;
  private readonly sql: Sql;
  private readonly ownsPool: boolean;
  private readonly states: string;
  private readonly locks: string;
  private ready?: Promise<{ conn: ReservedSql; pid: number }>;
  /** Operations on the lock connection, one at a time (its transactions must not interleave). */
  private queue: Promise<unknown> = Promise.resolve();
  /** The locks this store holds, on its lock connection: the name's key and the row id's when the row exists. */
  private readonly held = new Map<string, { info: LockInfo; rowId?: string }>();

  constructor(options: PostgresStoreOptions) {
    this.schema = options.schema ?? DEFAULT_SCHEMA;
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(this.schema)) {
      throw new Error(`The Postgres state backend was not opened: schema name ${JSON.stringify(this.schema)} is not a plain identifier. Use letters, digits and underscores (OpenTofu's default is ${DEFAULT_SCHEMA}).`);
    }
    if (!options.sql && !options.url) throw new Error("The Postgres state backend was not opened: it needs a postgres:// URL or a pool.");
    this.ownsPool = !options.sql;
    this.sql = options.sql ?? postgres(options.url!, { max: 3, onnotice: () => {} });
    this.states = `"${this.schema}".states`;
    this.locks = `"${this.schema}".planton_locks`;
  }

  /** Creates OpenTofu's schema, sequence, table and index where missing (as OpenTofu's configure does), and reserves the lock connection. */
  private open() {
    this.ready ??= (async () => {
      await this.sql.begin(async (tx) => {
        // Several stores opening at once would race on CREATE ... IF NOT EXISTS: one at a time.
        await tx.unsafe(`select pg_advisory_xact_lock(${keyOf("planton-state-backends", "create", this.schema)})`);
        const [{ count }] = await tx.unsafe(`select count(*)::int as count from information_schema.schemata where schema_name = $1`, [this.schema]);
        // OpenTofu skips CREATE SCHEMA when the schema exists, for roles without that privilege.
        if (count < 1) await tx.unsafe(`create schema if not exists "${this.schema}"`);
        // CREATE ... IF NOT EXISTS still needs CREATE on the schema: a table someone made beforehand is only used.
        const [{ table }] = await tx.unsafe(`select to_regclass($1) is not null as table`, [this.states]);
        if (!table) {
          await tx.unsafe(`create sequence if not exists public.global_states_id_seq as bigint`);
          await tx.unsafe(`create table if not exists ${this.states} (id bigint not null default nextval('public.global_states_id_seq') primary key, name text unique, data text)`);
          await tx.unsafe(`create unique index if not exists states_by_name on ${this.states} (name)`);
        }
        const [{ locks }] = await tx.unsafe(`select to_regclass($1) is not null as locks`, [this.locks]);
        if (!locks) await tx.unsafe(`create table if not exists ${this.locks} (name text primary key, info jsonb not null, pid integer not null)`);
      });
      // Advisory locks belong to a session: every lock this store takes lives on this one connection.
      const conn = await this.sql.reserve();
      const [{ pid }] = await conn.unsafe(`select pg_backend_pid() as pid`);
      return { conn, pid: Number(pid) };
    })().catch((e) => {
      this.ready = undefined; // the next call tries again
      throw new Error(
        `The Postgres state backend was not opened: ${(e as Error).message}. Check the connection's address and credentials, and that its role may create schema ${this.schema} and its tables (or create them beforehand, as OpenTofu's pg backend documents).`,
      );
    });
    return this.ready;
  }

  /** Runs `fn` in a transaction on the lock connection, after the store's earlier lock-connection work. */
  private onLockConnection<T>(fn: (conn: ReservedSql, pid: number) => Promise<T>): Promise<T> {
    const run = this.queue.then(async () => {
      const { conn, pid } = await this.open();
      await conn.unsafe("begin");
      try {
        const result = await fn(conn, pid);
        await conn.unsafe("commit");
        return result;
      } catch (e) {
        await conn.unsafe("rollback").catch(() => {});
        throw e;
      }
    });
    this.queue = run.catch(() => {});
    return run;
  }

  private nameKey(name: string) {
    return keyOf("planton-state-lock", this.schema, name);
  }

  async read(key: string): Promise<StoredState | null> {
    await this.open();
    const rows = await this.sql.unsafe(`select data from ${this.states} where name = $1`, [key]);
    if (!rows.length || rows[0].data == null) return null;
    return storedStateRead(key, new TextEncoder().encode(rows[0].data as string));
  }

  async write(key: string, state: StoredState): Promise<void> {
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(state.bytes);
    } catch {
      text = "\0";
    }
    if (text.includes("\0")) {
      throw new StateWriteRefused(`Nothing was written to ${key}: OpenTofu's pg layout keeps state in a text column, and this state is not UTF-8 text without NUL characters. Write the state as OpenTofu's JSON.`);
    }
    const mine = this.held.get(key);
    const rowId = await this.onLockConnection(async (conn) => {
      if (!mine?.rowId) {
        // A new row is created under OpenTofu's schema creation lock, as `tofu` creates a workspace.
        const [{ got }] = await conn.unsafe(`select pg_try_advisory_xact_lock(${creationLockKey(this.schema)}) as got`);
        if (!got) throw new StateWriteRefused(`Nothing was written to ${key}: OpenTofu is creating a workspace in schema ${this.schema} (it holds the schema's creation lock). Run the job again in a moment.`);
      }
      const [{ id }] = await conn.unsafe(
        `insert into ${this.states} (name, data) values ($1, $2) on conflict (name) do update set data = excluded.data returning id::text as id`,
        [key, text],
      );
      if (mine && mine.rowId !== id) {
        if (mine.rowId) await conn.unsafe(`select pg_advisory_unlock(${mine.rowId}::bigint)`); // the row was deleted and made again
        // The row now exists: hold OpenTofu's lock on it too, so `tofu` sees the state locked.
        const [{ got }] = await conn.unsafe(`select pg_try_advisory_lock(${id}::bigint) as got`);
        if (!got) throw new StateWriteRefused(`Nothing was written to ${key}: another Postgres session holds OpenTofu's lock on it. Wait for that run to finish, then run the job again.`);
      }
      return id as string;
    });
    if (mine) mine.rowId = rowId;
  }

  /** Who holds the lock on `key`: a Planton store (its info row, while its session holds the advisory lock) or another session holding OpenTofu's row lock. */
  private async holder(key: string): Promise<Holder | null> {
    await this.open();
    const planton = await this.sql.unsafe(
      `select l.info, l.pid from ${this.locks} l where l.name = $1
         and exists (select 1 from pg_locks p where p.pid = l.pid and ${heldAdvisory(`${this.nameKey(key)}::bigint`)})`,
      [key],
    );
    if (planton.length) return { info: planton[0].info as LockInfo, pid: Number(planton[0].pid), planton: true };
    const foreign = await this.sql.unsafe(`select s.id::text as id, p.pid from ${this.states} s join pg_locks p on ${heldAdvisory("s.id")} where s.name = $1 limit 1`, [key]);
    if (!foreign.length) return null;
    const { id, pid } = foreign[0];
    // OpenTofu keeps its lock info in memory: say what Postgres knows, the session and the row.
    return {
      planton: false,
      pid: Number(pid),
      info: { ID: `pg-advisory-lock-${id}`, Path: String(id), Operation: "unknown", Who: `Postgres session ${pid} (OpenTofu's pg backend, which records no lock info)`, Version: "unknown", Created: "unknown", Info: "" },
    };
  }

  async lockHolder(key: string): Promise<LockInfo | null> {
    return (await this.holder(key))?.info ?? null;
  }

  async lock(key: string, request: LockRequest): Promise<LockInfo> {
    const own = this.held.get(key);
    if (own) throw new StateLockedError(own.info); // advisory locks stack within a session: refuse a second lock here
    const info = lockInfoOf(request, `${this.schema}.states/${key}`, whoAmI(), STORE_VERSION, randomUUID);
    const nameKey = this.nameKey(key);
    for (let attempt = 0; attempt < 3; attempt++) {
      const taken = await this.onLockConnection(async (conn) => {
        // The upsert row-locks the info row until commit, so a racing locker waits here, then reads this one's info.
        await conn.unsafe(`insert into ${this.locks} (name, info, pid) values ($1, $2::jsonb, pg_backend_pid()) on conflict (name) do update set info = excluded.info, pid = excluded.pid`, [key, info as never]); // postgres.js serializes the object for the jsonb parameter
        const [{ got }] = await conn.unsafe(`select pg_try_advisory_lock(${nameKey}::bigint) as got`);
        if (!got) throw new NotTaken();
        const rows = await conn.unsafe(`select id::text as id, pg_try_advisory_lock(id) as got from ${this.states} where name = $1`, [key]);
        if (rows.length && !rows[0].got) {
          await conn.unsafe(`select pg_advisory_unlock(${nameKey}::bigint)`);
          throw new NotTaken();
        }
        return { rowId: rows[0]?.id as string | undefined };
      }).catch((e) => {
        if (e instanceof NotTaken) return null;
        throw e;
      });
      if (taken) {
        this.held.set(key, { info, rowId: taken.rowId });
        return info;
      }
      const holder = await this.lockHolder(key);
      if (holder) throw new StateLockedError(holder);
      // Released between our attempt and the look: try again.
    }
    throw new Error(`The state ${key} was not locked: its lock kept changing hands. Run the job again.`);
  }

  /** Releases this store's own lock on `key`, on its lock connection. */
  private async release(key: string) {
    const mine = this.held.get(key);
    this.held.delete(key);
    await this.onLockConnection(async (conn) => {
      await conn.unsafe(`delete from ${this.locks} where name = $1 and pid = pg_backend_pid()`, [key]);
      await conn.unsafe(`select pg_advisory_unlock(${this.nameKey(key)}::bigint)`);
      if (mine?.rowId) await conn.unsafe(`select pg_advisory_unlock(${mine.rowId}::bigint)`);
    });
  }

  async unlock(key: string, id: string): Promise<void> {
    const holder = await this.holder(key);
    const mine = this.held.get(key);
    if (!holder) {
      this.held.delete(key); // our session lost it (a force-unlock ended it, or the connection dropped)
      throw new Error(`The lock on ${key} was not released: the state is not locked${mine ? " any more (its connection ended, or it was force-unlocked)" : ""}. Nothing to do.`);
    }
    if (holder.info.ID !== id) throw new StateLockedError(holder.info);
    if (!mine || mine.info.ID !== id) {
      throw new Error(
        `The lock on ${key} was not released: it is held by another connection to the database (Postgres session ${holder.pid}), and a Postgres advisory lock is released only by its own session. Release it from there, or force-unlock it from the component's state page.`,
      );
    }
    await this.release(key);
  }

  async forceUnlock(key: string): Promise<LockInfo | null> {
    const holder = await this.holder(key);
    const { pid: ownPid } = await this.open();
    if (!holder) {
      await this.sql.unsafe(`delete from ${this.locks} where name = $1`, [key]); // a stale info row, if any
      return null;
    }
    if (holder.pid === ownPid && this.held.has(key)) {
      await this.release(key);
      return holder.info;
    }
    // Only the holder's session can release an advisory lock, so force-unlock ends that session; every
    // other lock it held ends with it (a store is opened per job, so that is the job that lost its lock).
    try {
      await this.sql.unsafe(`select pg_terminate_backend($1)`, [holder.pid]);
    } catch (e) {
      throw new Error(
        `The lock on ${key} was not released: ending the holder's Postgres session ${holder.pid} was refused (${(e as Error).message}). Ask the database's admin to run: select pg_terminate_backend(${holder.pid});`,
      );
    }
    // The session exits asynchronously: wait, bounded, until its advisory locks are free.
    const waitKey = holder.planton ? `${this.nameKey(key)}::bigint` : `${holder.info.Path}::bigint`;
    try {
      await this.sql.begin(async (tx) => {
        await tx.unsafe(`set local lock_timeout = '15s'`);
        await tx.unsafe(`select pg_advisory_xact_lock(${waitKey})`);
      });
    } catch (e) {
      throw new Error(`The lock on ${key} was not released: the holder's Postgres session ${holder.pid} was told to end but still holds it (${(e as Error).message}). Try the force-unlock again.`);
    }
    await this.sql.unsafe(`delete from ${this.locks} where name = $1 and pid = $2`, [key, holder.pid]);
    return holder.info;
  }

  async list(prefix = ""): Promise<StateObjectInfo[]> {
    await this.open();
    const rows = await this.sql.unsafe(`select name, octet_length(data)::int as size from ${this.states} where data is not null and left(name, length($1)) = $1 order by name`, [prefix]);
    return rows.map((r) => ({ key: r.name as string, size: Number(r.size) }));
  }

  async delete(key: string): Promise<void> {
    // Deleting removes the lock too, whoever holds it (as the local kind removes its lock file).
    await this.forceUnlock(key);
    await this.sql.unsafe(`delete from ${this.states} where name = $1`, [key]);
  }

  async close(): Promise<void> {
    const ready = this.ready;
    this.ready = undefined;
    this.held.clear();
    if (ready) {
      const { conn } = await ready.catch(() => ({ conn: undefined }));
      // A pool the caller owns keeps the connection: it must go back holding none of this store's locks.
      if (!this.ownsPool) await this.queue.then(() => conn?.unsafe("select pg_advisory_unlock_all()")).catch(() => {});
      try {
        conn?.release();
      } catch {
        // the connection already ended (a force-unlock ended its session)
      }
    }
    if (this.ownsPool) await this.sql.end({ timeout: 5 });
  }
}

/** The lock was not taken on this attempt (someone holds it); the caller says who. */
class NotTaken extends Error {}
