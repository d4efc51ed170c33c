// The move off Planton-managed storage, on real destinations: a local directory on real files, S3 on
// s3rver and Azure Blob on azurite (both started here from npm). "Killed" is the runner's test-only
// hook (MoveHooks.afterStep throwing MoveStopped): the run stops right after a step committed, with
// everything it committed, as a process that died there would leave it; resumeMove then runs it on.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { and, eq, sql } from "drizzle-orm";
import { GetObjectCommand, ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import { BlobServiceClient, type ContainerClient } from "@azure/storage-blob";
import { createTestDatabase, testDriver, type TestDatabase } from "../../../test/database";
import { heldOpen, lockWaiters } from "../../../test/races";
import { claim, orgWithComponent, testRunner } from "../../../test/job-helpers";
import { auditOf } from "../../../test/settings";
import { startAzurite, startS3rver, type AzuriteServer, type S3Server } from "../../../test/object-stores";
import { openDatabase, rowsOf, type DatabaseHandle } from "@/db/client";
import { connections, infraComponents, infraJobs, stateBackends, stateMoveItems, stateObjects } from "@/db/schema";
import { newId } from "@/lib/ids";
import { defaultStateKey } from "@/lib/state-backend-kinds";
import { storedStateOf } from "@/state-backends/rules";
import { encryptSecret } from "../../crypto";
import { createJob } from "../jobs/create-job";
import { getJob } from "../jobs/queries";
import { startScheduler } from "../jobs/scheduler";
import { lockState, unlockState } from "../runners/state";
import { MOVE_ITEMS_SHOWN, MOVE_STEPS_IN_FLIGHT } from "@/lib/state-moves";
import { currentMove, dryRun, getMove, migrateBackend, MoveStopped, moveLockId, moveRun, moveRunLockKey, resumeMove, resumeRunningMoves, retryMove, rollbackItem, startMove, watchCurrentMove, type MoveHooks } from "./move";
import { openStore } from "./open-store";
import { plantonManagedKey, PlantonManagedStore } from "./planton-managed-store";

let t: TestDatabase;
let s3: S3Server;
let azure: AzuriteServer;
let azureContainer: ContainerClient;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "planton-move-"));

beforeAll(async () => {
  t = await createTestDatabase();
  [s3, azure] = await Promise.all([startS3rver(), startAzurite()]);
  azureContainer = BlobServiceClient.fromConnectionString(azure.connectionString).getContainerClient("tfstate");
  await azureContainer.create();
});
afterAll(async () => {
  await Promise.allSettled([s3?.stop(), azure?.stop()]);
  await t?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

type Setup = Awaited<ReturnType<typeof orgWithComponent>>;
type Kind = "local" | "s3" | "azure_blob";

const doc = (serial: number, lineage: string, name: string) => ({ version: 4, terraform_version: "builtin-0.1.0", serial, lineage, outputs: { name: { value: name, type: "string" } }, resources: [] });

/** An organization with `n` components, each with a Planton-managed state written through the store (lock, write, unlock). */
async function orgWithStates(n = 3): Promise<Setup> {
  const setup = await orgWithComponent(t.db, { components: n });
  const pm = new PlantonManagedStore(t.db, setup.org.orgId, "seed");
  for (const [i, c] of setup.components.entries()) {
    const key = plantonManagedKey(setup.org.orgId, c.id);
    await pm.lock(key, { ID: "seed", Operation: "OperationTypeApply" });
    await pm.write(key, storedStateOf(new TextEncoder().encode(JSON.stringify(doc(3 + i, `lin-${c.id}`, c.name)))));
    await pm.unlock(key, "seed");
  }
  return setup;
}

/** The state of the setup's `index`th component locked by a job a runner claimed (as an apply in progress holds it). */
async function lockedByJob(setup: Setup, index: number) {
  const runner = await testRunner(t.db, setup.org);
  await createJob(t.db, setup.org.actor(), { componentId: setup.components[index].id, operation: "refresh" });
  const c = (await claim(t.db, runner))!;
  const lock = await lockState(t.db, c.access, { Operation: "OperationTypeApply" });
  if (!lock.ok) throw new Error(lock.message);
  return { c, lock };
}

let seq = 0;
/** A destination backend of `kind` (its own folder, key prefix or bucket prefix, so tests never share objects). */
async function destination(setup: Setup, kind: Kind, name = `dest-${kind.replace("_", "-")}-${++seq}`) {
  const orgId = setup.org.orgId;
  if (kind === "local") {
    const dir = path.join(tmp, name);
    await t.db.insert(stateBackends).values({ id: newId("stateBackend"), orgId, name, kind, config: { path: dir } });
  } else if (kind === "s3") {
    const connectionId = newId("connection");
    await t.db.insert(connections).values({ id: connectionId, orgId, name: `aws-${name}`, provider: "aws", config: { region: s3.region }, credentialsEncrypted: encryptSecret(JSON.stringify({ access_key_id: s3.credentials.accessKeyId, secret_access_key: s3.credentials.secretAccessKey })) });
    await t.db.insert(stateBackends).values({ id: newId("stateBackend"), orgId, name, kind, config: { bucket: s3.bucket, key_prefix: `${name}/`, endpoint: s3.endpoint }, connectionId });
  } else {
    const connectionId = newId("connection");
    await t.db.insert(connections).values({ id: connectionId, orgId, name: `az-${name}`, provider: "azure_storage", config: { storage_account_name: azure.accountName }, credentialsEncrypted: encryptSecret(JSON.stringify({ access_key: azure.accountKey })) });
    await t.db.insert(stateBackends).values({ id: newId("stateBackend"), orgId, name, kind, config: { container_name: "tfstate", key_prefix: `${name}/`, endpoint: azure.url }, connectionId });
  }
  const [row] = await t.db.select().from(stateBackends).where(and(eq(stateBackends.orgId, orgId), eq(stateBackends.name, name)));
  return row;
}

/** Every object at the destination, raw (lock files, leases and metadata included), as the kind's own client sees it. */
async function objectsAt(backend: typeof stateBackends.$inferSelect): Promise<Record<string, string>> {
  const cfg = backend.config as Record<string, string>;
  const out: Record<string, string> = {};
  if (backend.kind === "local") {
    const walk = (dir: string) => {
      if (!fs.existsSync(dir)) return;
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, e.name);
        if (e.isDirectory()) (out[`${path.relative(cfg.path, full)}/`] = "dir"), walk(full);
        else out[path.relative(cfg.path, full)] = fs.readFileSync(full, "base64");
      }
    };
    walk(cfg.path);
  } else if (backend.kind === "s3") {
    const client = new S3Client({ region: s3.region, endpoint: s3.endpoint, forcePathStyle: true, credentials: s3.credentials });
    const list = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: cfg.key_prefix }));
    for (const o of list.Contents ?? []) out[o.Key!] = Buffer.from(await (await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: o.Key! }))).Body!.transformToByteArray()).toString("base64");
  } else {
    for await (const b of azureContainer.listBlobsFlat({ prefix: cfg.key_prefix, includeMetadata: true })) {
      out[b.name] = `${(await azureContainer.getBlockBlobClient(b.name).downloadToBuffer()).toString("base64")} ${JSON.stringify(b.metadata ?? {})} ${b.properties.leaseState}`;
    }
  }
  return out;
}

