// A job's state journal: resource-level changes kept as the runner sends them (once, however often a
// batch is retried), compacted into one state write and one version at the step's commit — checked
// against the engine's checksum — or when the job ends any other way (a runner lost mid-apply).
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { claim, orgWithComponent, ownStateBackend, testRunner } from "../../../test/job-helpers";
import { infraJobs, stateJournal, stateObjects, stateVersions } from "@/db/schema";
import { diffStates, stateDigest, type DeltaState } from "@/lib/state-delta";
import { defaultStateKey } from "@/lib/state-backend-kinds";
import { createJob } from "../jobs/create-job";
import { expireLeases } from "../jobs/scheduler";
import { getState, lockState, putState } from "../runners/state";
import { appendStateJournal, commitStateJournal, compactStateJournal, journaledAddresses } from "./state-journal";

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.close();
});

const LINEAGE = "3f1c2b9e-0000-4000-8000-00000000aaaa";
const resource = (name: string, value: string) => ({
  mode: "managed",
  type: "random_id",
  name,
  provider: 'provider["registry.opentofu.org/hashicorp/random"]',
  instances: [{ schema_version: 0, attributes: { id: value, hex: value }, sensitive_attributes: [], dependencies: [] }],
});
const doc = (serial: number, ...resources: ReturnType<typeof resource>[]) => ({ version: 4, terraform_version: "1.0.0", serial, lineage: LINEAGE, outputs: {}, resources, check_results: null });

/** The changes an apply makes from `base` through each of `states`, as the engine numbers them. */
function changes(base: DeltaState, ...states: DeltaState[]) {
  let from = base;
  return states.map((s, i) => {
    const entry = { seq: i + 1, baseSerial: from.serial, delta: diffStates(from, s) };
    from = s;
    return entry;
  });
}

async function running(opts: { own?: boolean } = {}) {
  const s = await orgWithComponent(t.db);
  const own = opts.own ? await ownStateBackend(t.db, s.org) : null;
  const runner = await testRunner(t.db, s.org);
  const job = await createJob(t.db, s.org.actor(), { componentId: s.component.id, operation: "update" });
  const c = (await claim(t.db, runner))!;
  const lock = await lockState(t.db, c.access, { ID: `lock-${job.id}`, Operation: "OperationTypeApply" });
  expect(lock.ok).toBe(true);
  return { ...s, job, c, lockId: lock.lock.ID, own };
}

const versions = async (componentId: string) => (await t.db.select().from(stateVersions).where(eq(stateVersions.componentId, componentId))).length;
const journal = async (jobId: string) => t.db.select().from(stateJournal).where(eq(stateJournal.jobId, jobId));

/** A running job whose apply makes two changes (base → s2 → s3), the first of them kept by a batch. */
async function firstOfTwoSent() {
  const r = await running();
  const base = doc(1, resource("a", "aa"));
  await putState(t.db, r.c.access, r.lockId, base);
  const s3 = doc(3, resource("a", "a2"), resource("b", "bb"));
  const all = changes(base, doc(2, resource("a", "aa"), resource("b", "bb")), s3);
  await appendStateJournal(t.db, r.c.access, { step: "apply", lockId: r.lockId, entries: all.slice(0, 1) });
  return { ...r, all, s3 };
}

