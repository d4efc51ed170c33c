// apply's state saved as resource-level changes (persistDelta): each change holds only the resources
// that moved, and the changes replayed onto what the backend held give exactly the engine's final state.
import { describe, expect, it } from "vitest";
import { applyStateDelta, resourceKey, stateDigest, type DeltaState } from "../../lib/state-delta";
import { canonicalJson } from "../../lib/canonical-json";
import { apply, plan } from "../index";
import { emptyState, setInstance, snapshotState } from "../state/state";
import type { StateChange, StateV4 } from "../types";
import { applied, writeModule } from "./helpers";

const CHAIN = (n: number, extra = "") => `
resource "random_id" "a" {
  count       = ${n}
  byte_length = 4
}
resource "random_password" "secret" {
  length = 12
}
output "first" {
  value = random_id.a[0].hex
}
${extra}`;

/** The changes replayed, as the console compacts them, onto what the backend held. */
function replay(base: StateV4 | null, changes: StateChange[]): DeltaState {
  let s: DeltaState | null = base;
  for (const c of changes) {
    expect(c.baseSerial).toBe(s?.serial ?? 0);
    s = applyStateDelta(s ?? { serial: 0, lineage: c.delta.lineage, resources: [] }, c.delta);
  }
  return s!;
}

describe("apply's state as resource-level changes", () => {
  it("sends each resource as it completes, never the whole document, and the changes add up to the final state", async () => {
    const moduleDir = await writeModule({ "main.tf": CHAIN(3) });
    const p = await plan({ moduleDir, state: null });
    const changes: StateChange[] = [];
    const r = await apply({ state: null, parallelism: 1, persistDelta: (c) => void changes.push(structuredClone(c)) }, p.plan);
    expect(r.status).toBe("applied");
    // The first change starts the document (its fields), later ones carry one resource entry each.
    expect(changes[0].delta.fields).toMatchObject({ version: 4 });
    expect(changes.every((c) => !("resources" in (c.delta.fields ?? {})))).toBe(true);
    expect(changes.map((c) => c.delta.resources.map((x) => x.key))).toEqual([["random_id.a"], ["random_id.a"], ["random_id.a"], ["random_password.secret"], []]);
    // The last save only sets the outputs.
    expect(Object.keys(changes.at(-1)!.delta.fields ?? {})).toEqual(["outputs"]);
    expect(changes.map((c) => c.delta.serial)).toEqual([1, 2, 3, 4, 5]);
    expect(stateDigest(replay(null, changes)).checksum).toBe(stateDigest(r.state).checksum);
  });

  it("on a stored state, a change is made from what the backend holds; a removed resource is a null entry and the order follows the engine's", async () => {
    const moduleDir = await writeModule({ "main.tf": CHAIN(2) });
    const stored = await applied({ moduleDir, state: null });
    const next = await writeModule({ "main.tf": CHAIN(1, `resource "random_id" "b" {\n  byte_length = 2\n}\n`).replace("length = 12", "length = 12\n  special = false") });
    const p = await plan({ moduleDir: next, state: stored });
    const changes: StateChange[] = [];
    const r = await apply({ state: stored, persistDelta: (c) => void changes.push(structuredClone(c)) }, p.plan);
    expect(r.status).toBe("applied");
    expect(changes[0].baseSerial).toBe(stored.serial);
    const touched = changes.flatMap((c) => c.delta.resources);
    expect(touched.some((t) => t.key === resourceKey({ type: "random_id", name: "b" }) && t.entry)).toBe(true);
    const replayed = replay(stored, changes);
    expect(replayed.resources.map((x) => `${x.type}.${x.name}`)).toEqual(r.state.resources.map((x) => `${x.type}.${x.name}`));
    expect(stateDigest(replayed).checksum).toBe(stateDigest(r.state).checksum);
  });

  it("a destroy removes each resource with a null entry, and the replay is the engine's empty state", async () => {
    const moduleDir = await writeModule({ "main.tf": CHAIN(2) });
    const stored = await applied({ moduleDir, state: null });
    const p = await plan({ moduleDir, state: stored }, { destroy: true });
    const changes: StateChange[] = [];
    const r = await apply({ state: stored, persistDelta: (c) => void changes.push(structuredClone(c)) }, p.plan);
    expect(r.status).toBe("applied");
    expect(changes.flatMap((c) => c.delta.resources).filter((x) => x.entry === null)).toHaveLength(2);
    expect(stateDigest(replay(stored, changes)).checksum).toBe(stateDigest(r.state).checksum);
  });
  it("resources changed in place by parallel walkers, with slow saves between them, add up to the engine's final state", async () => {
    const mod = (v: string) => `resource "terraform_data" "d" {\n  count = 24\n  input = "${v}-\${count.index}"\n}\nresource "random_id" "r" {\n  count = 12\n  byte_length = 2\n}\n`;
    const stored = await applied({ moduleDir: await writeModule({ "main.tf": mod("a") }), state: null });
    const next = await writeModule({ "main.tf": mod("b").replace("count = 12", "count = 18") });
    const p = await plan({ moduleDir: next, state: stored });
    const changes: StateChange[] = [];
    // Each save yields to the walkers, so several resources change while a save is on its way.
    const slowSave = async (c: StateChange) => {
      changes.push(structuredClone(c));
      await new Promise((resolve) => setImmediate(resolve));
    };
    const r = await apply({ state: stored, parallelism: 10, persistDelta: slowSave }, p.plan);
    expect(r.status).toBe("applied");
    expect(stateDigest(replay(stored, changes)).checksum).toBe(stateDigest(r.state).checksum);
    // Every save but the first was compared on the entries the walk touched; each change still moved the serial by one.
    expect(changes.map((c) => c.delta.serial)).toEqual(changes.map((_, i) => stored.serial + i + 1));
  });

  it("a walk over a count sends each instance it wrote, not the whole entry each time", async () => {
    const mod = (v: string) => `resource "terraform_data" "d" {\n  count = 20\n  input = "${v}-\${count.index}"\n}\n`;
    const stored = await applied({ moduleDir: await writeModule({ "main.tf": mod("a") }), state: null });
    const p = await plan({ moduleDir: await writeModule({ "main.tf": mod("b") }), state: stored });
    const changes: StateChange[] = [];
    const r = await apply({ state: stored, parallelism: 1, persistDelta: (c) => void changes.push(structuredClone(c)) }, p.plan);
    expect(r.status).toBe("applied");
    const written = changes.flatMap((c) => c.delta.resources);
    // One instance a change, each instance once (in the walk's order).
    expect(written.map((x) => x.instances?.set.length)).toEqual(Array(20).fill(1));
    expect(written.map((x) => (x.instances!.set[0] as { index_key: number }).index_key).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(stateDigest(replay(stored, changes)).checksum).toBe(stateDigest(r.state).checksum);
  });
});

describe("apply's snapshots", () => {
  const write = (s: StateV4, addr: string, value: string) => setInstance(s, addr, "p", { schema_version: 0, attributes: { id: value }, sensitive_attributes: [], dependencies: [] });

  it("share the entries no walker touched, and never an entry or list written after them", () => {
    const working = emptyState("L");
    for (let i = 0; i < 3; i++) write(working, `terraform_data.a[${i}]`, `a${i}`);
    write(working, "terraform_data.b", "b");
    const first = snapshotState(working, working, null);
    const firstBytes = canonicalJson(first);
    write(working, "terraform_data.a[1]", "changed");
    write(working, "terraform_data.a[3]", "added");
    const second = snapshotState(working, first, new Set(["terraform_data.a"]));
    // The earlier snapshot still holds what it held; the later one has the writes.
    expect(canonicalJson(first)).toBe(firstBytes);
    expect(canonicalJson(second)).toBe(canonicalJson(working));
    const [a1, b1] = first.resources;
    const [a2, b2] = second.resources;
    expect(b2).toBe(b1);
    expect(a2).not.toBe(a1);
    expect(a2).not.toBe(working.resources[0]);
    expect(a2.instances).not.toBe(working.resources[0].instances);
    // An instance no one wrote is shared; the written one is the new object.
    expect(a2.instances[0]).toBe(a1.instances[0]);
    expect(a2.instances[1]).not.toBe(a1.instances[1]);
    // Writes after the snapshot never reach it.
    write(working, "terraform_data.a[0]", "later");
    write(working, "terraform_data.b", "later");
    expect(canonicalJson(second)).not.toBe(canonicalJson(working));
    expect((second.resources[0].instances[0].attributes as { id: string }).id).toBe("a0");
    expect((second.resources[1].instances[0].attributes as { id: string }).id).toBe("b");
  });
});