/** Every row of every table, as text: compared before and after to show nothing changed. */
async function allRows(): Promise<string> {
  const rows = (r: unknown) => (Array.isArray(r) ? r : ((r as { rows: unknown[] }).rows ?? [])) as Record<string, unknown>[];
  const tables = rows(await t.db.execute(sql`select tablename from pg_tables where schemaname = 'public' order by tablename`)).map((r) => String(r.tablename));
  const out: string[] = [];
  for (const table of tables) {
    const r = rows(await t.db.execute(sql.raw(`select coalesce(string_agg(x::text, E'\\n' order by x::text), '') as rows from (select to_jsonb(t) as x from "${table}" t) s`)));
    out.push(`${table}\n${r[0]?.rows ?? ""}`);
  }
  return out.join("\n");
}

async function expectNothingChanged(backends: (typeof stateBackends.$inferSelect)[], act: () => Promise<unknown>) {
  const before = { rows: await allRows(), objects: await Promise.all(backends.map(objectsAt)) };
  await act();
  expect(await allRows()).toBe(before.rows);
  expect(await Promise.all(backends.map(objectsAt))).toEqual(before.objects);
}

const stop = (at: string): MoveHooks => ({
  afterStep: (step) => {
    if (step === at) throw new MoveStopped();
  },
});

/** Checks every state was moved exactly once: the component points at its destination key, the bytes there are the Planton-managed bytes, the old copy is marked, nothing is held or locked. */
/** The move ended succeeded (its items' errors as the message otherwise) and every state is on `backend`. */
async function expectSucceeded(setup: Setup, backend: typeof stateBackends.$inferSelect, moveId: string) {
  const ended = await getMove(t.db, setup.org.actor(), { id: moveId });
  expect(ended.status, ended.items.map((i) => i.error).join("\n")).toBe("succeeded");
  await expectMoved(setup, backend);
}

async function expectMoved(setup: Setup, backend: typeof stateBackends.$inferSelect) {
  const store = await openStore(t.db, backend);
  try {
    for (const c of setup.components) {
      const [comp] = await t.db.select().from(infraComponents).where(eq(infraComponents.id, c.id));
      expect(comp.stateBackendId).toBe(backend.id);
      expect(comp.stateKey).toBe(defaultStateKey("dev", c.name));
      expect(comp.stateHold).toBeNull();
      const [obj] = await t.db.select().from(stateObjects).where(eq(stateObjects.componentId, c.id));
      expect(obj.movedToBackendId).toBe(backend.id);
      expect(obj.movedAt).not.toBeNull();
      expect(obj.lockInfo).toBeNull();
      const there = await store.read(comp.stateKey!);
      const old = await new PlantonManagedStore(t.db, setup.org.orgId).read(obj.key);
      expect(there?.checksum).toBe(old!.checksum);
      expect(await store.lockHolder(comp.stateKey!)).toBeNull();
      const items = await t.db.select().from(stateMoveItems).where(eq(stateMoveItems.componentId, c.id));
      expect(items.map((i) => [i.step, i.checksum])).toEqual([["done", old!.checksum]]);
    }
    // One state object per component at the destination, nothing else (no probe, no lock left).
    expect((await store.list()).map((o) => o.key).sort()).toEqual(setup.components.map((c) => defaultStateKey("dev", c.name)).sort());
  } finally {
    await store.close?.();
  }
}