describe("a job's state journal on Planton-managed state", () => {
  it("keeps each change once however often a batch is retried, and compacts them into one write and one version that match the engine's checksum", async () => {
    const { component, c, lockId } = await running();
    const base = doc(1, resource("a", "aa"));
    await putState(t.db, c.access, lockId, base);
    const before = await versions(component.id);
    const s2 = doc(2, resource("a", "aa"), resource("b", "bb"));
    const s3 = doc(3, resource("a", "a2"), resource("b", "bb"));
    const s4 = { ...doc(4, resource("b", "bb")), outputs: { b: { value: "bb", type: "string" } } };
    const all = changes(base, s2, s3, s4);
    expect(all[0].delta.resources.map((r) => r.key)).toEqual(["random_id.b"]);
    expect(all[2].delta.resources).toEqual([{ key: "random_id.a", entry: null }]);

    expect(await appendStateJournal(t.db, c.access, { step: "apply", lockId, entries: all.slice(0, 2) })).toEqual({ acceptedThrough: 2 });
    // The runner did not hear back: the same changes come again with the next one.
    expect(await appendStateJournal(t.db, c.access, { step: "apply", lockId, entries: all })).toEqual({ acceptedThrough: 3 });
    expect(await journal(c.claim.job.id)).toHaveLength(3);
    expect(await journaledAddresses(t.db, c.claim.job.id)).toEqual(["random_id.b", "random_id.a"]);
    // The state is not rewritten per change: it is still the base until the commit.
    expect((await getState(t.db, c.access)) as DeltaState).toMatchObject({ serial: 1 });
    // The sealed change is not the state's plaintext (the JSON string, quotes and all: base64 has no quotes, and may hold bb by chance).
    expect((await journal(c.claim.job.id))[0].change).not.toContain('"bb"');
    expect((await journal(c.claim.job.id))[0].change).not.toContain("random_id");

    const done = await commitStateJournal(t.db, c.access, { step: "apply", checksum: stateDigest(s4).checksum });
    expect(done).toMatchObject({ entries: 3, written: true, match: true, serial: 4, checksum: stateDigest(s4).checksum });
    const [row] = await t.db.select().from(stateObjects).where(eq(stateObjects.componentId, component.id));
    expect(stateDigest(row.state).checksum).toBe(stateDigest(s4).checksum);
    expect(row.serial).toBe(4);
    expect(await versions(component.id)).toBe(before + 1);
    expect(await journal(c.claim.job.id)).toHaveLength(0);
  });

  it("a commit may bring the step's last changes with it: replayed after those already sent (one sent before counted once), compacted in the same transaction", async () => {
    const { component, c, lockId, all, s3 } = await firstOfTwoSent();
    // The first change again (its batch's answer was lost), and the last one, with the commit.
    const done = await commitStateJournal(t.db, c.access, { step: "apply", checksum: stateDigest(s3).checksum, lockId, entries: all });
    expect(done).toMatchObject({ entries: 2, written: true, match: true, serial: 3 });
    const [row] = await t.db.select().from(stateObjects).where(eq(stateObjects.componentId, component.id));
    expect(stateDigest(row.state).checksum).toBe(stateDigest(s3).checksum);
    expect(await journal(c.claim.job.id)).toHaveLength(0);
  });

  it("a commit whose changes do not give the engine's checksum keeps them with those sent before, sealed, for the whole state the runner then sends", async () => {
    const { component, c, lockId, all, s3 } = await firstOfTwoSent();
    const engine = doc(3, resource("a", "other"), resource("b", "bb"));
    const res = await commitStateJournal(t.db, c.access, { step: "apply", checksum: stateDigest(engine).checksum, lockId, entries: all });
    expect(res).toMatchObject({ entries: 2, written: false, match: false, checksum: stateDigest(s3).checksum });
    const kept = await journal(c.claim.job.id);
    expect(kept.map((r) => r.seq).sort()).toEqual([1, 2]);
    expect(kept.find((r) => r.seq === 2)!.change).not.toContain('"a2"');
    expect((await t.db.select().from(stateObjects).where(eq(stateObjects.componentId, component.id)))[0].serial).toBe(1);
    await putState(t.db, c.access, lockId, engine);
    expect(await journal(c.claim.job.id)).toHaveLength(0);
  });

  it("a commit whose changes name a lock the job does not hold keeps nothing, writes nothing, and says which lock to take", async () => {
    const { component, c, lockId } = await running();
    const base = doc(1, resource("a", "aa"));
    await putState(t.db, c.access, lockId, base);
    const s2 = doc(2, resource("a", "aa"), resource("b", "bb"));
    await expect(commitStateJournal(t.db, c.access, { step: "apply", checksum: stateDigest(s2).checksum, lockId: "not-the-lock", entries: changes(base, s2) })).rejects.toThrow(
      "Nothing was recorded: the state is not locked by this job under lock ID not-the-lock. Take the lock (POST …/state/lock) first.",
    );
    expect(await journal(c.claim.job.id)).toHaveLength(0);
    expect((await t.db.select().from(stateObjects).where(eq(stateObjects.componentId, component.id)))[0].serial).toBe(1);
  });

  it("a compaction that does not give the engine's checksum writes nothing, says so, and the whole state the runner then sends replaces the changes", async () => {
    const { component, c, lockId } = await running();
    const base = doc(1, resource("a", "aa"));
    await putState(t.db, c.access, lockId, base);
    const s2 = doc(2, resource("a", "aa"), resource("b", "bb"));
    await appendStateJournal(t.db, c.access, { step: "apply", lockId, entries: changes(base, s2) });
    const engine = doc(2, resource("a", "aa"), resource("b", "other"));
    const lines: string[] = [];
    const res = await t.db.transaction((tx) => compactStateJournal(tx, c.claim.job.id, { checksum: stateDigest(engine).checksum, log: (l) => lines.push(l) }));
    expect(res).toMatchObject({ entries: 1, written: false, match: false, checksum: stateDigest(s2).checksum });
    expect(lines).toEqual([
      `job ${c.claim.job.id}: the state compacted from 1 change(s) has checksum ${stateDigest(s2).checksum}, not the engine's ${stateDigest(engine).checksum}; nothing was written from them, and the runner sends its whole state instead`,
    ]);
    const [row] = await t.db.select().from(stateObjects).where(eq(stateObjects.componentId, component.id));
    expect(row.serial).toBe(1);
    expect(await journal(c.claim.job.id)).toHaveLength(1);
    await putState(t.db, c.access, lockId, engine);
    expect(await journal(c.claim.job.id)).toHaveLength(0);
  });

  it("refuses changes from a job that does not hold the lock, and a change that is not one (its key is not its resource)", async () => {
    const { c, lockId } = await running();
    const base = doc(1, resource("a", "aa"));
    await putState(t.db, c.access, lockId, base);
    await expect(appendStateJournal(t.db, c.access, { step: "apply", lockId: "another-lock", entries: changes(base, doc(2)) })).rejects.toThrow(
      /Nothing was recorded: the state is not locked by this job under lock ID another-lock/,
    );
    const { stateJournalBatch } = await import("@/lib/state-delta");
    const bad = { step: "apply", lockId, entries: [{ seq: 1, baseSerial: 1, delta: { serial: 2, lineage: LINEAGE, resources: [{ key: "random_id.x", entry: resource("a", "aa") }] } }] };
    expect(stateJournalBatch.safeParse(bad).success).toBe(false);
  });

  it("a runner lost mid-apply loses nothing it sent: the lease's expiry compacts the journal before the lock is released", async () => {
    const { component, c, lockId } = await running();
    const base = doc(1);
    await putState(t.db, c.access, lockId, base);
    await appendStateJournal(t.db, c.access, { step: "apply", lockId, entries: changes(base, doc(2, resource("first", "11"))) });
    await t.db.update(infraJobs).set({ leaseExpiresAt: new Date(Date.now() - 1000) }).where(eq(infraJobs.id, c.claim.job.id));
    expect(await expireLeases(t.db)).toContain(c.claim.job.id);
    const [row] = await t.db.select().from(stateObjects).where(eq(stateObjects.componentId, component.id));
    expect(row.lockInfo).toBeNull();
    expect(row.serial).toBe(2);
    expect((row.state as DeltaState).resources.map((r) => r.name)).toEqual(["first"]);
    expect(await journal(c.claim.job.id)).toHaveLength(0);
  });
});

describe("a job's state journal on the organization's own backend (local directory)", () => {
  it("compacts into one write of the backend's file under the lock the runner holds, from no state at all", async () => {
    const { component, c, lockId, own } = await running({ own: true });
    const s1 = doc(1, resource("a", "aa"));
    const s2 = doc(2, resource("a", "aa"), resource("b", "bb"));
    const entries = changes({ serial: 0, lineage: LINEAGE, resources: [] }, s1, s2);
    await appendStateJournal(t.db, c.access, { step: "apply", lockId, entries });
    expect(await commitStateJournal(t.db, c.access, { step: "apply", checksum: stateDigest(s2).checksum })).toMatchObject({ entries: 2, written: true, match: true, serial: 2 });
    const file = path.join(own!.dir, defaultStateKey("dev", component.name));
    expect(stateDigest(JSON.parse(fs.readFileSync(file, "utf8"))).checksum).toBe(stateDigest(s2).checksum);
    expect(await getState(t.db, c.access)).toMatchObject({ serial: 2 });
  });
});
