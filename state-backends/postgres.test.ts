// The `postgres` kind on the harness's real Postgres: the conformance suite, then what only this kind
// has (OpenTofu's table layout, OpenTofu's advisory lock, a lock freed when its session dies).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { createTestDatabase, type TestDatabase } from "../test/database";
import { conformance } from "./test/conformance";
import { creationLockKey, DEFAULT_SCHEMA, PostgresStateStore } from "./postgres";
import { StateBackend, StateLockedError } from "./rules";

let t: TestDatabase;
let admin: postgres.Sql;
beforeAll(async () => {
  t = await createTestDatabase();
  admin = postgres(t.url!, { max: 2, onnotice: () => {} });
});
afterAll(async () => {
  await admin.end();
  await t.close();
});

const state = (serial: number, lineage: string) => new TextEncoder().encode(JSON.stringify({ version: 4, serial, lineage, resources: [] }));
const key = () => `pg/${randomUUID()}/terraform.tfstate`;

/** Sessions that hold an advisory lock on OpenTofu's row id for `name` (what `tofu` would find locked). */
const rowLockHolders = async (schema: string, name: string) =>
  (
    await admin.unsafe(
      `select p.pid from "${schema}".states s join pg_locks p on p.locktype = 'advisory' and p.granted and p.objsubid = 1
         and p.classid = ((s.id >> 32) & 4294967295)::oid and p.objid = (s.id & 4294967295)::oid where s.name = $1`,
      [name],
    )
  ).map((r) => Number(r.pid));

const advisoryLocksOf = async (pid: number) => Number((await admin`select count(*)::int as n from pg_locks where locktype = 'advisory' and pid = ${pid}`)[0].n);

conformance("postgres", async () => new PostgresStateStore({ url: t.url!, schema: "conformance" }));