describe.each<Kind>(["local", "s3", "azure_blob"])("moving off Planton-managed storage to %s", (kind) => {
  it("says exactly what would move and changes nothing: every row and every destination object equal byte for byte", async () => {
    const setup = await orgWithStates(3);
    const to = await destination(setup, kind);
    let answer: Awaited<ReturnType<typeof dryRun>> | undefined;
    await expectNothingChanged([to], async () => (answer = await dryRun(t.db, setup.org.actor(), { to: { builtin: to.name } })));
    expect(answer!.totals.count).toBe(3);
    const pm = new PlantonManagedStore(t.db, setup.org.orgId);
    for (const c of setup.components) {
      const item = answer!.items.find((i) => i.componentId === c.id)!;
      const state = (await pm.read(plantonManagedKey(setup.org.orgId, c.id)))!;
      expect(item).toMatchObject({ component: c.name, environment: "dev", provisioner: "builtin", from: "planton-managed", to: to.name, fromKey: plantonManagedKey(setup.org.orgId, c.id), toKey: defaultStateKey("dev", c.name), size: state.bytes.byteLength, serial: state.serial, checksum: state.checksum, step: "pending" });
    }
    // A bounded dry run (as the wizard's review asks): the first items in the same order, the totals over every one.
    const bounded = await dryRun(t.db, setup.org.actor(), { to: { builtin: to.name }, limit: 2 });
    expect(bounded).toEqual({ items: answer!.items.slice(0, 2), totals: answer!.totals });
  });

  it("killed after copy and before switch, then resumed: every state moved once, checksums equal, old copies marked", async () => {
    const setup = await orgWithStates(3);
    const to = await destination(setup, kind);
    const move = await startMove(t.db, setup.org.actor(), { to: { "*": to.name } }, { hooks: stop("copied"), chunkSize: 2 });
    await moveRun(move.id);
    const mid = await getMove(t.db, setup.org.actor(), { id: move.id });
    expect(mid.status).toBe("running");
    expect(mid.items.map((i) => i.step)).toContain("copied");
    // The start's answer (built from the plan) is the move as committed: the same items, in the same order, each pending.
    const which = ({ id, componentId, environment, from, to, fromKey, toKey }: (typeof mid.items)[number]) => ({ id, componentId, environment, from, to, fromKey, toKey });
    expect(move.items.map(which)).toEqual(mid.items.map(which));
    expect(new Set(move.items.map((i) => i.step))).toEqual(new Set(["pending"]));
    // Killed there: the components are still on Planton-managed storage, held, their states locked by the move.
    const [held] = await t.db.select().from(infraComponents).where(eq(infraComponents.id, mid.items.find((i) => i.step === "copied")!.componentId));
    expect([held.stateBackendId, held.stateHold]).toEqual([null, move.id]);
    await resumeMove(t.db, move.id);
    await expectSucceeded(setup, to, move.id);
    expect((await auditOf(t.db, setup.org.orgId, "state.move.start")).length).toBe(1);
    expect((await auditOf(t.db, setup.org.orgId, "state.move.end")).length).toBe(1);
  });

  it("killed after switch and before unlock, then resumed: the locks and holds are released and nothing is copied twice", async () => {
    const setup = await orgWithStates(3);
    const to = await destination(setup, kind);
    // An older version of each state is already at the destination (a rolled-back move leaves one), so the copy
    // replaces it under the destination's lock: a lock outside the switch's transaction, released after it.
    const store = await openStore(t.db, to);
    for (const [i, c] of setup.components.entries()) {
      await store.write(defaultStateKey("dev", c.name), storedStateOf(new TextEncoder().encode(JSON.stringify(doc(1 + i, `lin-${c.id}`, "older")))));
    }
    const move = await startMove(t.db, setup.org.actor(), { to: { builtin: to.name } }, { hooks: stop("switched") });
    await moveRun(move.id);
    const mid = await getMove(t.db, setup.org.actor(), { id: move.id });
    expect(mid.items.map((i) => i.step)).toEqual(["switched", "switched", "switched"]);
    // Killed there: both sides stay locked under the item's lock ID, the components already point at the destination.
    const source = new PlantonManagedStore(t.db, setup.org.orgId, "test");
    for (const item of mid.items) {
      expect((await source.lockHolder(item.fromKey))?.ID).toBe(moveLockId(item.id!));
      expect((await store.lockHolder(item.toKey))?.ID).toBe(moveLockId(item.id!));
      const [comp] = await t.db.select().from(infraComponents).where(eq(infraComponents.id, item.componentId));
      expect([comp.stateBackendId, comp.stateHold]).toEqual([to.id, move.id]);
    }
    await store.close?.();
    // What every replica's scheduler tick does: a running move nobody runs runs on here.
    expect(await resumeRunningMoves(t.db)).toContain(move.id);
    await moveRun(move.id);
    expect((await currentMove(t.db, setup.org.actor())).remainingOnPlanton).toBe(0);
    await expectMoved(setup, to);
  });

  it("switches and unlocks in one commit when the copy took no lock at the destination: no moment is switched but still locked", async () => {
    const setup = await orgWithStates(3);
    const to = await destination(setup, kind);
    const seen: string[] = [];
    const move = await startMove(t.db, setup.org.actor(), { to: { builtin: to.name } }, { hooks: { afterStep: (step) => void seen.push(step) } });
    await moveRun(move.id);
    expect(seen).toEqual(["held", "locked", "copied", "done"]);
    await expectSucceeded(setup, to, move.id);
  });
});

