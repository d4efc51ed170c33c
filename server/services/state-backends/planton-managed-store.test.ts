// Planton-managed state as a StateStore, under the same rules every kind obeys (state-backends/rules.ts).
// Its keys name components, so it runs its own cases of the conformance suite rather than the suite's keys.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { orgWithComponent } from "../../../test/job-helpers";
import { stateObjects, stateVersions } from "@/db/schema";
import { StateBackend, StateLockedError, StateWriteRefused, storedStateOf } from "@/state-backends/rules";
import type { StoredState } from "@/state-backends/types";
import { PlantonManagedStore, plantonManagedKey } from "./planton-managed-store";
import { plantonManagedUsage, unmovedPlantonStates } from "./planton-managed-usage";

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t.close());

const state = (serial: number, lineage: string, extra = "") => new TextEncoder().encode(JSON.stringify({ version: 4, serial, lineage, resources: [], extra }));

describe("Planton-managed state store", () => {
  it("keeps the document with its identity, applies the write rules, and appends a version per content", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const b = new StateBackend(new PlantonManagedStore(t.db, org.orgId, "ada@example.com"));
    const k = plantonManagedKey(org.orgId, component.id);
    expect(await b.read(k)).toBeNull();
    const lock = await b.lock(k, { Operation: "OperationTypeApply" });
    await b.write(k, state(5, "L"), lock.ID);
    const read = await b.read(k);
    // jsonb keeps the document, not its bytes: the read is the same document.
    expect(JSON.parse(Buffer.from(read!.bytes).toString())).toEqual(JSON.parse(Buffer.from(state(5, "L")).toString()));
    expect([read?.serial, read?.lineage]).toEqual([5, "L"]);
    await expect(b.write(k, state(4, "L"), lock.ID)).rejects.toThrow(StateWriteRefused);
    await expect(b.write(k, read!.bytes.slice(), lock.ID)).resolves.toMatchObject({ serial: 5 });
    await expect(b.write(k, state(6, "OTHER"), lock.ID)).rejects.toThrow(/lineage/);
    await b.write(k, state(6, "L", "changed"), lock.ID);
    await b.unlock(k, lock.ID);
    const versions = await t.db.select().from(stateVersions).where(eq(stateVersions.componentId, component.id));
    expect(versions.map((v) => [v.serial, v.actorLabel])).toEqual([
      [5, "ada@example.com"],
      [6, "ada@example.com"],
    ]);
  });

  it("a second locker gets the holder's lock info; force-unlock frees it; racing lockers: exactly one wins", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const store = new PlantonManagedStore(t.db, org.orgId);
    const k = plantonManagedKey(org.orgId, component.id);
    const held = await store.lock(k, { Operation: "OperationTypeApply", Who: "alice@ci" });
    const refused = await store.lock(k, { Operation: "OperationTypeApply", Who: "bob@ci" }).catch((e) => e);
    expect(refused).toBeInstanceOf(StateLockedError);
    expect(refused.message).toMatch(/^Error acquiring the state lock/);
    expect(refused.message).toContain("alice@ci");
    await expect(store.unlock(k, "not-the-id")).rejects.toThrow(StateLockedError);
    expect((await store.forceUnlock(k))?.ID).toBe(held.ID);
    expect(await store.lockHolder(k)).toBeNull();
    const results = await Promise.allSettled([1, 2, 3, 4].map(() => store.lock(k, { Operation: "OperationTypeApply" })));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
  });

  it("keeps each write's size and checksum on the row; what is on Planton-managed storage is read from the rows, and a row written before they were kept is measured", async () => {
    const { org, components } = await orgWithComponent(t.db, { components: 2 });
    const store = new PlantonManagedStore(t.db, org.orgId, "seed");
    const written = new Map<string, StoredState>();
    for (const [i, c] of components.entries()) {
      const k = plantonManagedKey(org.orgId, c.id);
      await store.lock(k, { ID: "seed", Operation: "OperationTypeApply" });
      await store.write(k, storedStateOf(state(3, `lin-${i}`, "x".repeat(100 * (i + 1)))));
      await store.unlock(k, "seed");
      written.set(c.id, (await store.read(k))!);
    }
    const rows = await t.db.select().from(stateObjects).where(eq(stateObjects.orgId, org.orgId));
    for (const r of rows) expect([r.size, r.checksum]).toEqual([written.get(r.componentId)!.bytes.byteLength, written.get(r.componentId)!.checksum]);
    // As a row last written before migration 0024 is: no size kept.
    await t.db.update(stateObjects).set({ size: null }).where(eq(stateObjects.componentId, components[1].id));
    const exact = await unmovedPlantonStates(t.db, org.orgId, true);
    expect(Object.fromEntries(exact.map((s) => [s.componentId, [s.size, s.checksum]]))).toEqual(
      Object.fromEntries(components.map((c) => [c.id, [written.get(c.id)!.bytes.byteLength, written.get(c.id)!.checksum]])),
    );
    // A start's plan needs no exact figure: the kept size, else an estimate from the document.
    const planned = await unmovedPlantonStates(t.db, org.orgId, false);
    expect(planned.find((s) => s.componentId === components[0].id)!.size).toBe(written.get(components[0].id)!.bytes.byteLength);
    expect(planned.find((s) => s.componentId === components[1].id)!.size).toBeGreaterThanOrEqual(written.get(components[1].id)!.bytes.byteLength);

    // The usage: every state, or the first `limit` of them (as the Settings page asks); its totals cover every one.
    const size = [...written.values()].reduce((n, s) => n + s.bytes.byteLength, 0);
    const all = await plantonManagedUsage(t.db, org.actor());
    expect(all.states.map((s) => s.componentId)).toEqual(exact.map((s) => s.componentId));
    for (const limit of [0, 1, 5]) {
      const bounded = await plantonManagedUsage(t.db, org.actor(), { limit });
      expect(bounded.states).toEqual(all.states.slice(0, limit));
      expect(bounded.totals).toEqual({ count: 2, size });
      expect(bounded.byEnvironment).toEqual([{ environment: all.states[0].environment, count: 2, size }]);
      expect(bounded.byProvisioner).toEqual([{ provisioner: "builtin", count: 2, size }]);
    }
  });

  it("lists the organization's states with sizes and deletes; refuses keys of another organization", async () => {
    const { org, components } = await orgWithComponent(t.db, { components: 2 });
    const other = await orgWithComponent(t.db);
    const b = new StateBackend(new PlantonManagedStore(t.db, org.orgId));
    for (const c of components) {
      const k = plantonManagedKey(org.orgId, c.id);
      const lock = await b.lock(k, { Operation: "OperationTypeApply" });
      await b.write(k, state(1, c.id), lock.ID);
      await b.unlock(k, lock.ID);
    }
    const listed = await b.list(`planton-managed/${org.orgId}/`);
    expect(listed.map((o) => o.key).sort()).toEqual(components.map((c) => plantonManagedKey(org.orgId, c.id)).sort());
    // Each listed size is the byte count a read answers.
    for (const o of listed) expect(o.size).toBe((await b.read(o.key))!.bytes.byteLength);
    await b.delete(plantonManagedKey(org.orgId, components[0].id));
    expect(await b.read(plantonManagedKey(org.orgId, components[0].id))).toBeNull();
    expect(await t.db.select().from(stateObjects).where(eq(stateObjects.componentId, components[1].id))).toHaveLength(1);
    await expect(b.read(plantonManagedKey(other.org.orgId, other.component.id))).rejects.toThrow(/in this organization/);
  });
});