describe("postgres state backend", () => {
  it("writes where OpenTofu's pg backend reads: <schema>.states, name = the key, data = the state JSON; and reads what OpenTofu wrote", async () => {
    const b = new StateBackend(new PostgresStateStore({ url: t.url! }));
    const k = key();
    const lock = await b.lock(k, { Operation: "OperationTypeApply" });
    await b.write(k, state(3, "L"), lock.ID);
    await b.unlock(k, lock.ID);
    const columns = await admin`select column_name, data_type from information_schema.columns where table_schema = ${DEFAULT_SCHEMA} and table_name = 'states' order by ordinal_position`;
    expect(columns.map((c) => [c.column_name, c.data_type])).toEqual([["id", "bigint"], ["name", "text"], ["data", "text"]]);
    const [row] = await admin.unsafe(`select data, pg_typeof(data)::text as type from ${DEFAULT_SCHEMA}.states where name = $1`, [k]);
    expect(row).toEqual({ data: Buffer.from(state(3, "L")).toString("utf8"), type: "text" });
    // A row as `tofu` writes it (INSERT ... ON CONFLICT (name) DO UPDATE SET data) is read back byte for byte.
    const tofuKey = key();
    const tofuState = JSON.stringify({ version: 4, terraform_version: "1.10.0", serial: 7, lineage: "tofu-lineage", outputs: {}, resources: [] }, null, 2);
    await admin.unsafe(`insert into ${DEFAULT_SCHEMA}.states (name, data) values ($1, $2) on conflict (name) do update set data = $2`, [tofuKey, tofuState]);
    const read = await b.read(tofuKey);
    expect([read?.serial, read?.lineage, read && Buffer.from(read.bytes).toString("utf8")]).toEqual([7, "tofu-lineage", tofuState]);
    expect((await b.list(tofuKey)).map((o) => [o.key, o.size])).toEqual([[tofuKey, Buffer.byteLength(tofuState)]]);
    await b.store.close?.();
  });

  it("holds OpenTofu's advisory lock on the state row, and refuses a lock `tofu` holds, naming its session", async () => {
    const schema = "tofu_interop";
    const store = new PostgresStateStore({ url: t.url!, schema });
    const b = new StateBackend(store);
    const k = key();
    const lock = await b.lock(k, { Operation: "OperationTypeApply", Who: "alice@ci" });
    await b.write(k, state(1, "L"), lock.ID);
    // What `tofu` runs to lock an existing workspace: it does not get it while Planton holds it.
    const tofu = await admin.reserve();
    const [tryWhileHeld] = await tofu.unsafe(`select pg_try_advisory_lock(id) as got from "${schema}".states where name = $1`, [k]);
    expect(tryWhileHeld.got).toBe(false);
    await b.unlock(k, lock.ID);
    expect(await rowLockHolders(schema, k)).toEqual([]);
    // Now `tofu` holds it: Planton is refused, and the holder names the session (OpenTofu records no lock info).
    const [took] = await tofu.unsafe(`select pg_try_advisory_lock(id) as got, pg_backend_pid() as pid from "${schema}".states where name = $1`, [k]);
    expect(took.got).toBe(true);
    const refused = await b.lock(k, { Operation: "OperationTypeApply" }).catch((e) => e);
    expect(refused).toBeInstanceOf(StateLockedError);
    expect(refused.holder.Who).toBe(`Postgres session ${took.pid} (OpenTofu's pg backend, which records no lock info)`);
    expect(refused.message).toMatch(/^Error acquiring the state lock/);
    expect(await store.lockHolder(k)).toEqual(refused.holder);
    await tofu.unsafe(`select pg_advisory_unlock_all()`);
    tofu.release();
    const again = await b.lock(k, { Operation: "OperationTypeApply" });
    await b.unlock(k, again.ID);
    // Creating a row waits for nobody but respects OpenTofu's schema creation lock (-fnv32 of the schema name).
    expect(creationLockKey("terraform_remote_state")).toMatch(/^-\d+$/);
    const creator = await admin.reserve();
    await creator.unsafe(`select pg_advisory_lock(${creationLockKey(schema)})`);
    const fresh = key();
    const freshLock = await b.lock(fresh, { Operation: "OperationTypeApply" });
    await expect(b.write(fresh, state(1, "F"), freshLock.ID)).rejects.toThrow(/^Nothing was written to .*: OpenTofu is creating a workspace in schema tofu_interop/);
    await creator.unsafe(`select pg_advisory_unlock_all()`);
    creator.release();
    await b.write(fresh, state(1, "F"), freshLock.ID);
    expect(await rowLockHolders(schema, fresh)).toHaveLength(1); // the new row is locked for `tofu` from its creation
    await b.unlock(fresh, freshLock.ID);
    await store.close();
  });

  it("a second connection sees the lock and its holder; a lock whose connection dies is released by Postgres, and lockHolder then answers null", async () => {
    const first = new PostgresStateStore({ url: t.url!, schema: "sessions" });
    const second = new PostgresStateStore({ url: t.url!, schema: "sessions" });
    const k = key();
    const held = await new StateBackend(first).lock(k, { Operation: "OperationTypeApply", Who: "first@runner" });
    expect(await second.lockHolder(k)).toEqual(held);
    const [{ pid }] = await admin`select pid from "sessions".planton_locks where name = ${k}`;
    expect(await advisoryLocksOf(pid)).toBe(1);
    // The holder goes away without unlocking: its session ends, and Postgres drops its advisory locks.
    await first.close();
    await expect.poll(() => advisoryLocksOf(pid)).toBe(0);
    // Its info row is still there, but no session holds the lock it describes: lockHolder says nobody holds it.
    expect((await admin`select info from "sessions".planton_locks where name = ${k}`)[0].info).toEqual(held);
    expect(await second.lockHolder(k)).toBeNull();
    const mine = await new StateBackend(second).lock(k, { Operation: "OperationTypeApply" });
    expect(await second.lockHolder(k)).toEqual(mine);
    // The same when the session is killed rather than closed.
    const [{ pid: secondPid }] = await admin`select pid from "sessions".planton_locks where name = ${k}`;
    await admin`select pg_terminate_backend(${secondPid})`;
    await expect.poll(() => second.lockHolder(k)).toBeNull();
    await expect(second.unlock(k, mine.ID)).rejects.toThrow(/^The lock on .* was not released: the state is not locked any more/);
    await second.close();
  });

  it("on a pool the caller owns, close releases the store's locks and leaves the pool open", async () => {
    const pool = postgres(t.url!, { max: 2, onnotice: () => {} });
    const store = new PostgresStateStore({ sql: pool, schema: "shared_pool" });
    const k = key();
    await store.lock(k, { Operation: "OperationTypeApply" });
    await store.close();
    const other = new PostgresStateStore({ url: t.url!, schema: "shared_pool" });
    expect(await other.lockHolder(k)).toBeNull();
    await other.unlock(k, (await other.lock(k, { Operation: "OperationTypeApply" })).ID);
    expect((await pool`select 1 as one`)[0].one).toBe(1);
    await other.close();
    await pool.end();
  });

  it("says what failed when the database cannot be opened, and tries again on the next call", async () => {
    const url = new URL(t.url!);
    url.pathname = "/no_such_database";
    const store = new PostgresStateStore({ url: url.toString() });
    for (let i = 0; i < 2; i++) {
      await expect(store.read("x")).rejects.toThrow(/^The Postgres state backend was not opened: database "no_such_database" does not exist\. Check the connection's address and credentials/);
    }
    await store.close();
  });

  it("refuses a schema name that is not a plain identifier, saying what to use", () => {
    expect(() => new PostgresStateStore({ url: t.url!, schema: 'x"; drop table y; --' })).toThrow(
      /^The Postgres state backend was not opened: schema name .* is not a plain identifier\. Use letters, digits and underscores \(OpenTofu's default is terraform_remote_state\)\.$/,
    );
  });
});
