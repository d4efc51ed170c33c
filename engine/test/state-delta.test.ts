// apply's state saved as resource-level changes (persistDelta): each change holds only the resources
// that moved, and the changes replayed onto what the backend held give exactly the engine's final state.
import { describe, expect, it } from "vitest";
import { applyStateDelta, resourceKey, stateDigest, type DeltaState } from "../../lib/state-delta";
import { apply, plan } from "../index";
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
});