describe("the move's guarantees", () => {
  it("a run that stops on an error is run on by the sweep after a backoff that doubles with each failure in a row, and finishes", async () => {
    const setup = await orgWithStates(2);
    const to = await destination(setup, "local");
    // Fails after every step it commits (each run then gets one step further).
    const failing: MoveHooks = {
      afterStep: () => {
        throw new Error("the database refused the statement");
      },
    };
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const move = await startMove(t.db, setup.org.actor(), { to: { builtin: to.name } }, { hooks: failing });
      await moveRun(move.id);
      expect(errors.mock.calls.map((c) => String(c[0]))).toContain(`[state-move] ${move.id} stopped: the database refused the statement; it runs on from where it stands in 2 s (failure 1 in a row)`);
      let clock = Date.now();
      const sweep = (hooks?: MoveHooks) => resumeRunningMoves(t.db, { now: () => clock, hooks, log: () => {} });
      // Not before its backoff has passed; then it runs (and fails again: 4 s next).
      expect(await sweep(failing)).toEqual([]);
      clock += 2001;
      expect(await sweep(failing)).toEqual([move.id]);
      await moveRun(move.id);
      expect(errors.mock.calls.map((c) => String(c[0]))).toContain(`[state-move] ${move.id} stopped: the database refused the statement; it runs on from where it stands in 4 s (failure 2 in a row)`);
      clock += 3000;
      expect(await sweep()).toEqual([]);
      clock += 1001;
      expect(await sweep()).toEqual([move.id]);
      await moveRun(move.id);
      await expectSucceeded(setup, to, move.id);
      // Finished: nothing is left to sweep, and the failures are forgotten.
      clock += 10 * 60_000;
      expect(await sweep()).toEqual([]);
    } finally {
      errors.mockRestore();
    }
  });

  it("holds a component's jobs while it moves; the job says why it waits, then runs against the new backend and records that", async () => {
    const setup = await orgWithStates(1);
    const to = await destination(setup, "local");
    const runner = await testRunner(t.db, setup.org);
    const move = await startMove(t.db, setup.org.actor(), { to: { builtin: to.name } }, { hooks: stop("held") });
    await moveRun(move.id);
    const job = await createJob(t.db, setup.org.actor(), { componentId: setup.component.id, operation: "refresh" });
    expect(job.backendId).not.toBe(to.id);
    expect(await claim(t.db, runner)).toBeNull();
    expect((await getJob(t.db, setup.org.orgId, job.id)).reason).toMatch(new RegExp(`^Waiting: this component's state is being moved .*state move ${move.id}`));
    await resumeMove(t.db, move.id);
    const c = (await claim(t.db, runner))!;
    expect(c.claim.job.id).toBe(job.id);
    expect(c.claim.input.backend).toMatchObject({ id: to.id, name: to.name, kind: "local" });
    const [row] = await t.db.select().from(infraJobs).where(eq(infraJobs.id, job.id));
    expect(row.backendId).toBe(to.id);
    const events = await t.db.execute(sql`select payload->>'line' as line from progress_events where job_id = ${job.id} and type = 'log'`);
    const lines = (Array.isArray(events) ? events : (events as { rows: { line: string }[] }).rows) as { line: string }[];
    expect(lines.map((l) => l.line)).toContain(`The component's state moved from backend planton-managed to ${to.name} (local) after this job was queued; it runs against ${to.name}.`);
  });

  it("fails an item whose state a job holds locked, naming the job; retry moves it once the job let go", async () => {
    const setup = await orgWithStates(2);
    const to = await destination(setup, "local");
    const { c, lock } = await lockedByJob(setup, 1);
    const move = await startMove(t.db, setup.org.actor(), { to: { builtin: to.name } });
    await moveRun(move.id);
    const ended = await getMove(t.db, setup.org.actor(), { id: move.id });
    expect(ended.status).toBe("failed");
    const failed = ended.items.find((i) => i.step === "failed")!;
    expect(failed.error).toBe(`Nothing was moved for component ${setup.components[1].name}: its state is locked by job ${c.claim.job.id}; retry when it ends.`);
    // The failed item released its hold; the job's lock is untouched.
    const [comp] = await t.db.select().from(infraComponents).where(eq(infraComponents.id, setup.components[1].id));
    expect([comp.stateHold, comp.stateBackendId]).toEqual([null, null]);
    expect((await auditOf(t.db, setup.org.orgId, "state.move.item_failed")).length).toBe(1);
    await unlockState(t.db, c.access, lock.lock.ID);
    await retryMove(t.db, setup.org.actor(), { id: move.id });
    await moveRun(move.id);
    expect((await getMove(t.db, setup.org.actor(), { id: move.id })).status).toBe("succeeded");
    await expectMoved(setup, to);
  });

  it("a live view carries the counts over every item and at most its limit of items, failed first, then in flight; the watch answers it as the steps commit, to the end", async () => {
    const setup = await orgWithStates(5);
    const to = await destination(setup, "local");
    const { c, lock } = await lockedByJob(setup, 4);
    const watch = new AbortController();
    const seen: Awaited<ReturnType<typeof currentMove>>[] = [];
    let ended!: () => void;
    const end = new Promise<void>((resolve) => (ended = resolve));
    const watching = (async () => {
      for await (const v of watchCurrentMove(t, setup.org.actor(), watch.signal)) {
        seen.push(v);
        if (v.move && v.move.status !== "running") ended();
      }
    })();
    // A second page (another admin, as an engineer here) shares the organization's one reader: what it is given are those same reads.
    const second: typeof seen = [];
    let secondEnded!: () => void;
    const secondEnd = new Promise<void>((resolve) => (secondEnded = resolve));
    const watchingToo = (async () => {
      for await (const v of watchCurrentMove(t, setup.org.actor("engineer"), watch.signal)) {
        second.push(v);
        if (v.move && v.move.status !== "running") secondEnded();
      }
    })();

    const RANK = ["failed", ...MOVE_STEPS_IN_FLIGHT, "pending"] as string[];
    const rank = (step: string) => (RANK.includes(step) ? RANK.indexOf(step) : RANK.length);
    const move = await startMove(t.db, setup.org.actor(), { to: { builtin: to.name } }, { hooks: stop("copied"), chunkSize: 2 });
    await moveRun(move.id);
    const all = await getMove(t.db, setup.org.actor(), { id: move.id });
    const mid = await getMove(t.db, setup.org.actor(), { id: move.id, limit: 3 });
    expect(all.items).toHaveLength(5);
    expect(mid.items).toHaveLength(3);
    expect(mid.progress).toEqual(all.progress);
    expect(mid.progress.total).toBe(5);
    expect(mid.progress.inFlight).toBe(all.items.filter((i) => (MOVE_STEPS_IN_FLIGHT as readonly string[]).includes(i.step)).length);
    expect(mid.progress.inFlight).toBeGreaterThan(0);
    const ranks = mid.items.map((i) => rank(i.step));
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    // The three carried are the three that come first among all five.
    expect(ranks).toEqual(all.items.map((i) => rank(i.step)).sort((a, b) => a - b).slice(0, 3));
    const stopped = await currentMove(t.db, setup.org.actor());
    expect(stopped.move!.status).toBe("running");
    expect(stopped.remainingOnPlanton).toBeNull();

    await resumeMove(t.db, move.id);
    await end;
    const final = await getMove(t.db, setup.org.actor(), { id: move.id });
    expect(final.status).toBe("failed");
    expect(final.progress).toEqual({ total: 5, done: 4, failed: 1, rolledBack: 0, inFlight: 0 });
    expect((await getMove(t.db, setup.org.actor(), { id: move.id, limit: 1 })).items.map((i) => [i.component, i.step])).toEqual([[setup.components[4].name, "failed"]]);
    expect((await getMove(t.db, setup.org.actor(), { id: move.id, limit: 0 })).items).toEqual([]);
    // The watch's last value is the move as it ended; every value carried at most MOVE_ITEMS_SHOWN items.
    expect(seen.at(-1)!.move).toEqual((await currentMove(t.db, setup.org.actor())).move);
    expect(seen.at(-1)!.move!.items[0].step).toBe("failed");
    expect(seen.every((v) => (v.move?.items.length ?? 0) <= MOVE_ITEMS_SHOWN)).toBe(true);
    // What is left on Planton-managed storage is counted once the move has ended (the failed one's state), not while it runs.
    expect(seen.filter((v) => v.move?.status === "running").every((v) => v.remainingOnPlanton === null)).toBe(true);
    expect(seen.at(-1)!.remainingOnPlanton).toBe(1);
    await secondEnd;
    expect(second.length).toBeGreaterThan(0);
    for (const v of second) expect(seen).toContain(v);
    expect(second.at(-1)).toBe(seen.at(-1));
    watch.abort();
    await Promise.all([watching, watchingToo]);
    await unlockState(t.db, c.access, lock.lock.ID);
  });

  it("switches nothing when the copy read back is not the copied bytes: the item fails naming both checksums, the component stays where it was, unheld and unlocked; a retry copies it again", async () => {
    const setup = await orgWithStates(1);
    const to = await destination(setup, "local");
    const move = await startMove(t.db, setup.org.actor(), { to: { builtin: to.name } }, { hooks: stop("copied") });
    await moveRun(move.id);
    const [item] = (await getMove(t.db, setup.org.actor(), { id: move.id })).items;
    expect(item.step).toBe("copied");
    // Between the copy and the read-back, something puts an older version of the same state in the copy's place.
    const store = await openStore(t.db, to);
    const older = storedStateOf(new TextEncoder().encode(JSON.stringify(doc(item.serial! - 1, `lin-${item.componentId}`, "older"))));
    await store.write(item.toKey, older);
    await store.close?.();
    await resumeMove(t.db, move.id);
    const failed = await getMove(t.db, setup.org.actor(), { id: move.id });
    expect(failed.status).toBe("failed");
    expect(failed.items[0]).toMatchObject({
      step: "failed",
      error: `Nothing was switched for component ${item.component}: the copy read back from ${to.name} (key ${item.toKey}) has checksum ${older.checksum}, not the copied ${item.checksum}. Retry the move; the state stays on its current backend until the checksums agree.`,
    });
    const [comp] = await t.db.select().from(infraComponents).where(eq(infraComponents.id, item.componentId));
    expect([comp.stateBackendId, comp.stateHold]).toEqual([null, null]);
    const [obj] = await t.db.select().from(stateObjects).where(eq(stateObjects.componentId, item.componentId));
    expect([obj.movedToBackendId, obj.lockInfo]).toEqual([null, null]);
    // The retry finds the older version there, replaces it under the destination's lock (as the write rules allow) and reads it back.
    await retryMove(t.db, setup.org.actor(), { id: move.id });
    await moveRun(move.id);
    expect((await getMove(t.db, setup.org.actor(), { id: move.id })).status).toBe("succeeded");
    await expectMoved(setup, to);
  });

  it("rolls one component back, copying back what was written on the new backend since the move", async () => {
    const setup = await orgWithStates(2);
    const to = await destination(setup, "s3");
    const move = await startMove(t.db, setup.org.actor(), { to: { builtin: to.name } });
    await moveRun(move.id);
    const done = await getMove(t.db, setup.org.actor(), { id: move.id });
    expect(done.items.every((i) => i.canRollBack)).toBe(true);
    const [a, b] = done.items;
    // A job wrote serial+1 on the new backend after the move.
    const store = await openStore(t.db, to);
    const newer = storedStateOf(new TextEncoder().encode(JSON.stringify(doc(a.serial! + 1, `lin-${a.componentId}`, "after the move"))));
    await store.lock(a.toKey, { ID: "job", Operation: "OperationTypeApply" });
    await store.write(a.toKey, newer);
    await store.unlock(a.toKey, "job");
    await store.close?.();
    const after = await rollbackItem(t.db, setup.org.actor(), { id: move.id, itemId: a.id });
    expect(after.items.find((i) => i.id === a.id)).toMatchObject({ step: "rolled_back", canRollBack: false });
    const [comp] = await t.db.select().from(infraComponents).where(eq(infraComponents.id, a.componentId));
    const [pmBackend] = await t.db.select().from(stateBackends).where(and(eq(stateBackends.orgId, setup.org.orgId), eq(stateBackends.kind, "planton_managed")));
    expect([comp.stateBackendId, comp.stateKey]).toEqual([pmBackend.id, null]);
    const back = await new PlantonManagedStore(t.db, setup.org.orgId).read(a.fromKey);
    expect([back?.serial, JSON.parse(Buffer.from(back!.bytes).toString()).outputs.name.value]).toEqual([a.serial! + 1, "after the move"]);
    const [obj] = await t.db.select().from(stateObjects).where(eq(stateObjects.componentId, a.componentId));
    expect([obj.movedToBackendId, obj.movedAt]).toEqual([null, null]);
    // The other component stays moved; the rollback is one audit event.
    expect(after.items.find((i) => i.id === b.id)).toMatchObject({ step: "done", canRollBack: true });
    expect((await auditOf(t.db, setup.org.orgId, "state.move.rollback")).map((e) => e.targetId)).toEqual([a.componentId]);
    expect((await currentMove(t.db, setup.org.actor())).remainingOnPlanton).toBe(1);
    await expect(rollbackItem(t.db, setup.org.actor(), { id: move.id, itemId: a.id })).rejects.toThrow(/only a component whose move is done can be rolled back/);
    // A job writes again on Planton-managed storage, then it is moved again: the copy the rollback left there is an older version of the same state, so it is replaced.
    const pm = new PlantonManagedStore(t.db, setup.org.orgId, "job");
    await pm.lock(a.fromKey, { ID: "job2", Operation: "OperationTypeApply" });
    await pm.write(a.fromKey, storedStateOf(new TextEncoder().encode(JSON.stringify(doc(a.serial! + 2, `lin-${a.componentId}`, "back home")))));
    await pm.unlock(a.fromKey, "job2");
    const again = await startMove(t.db, setup.org.actor(), { to: { builtin: to.name } });
    await moveRun(again.id);
    const second = await getMove(t.db, setup.org.actor(), { id: again.id });
    expect(second.status, second.items.map((i) => i.error).join("\n")).toBe("succeeded");
    expect(second.items.map((i) => [i.componentId, i.serial])).toEqual([[a.componentId, a.serial! + 2]]);
  });

  it("starts one move when two admins start at once; the second is told which move runs and who started it", async () => {
    const setup = await orgWithStates(2);
    const to = await destination(setup, "local");
    const results = await Promise.allSettled([
      startMove(t.db, setup.org.actor(), { to: { builtin: to.name } }, { hooks: stop("held") }),
      startMove(t.db, setup.org.actor(), { to: { builtin: to.name } }, { hooks: stop("held") }),
    ]);
    const ok = results.filter((r) => r.status === "fulfilled");
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect([ok.length, refused.length]).toEqual([1, 1]);
    const id = (ok[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof startMove>>>).value.id;
    expect(refused[0].reason.message).toMatch(new RegExp(`^Nothing was started: state move ${id}, started by ${setup.org.users.admin.email} at .*, is still running`));
    await moveRun(id);
    const count = await t.db.execute(sql`select count(*)::int as n from state_moves where org_id = ${setup.org.orgId}`);
    expect(((Array.isArray(count) ? count : (count as { rows: { n: number }[] }).rows) as { n: number }[])[0].n).toBe(1);
    await resumeMove(t.db, id);
  });

  it("refuses bad input with the fix and changes nothing: unknown backend, a kind for another provisioner, no access, the same backend, a provisioner without a destination", async () => {
    const setup = await orgWithStates(2);
    const good = await destination(setup, "local");
    // A folder that cannot be created: its parent is a file.
    const file = path.join(tmp, `not-a-folder-${++seq}`);
    fs.writeFileSync(file, "x");
    const [noAccess] = await t.db.insert(stateBackends).values({ id: newId("stateBackend"), orgId: setup.org.orgId, name: `no-access-${seq}`, kind: "local", config: { path: path.join(file, "states") } }).returning();
    const [pulumiOnly] = await t.db.insert(stateBackends).values({ id: newId("stateBackend"), orgId: setup.org.orgId, name: `pulumi-only-${seq}`, kind: "pulumi_cloud", config: { organization: "acme" } }).returning();
    const actor = setup.org.actor();
    const cases: [unknown, RegExp][] = [
      [{ builtin: pulumiOnly.name }, new RegExp(`^Nothing was moved: backend ${pulumiOnly.name} \\(Pulumi Cloud\\) keeps pulumi state, not builtin\\. Choose a backend that keeps builtin state \\(Local directory, `)],
      [{ builtin: "nowhere" }, /^Nothing was moved: the state backend nowhere was not found\. Create it first/],
      [{ builtin: noAccess.name }, new RegExp(`^Nothing was moved: the access test of .* backend ${noAccess.name} failed at writing a probe state: .*Fix its connection or configuration in Settings → State Backends`)],
      [{ builtin: "planton-managed" }, /^Nothing was moved: planton-managed is the Planton-managed backend, where these states already are\. Choose a backend of your own/],
      [{}, /^Nothing was moved: 2 states on Planton-managed storage belong to the builtin provisioner, and no destination was given for it\. Add --to builtin=<backend>\.$/],
      [{ builtin: good.name, pulumi: good.name }, /^Nothing was moved: no state on Planton-managed storage belongs to the pulumi provisioner \(in use: builtin\)/],
    ];
    await expectNothingChanged([good], async () => {
      for (const [to, message] of cases) {
        await expect(dryRun(t.db, actor, { to: to as Record<string, string> })).rejects.toThrow(message);
        await expect(startMove(t.db, actor, { to: to as Record<string, string> })).rejects.toThrow(message);
      }
      await expect(migrateBackend(t.db, actor, { componentId: setup.component.id, to: "planton-managed" })).rejects.toThrow(/is the Planton-managed backend/);
    });
    expect(fs.readFileSync(file, "utf8")).toBe("x");
  });

  it("migrates one component between two backends of its own, with a dry run first", async () => {
    const setup = await orgWithStates(2);
    const local = await destination(setup, "local");
    const remote = await destination(setup, "azure_blob");
    const first = await migrateBackend(t.db, setup.org.actor(), { componentId: setup.component.id, to: local.name });
    await moveRun(first.move!.id);
    expect((await getMove(t.db, setup.org.actor(), { id: first.move!.id })).status).toBe("succeeded");
    await expect(migrateBackend(t.db, setup.org.actor(), { componentId: setup.component.id, to: local.name, dryRun: true })).rejects.toThrow(`Nothing was moved: the state is already on ${local.name}. Choose another backend.`);
    let plan: Awaited<ReturnType<typeof migrateBackend>> | undefined;
    await expectNothingChanged([local, remote], async () => (plan = await migrateBackend(t.db, setup.org.actor(), { componentId: setup.component.id, to: remote.name, dryRun: true })));
    expect(plan!.dryRun!.items).toEqual([expect.objectContaining({ from: local.name, to: remote.name, fromKey: defaultStateKey("dev", setup.component.name), toKey: defaultStateKey("dev", setup.component.name) })]);
    const second = await migrateBackend(t.db, setup.org.actor(), { componentId: setup.component.id, to: remote.name });
    await moveRun(second.move!.id);
    const ended = await getMove(t.db, setup.org.actor(), { id: second.move!.id });
    expect(ended).toMatchObject({ status: "succeeded", scope: "migrate_backend" });
    expect(ended.items[0].canRollBack).toBe(false);
    const [comp] = await t.db.select().from(infraComponents).where(eq(infraComponents.id, setup.component.id));
    expect(comp.stateBackendId).toBe(remote.id);
    const a = await openStore(t.db, local);
    const b = await openStore(t.db, remote);
    expect((await b.read(comp.stateKey!))?.checksum).toBe((await a.read(comp.stateKey!))?.checksum);
    await Promise.all([a.close?.(), b.close?.()]);
  });

  it("lets admins act and every member read", async () => {
    const setup = await orgWithStates(1);
    const to = await destination(setup, "local");
    await expect(setup.org.call("viewer").stateMoves.dryRun({ org: setup.org.slug, to: { builtin: to.name } })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(setup.org.call("engineer").stateMoves.start({ org: setup.org.slug, to: { builtin: to.name } })).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect(await setup.org.call("viewer").stateMoves.current({ org: setup.org.slug })).toEqual({ move: null, remainingOnPlanton: 1 });
  });
});

// Two console replicas on one Postgres: a second handle is a second "process" (its own pool and lock connections).
describe.runIf(testDriver === "postgres")("a move among replicas", () => {
  let second: DatabaseHandle;
  beforeAll(async () => {
    second = await openDatabase({ url: t.url!, migrate: false });
  });
  afterAll(() => second?.close());

  /** A promise the test resolves, and a hook that waits on it after every step (the run holds its lock meanwhile). */
  function gate() {
    let open!: () => void;
    let reached!: () => void;
    const opened = new Promise<void>((r) => (open = r));
    const reachedP = new Promise<void>((r) => (reached = r));
    return { open, reached: reachedP, hooks: { afterStep: async () => (reached(), await opened) } satisfies MoveHooks };
  }

  /** Holds a run after its first "copied" step until the test thaws it; `then` runs there after (a dead process throws MoveStopped). Records every step the run ends. */
  function holdAfterFirstCopy(then?: () => void) {
    let reach!: () => void;
    const reached = new Promise<void>((r) => (reach = r));
    let thaw!: () => void;
    const thawed = new Promise<void>((r) => (thaw = r));
    const steps: string[] = [];
    const hooks: MoveHooks = {
      afterStep: async (step) => {
        steps.push(step);
        if (step !== "copied" || steps.filter((x) => x === "copied").length > 1) return;
        reach();
        await thawed;
        then?.();
      },
    };
    return { reached, thaw, steps, hooks };
  }

  /** Ends the connection that holds the move's run lock, as a network break or a dead process does: Postgres frees the lock once that backend has exited. */
  async function endRunLockConnection(moveId: string) {
    const [holder] = rowsOf<{ pid: number }>(
      await t.db.execute(sql`select pid from pg_locks where locktype = 'advisory' and granted and objsubid = 1 and (classid::bigint << 32 | objid::bigint) = ${moveRunLockKey(moveId)}::bigint`),
    );
    const [ended] = rowsOf<{ ok: boolean }>(await t.db.execute(sql`select pg_terminate_backend(${holder.pid}::int, 10000) as ok`));
    expect(ended.ok).toBe(true);
  }

  it("two replicas resuming the same move at once: one runs it, the other says so and stays out; every state moved once, none failed", async () => {
    const setup = await orgWithStates(3);
    const to = await destination(setup, "local");
    const move = await startMove(t.db, setup.org.actor(), { to: { builtin: to.name } }, { hooks: stop("held") });
    await moveRun(move.id);
    const g = gate();
    const lines: string[] = [];
    const log = (m: string) => lines.push(m);
    const a = resumeMove(t.db, move.id, { hooks: g.hooks, log });
    const b = resumeMove(second.db, move.id, { hooks: g.hooks, log });
    // The one holding the run lock waits at its first step; the other answers first, having run nothing.
    expect(await Promise.race([a, b])).toBe(false);
    expect(lines).toEqual([`state move ${move.id} is not run here (pid ${process.pid}): another console process holds its run lock and runs it`]);
    g.open();
    expect((await Promise.all([a, b])).sort()).toEqual([false, true]);
    await expectSucceeded(setup, to, move.id);
    expect((await auditOf(t.db, setup.org.orgId, "state.move.end")).length).toBe(1);
    expect((await auditOf(t.db, setup.org.orgId, "state.move.item_failed")).length).toBe(0);
  });

  it("a live replica whose run lock's connection breaks stops at its next step, and the replica that takes the lock finishes the move alone", async () => {
    const setup = await orgWithStates(3);
    const to = await destination(setup, "local");
    // The first replica works one item at a time and is held after its first item is copied.
    const first = holdAfterFirstCopy();
    const lines: string[] = [];
    const move = await startMove(t.db, setup.org.actor(), { to: { builtin: to.name } }, { chunkSize: 1, parallelChunks: 1, log: (m) => lines.push(m), hooks: first.hooks });
    await first.reached;
    // Its lock connection ends (a network break); the process itself lives on.
    await endRunLockConnection(move.id);
    // The other replica's sweep takes the free lock and finishes the move.
    expect(await resumeRunningMoves(second.db, { log: () => {} })).toContain(move.id);
    expect(await resumeMove(second.db, move.id)).toBe(true);
    await expectSucceeded(setup, to, move.id);
    // The first goes on: at its next step's end it finds its lock broken and stops, touching no other item.
    first.thaw();
    await moveRun(move.id);
    expect(lines).toContain(`state move ${move.id} stopped here (pid ${process.pid}): its run lock's connection broke, so another console process may be running it; a sweep runs it on wherever its lock is free`);
    expect(first.steps.filter((s) => s === "held").length).toBe(1);
    await expectMoved(setup, to);
    expect((await auditOf(t.db, setup.org.orgId, "state.move.end")).length).toBe(1);
  });

  it("a replica that dies mid-move: the other's scheduler tick leaves the move alone while the lock is held, then takes it over and finishes it", async () => {
    const setup = await orgWithStates(3);
    const to = await destination(setup, "local");
    // The first replica's run stops after its copy, holding the run lock, as a process frozen there would.
    const first = holdAfterFirstCopy(() => {
      throw new MoveStopped(); // a dead process never runs on
    });
    const move = await startMove(t.db, setup.org.actor(), { to: { builtin: to.name } }, { hooks: first.hooks });
    await first.reached;
    expect((await getMove(t.db, setup.org.actor(), { id: move.id })).items.map((i) => i.step)).toEqual(["copied", "copied", "copied"]);

    const lines: string[] = [];
    const s = startScheduler(second, { intervalMs: 0, log: (m) => lines.push(m) });
    try {
      // Held: the other replica's sweep does not take it, and a direct resume there runs nothing.
      expect(await resumeRunningMoves(second.db)).not.toContain(move.id);
      expect(await resumeMove(second.db, move.id, { log: () => {} })).toBe(false);

      // The first replica dies: its lock connection ends.
      await endRunLockConnection(move.id);

      // The other replica's next tick resumes it; resumeMove there answers that run, in flight.
      await s.tick();
      expect(lines).toContain(`resuming state move ${move.id} here (pid ${process.pid}): it is running and no console process holds its run lock`);
      expect(await resumeMove(second.db, move.id)).toBe(true);
      await expectSucceeded(setup, to, move.id);
    } finally {
      await s.stop();
      first.thaw();
      await moveRun(move.id);
    }
    // The dead replica's run never ran on: the move stays as the survivor left it.
    await expectMoved(setup, to);
    expect((await auditOf(t.db, setup.org.orgId, "state.move.end")).length).toBe(1);
  });
});

describe("a move item's move and component (kept by migration 0025's statement-level triggers, not per-row foreign keys)", () => {
  const codeOf = (err: unknown): string | undefined => {
    for (let e = err as { code?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e) if (e.code) return e.code;
    return undefined;
  };
  const item = (moveId: string, componentId: string) => sql`(${newId("stateMoveItem")}, ${moveId}, ${componentId}, 'builtin', 'sb_a', 'sb_b', 'from', 'to')`;
  const insert = (...rows: ReturnType<typeof item>[]) => sql`insert into state_move_items (id, move_id, component_id, provisioner, from_backend_id, to_backend_id, from_key, to_key) values ${sql.join(rows, sql`, `)}`;
  const itemsOf = async (where: ReturnType<typeof sql>) => rowsOf<{ n: number }>(await t.db.execute(sql`select count(*)::int as n from state_move_items where ${where}`))[0].n;

  it("exist: an item naming a missing move or component is refused as a foreign-key violation and nothing is stored; deleting a move or a component deletes its items; no reference or id changes", async () => {
    const setup = await orgWithStates(3);
    const to = await destination(setup, "local");
    const move = await startMove(t.db, setup.org.actor(), { to: { builtin: to.name } });
    await moveRun(move.id);
    const [a, b, c] = setup.components.map((x) => x.id);
    expect(await itemsOf(sql`move_id = ${move.id}`)).toBe(3);
    // One statement with a real item and one naming a missing move, or a missing component: all of it refused.
    const noMove = newId("stateMove");
    const noComponent = newId("infraComponent");
    for (const [bad, missing] of [[item(noMove, a), noMove], [item(move.id, noComponent), noComponent]] as const) {
      const refused = await t.db.execute(insert(item(move.id, b), bad)).catch((e: unknown) => e);
      expect(codeOf(refused)).toBe("23503");
      expect(String((refused as Error).cause ?? refused)).toContain(missing);
    }
    expect(await itemsOf(sql`move_id = ${move.id}`)).toBe(3);
    expect(await itemsOf(sql`move_id = ${noMove} or component_id = ${noComponent}`)).toBe(0);
    // An item's move and component never change, nor do a move's or a component's id.
    expect(codeOf(await t.db.execute(sql`update state_move_items set component_id = ${b} where move_id = ${move.id} and component_id = ${a}`).catch((e: unknown) => e))).toBe("23503");
    expect(codeOf(await t.db.execute(sql`update state_move_items set move_id = ${noMove} where move_id = ${move.id}`).catch((e: unknown) => e))).toBe("23503");
    expect(codeOf(await t.db.execute(sql`update state_moves set id = ${noMove} where id = ${move.id}`).catch((e: unknown) => e))).toBe("23503");
    expect(codeOf(await t.db.update(infraComponents).set({ id: noComponent }).where(eq(infraComponents.id, a)).catch((e: unknown) => e))).toBe("23503");
    // The steps' own updates are not refused.
    await t.db.execute(sql`update state_move_items set step = step where move_id = ${move.id}`);

    // Deleting a component deletes its items; deleting the move deletes the rest.
    await t.db.delete(infraComponents).where(eq(infraComponents.id, a));
    expect([await itemsOf(sql`component_id = ${a}`), await itemsOf(sql`move_id = ${move.id}`)]).toEqual([0, 2]);
    await t.db.execute(sql`delete from state_moves where id = ${move.id}`);
    expect(await itemsOf(sql`component_id in (${b}, ${c})`)).toBe(0);
  });

  it.skipIf(testDriver === "pglite")("are locked against deletion until the writer commits: a deletion waits for the items' writer and then deletes them; a writer that waited for a deletion is refused", async () => {
    const setup = await orgWithStates(2);
    const to = await destination(setup, "local");
    const move = await startMove(t.db, setup.org.actor(), { to: { builtin: to.name } });
    await moveRun(move.id);
    const [a, b] = setup.components.map((x) => x.id);
    // A writer holds its uncommitted item; the component's deletion waits for it, then takes the item with it.
    const writer = await heldOpen(t.db, (tx) => tx.execute(insert(item(move.id, a))));
    const deletion = t.db.delete(infraComponents).where(eq(infraComponents.id, a)).execute();
    await lockWaiters(t.db, 1, "delete from%infra_components%");
    writer.commit();
    await writer.done;
    await deletion;
    expect(await itemsOf(sql`component_id = ${a}`)).toBe(0);

    // A deletion holds the component; a writer waits for it, then finds the component gone.
    const deleter = await heldOpen(t.db, (tx) => tx.delete(infraComponents).where(eq(infraComponents.id, b)));
    const late = t.db.execute(insert(item(move.id, b))).catch((e: unknown) => e);
    await lockWaiters(t.db, 1, "insert into state_move_items%");
    deleter.commit();
    await deleter.done;
    expect(codeOf(await late)).toBe("23503");
    expect(await itemsOf(sql`component_id = ${b}`)).toBe(0);
  });
});
