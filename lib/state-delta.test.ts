// A state change as the console replays it: what diffStates makes, applied onto the state it was made
// from, gives the next state exactly — also when it carries only the instances of an entry that changed.
import { describe, expect, it } from "vitest";
import { canonicalJson } from "./canonical-json";
import { applyStateDelta, diffStates, stateDeltaSchema, type DeltaResource, type DeltaState } from "./state-delta";

const inst = (key: number | string | undefined, value: string) => ({ ...(key === undefined ? {} : { index_key: key }), schema_version: 0, attributes: { id: value } });
const entry = (name: string, instances: unknown[], extra: Partial<DeltaResource> & { provider?: string } = {}): DeltaResource => ({ mode: "managed", type: "terraform_data", name, provider: "p", instances, ...extra }) as DeltaResource;
const state = (serial: number, resources: DeltaResource[]): DeltaState => ({ serial, lineage: "L", resources });
const counted = (n: number, value = (i: number) => `v${i}`) => Array.from({ length: n }, (_, i) => inst(i, value(i)));

/** The delta applied as the console applies it (after a JSON round trip, as it is stored) gives `to`. */
function expectReplays(from: DeltaState, to: DeltaState) {
  const delta = diffStates(from, to);
  const stored = JSON.parse(JSON.stringify(delta));
  expect(stateDeltaSchema.parse(stored)).toEqual(stored);
  expect(canonicalJson(applyStateDelta(from, stored))).toBe(canonicalJson(to));
  return delta;
}

describe("diffStates and applyStateDelta", () => {
  it("one instance of a counted entry changed: only that instance is sent, and the replay is the next state", () => {
    const from = state(1, [entry("d", counted(50)), entry("one", [inst(undefined, "x")])]);
    const to = state(2, [entry("d", counted(50, (i) => (i === 7 ? "changed" : `v${i}`))), from.resources[1]]);
    const delta = expectReplays(from, to);
    expect(delta.resources).toEqual([{ key: "terraform_data.d", instances: { set: [inst(7, "changed")], removed: [] } }]);
  });

  it("an instance added between others and one removed: the patch keeps the engine's order", () => {
    const from = state(1, [entry("d", [inst(0, "a"), inst(1, "b"), inst(3, "d"), inst(4, "e")])]);
    const to = state(2, [entry("d", [inst(0, "a"), inst(2, "c"), inst(3, "d"), inst(4, "e")])]);
    const delta = expectReplays(from, to);
    expect(delta.resources).toEqual([{ key: "terraform_data.d", instances: { set: [inst(2, "c")], removed: [1] } }]);
    const keyed = state(1, [entry("m", [inst("about", "a"), inst("contact", "c"), inst("team", "t")])]);
    expect(expectReplays(keyed, state(2, [entry("m", [inst("about", "a"), inst("blog", "b"), inst("contact", "c"), inst("team", "t")])])).resources[0].instances).toBeDefined();
  });

  it("sends the whole entry when a patch would not rebuild it exactly or would be as large", () => {
    // A stored entry kept in another order than the engine's: the patch alone would leave that order.
    const unsorted = state(1, [entry("d", [inst(1, "b"), inst(0, "a"), inst(2, "c")])]);
    const sorted = state(2, [entry("d", [inst(0, "a"), inst(1, "b2"), inst(2, "c")])]);
    expect(expectReplays(unsorted, sorted).resources).toEqual([{ key: "terraform_data.d", entry: sorted.resources[0] }]);
    // The same instances, reordered only.
    expect(expectReplays(unsorted, state(2, [entry("d", [inst(0, "a"), inst(1, "b"), inst(2, "c")])])).resources[0].entry).toBeDefined();
    // The entry's own fields changed.
    const moved = state(2, [entry("d", counted(3), { provider: "q" })]);
    expect(expectReplays(state(1, [entry("d", counted(3))]), moved).resources[0].entry).toEqual(moved.resources[0]);
    // A resource without count: its one instance is its entry.
    expect(expectReplays(state(1, [entry("one", [inst(undefined, "x")])]), state(2, [entry("one", [inst(undefined, "y")])])).resources[0].entry).toBeDefined();
  });

  it("a delta made with the touched entries and shared objects equals the full comparison's", () => {
    const a = entry("a", counted(10));
    const b = entry("b", counted(10));
    const from = state(1, [a, b]);
    // As the engine's snapshots: b is the same object, a is a new entry sharing its unchanged instances.
    const to = state(2, [{ ...a, instances: a.instances.map((x, i) => (i === 4 ? inst(4, "new") : x)) }, b]);
    const full = diffStates(structuredClone(from), structuredClone(to));
    expect(diffStates(from, to, new Set(["terraform_data.a"]))).toEqual(full);
    expect(full.resources).toEqual([{ key: "terraform_data.a", instances: { set: [inst(4, "new")], removed: [] } }]);
    expect(diffStates(from, state(2, [a, b]))).toEqual({ serial: 2, lineage: "L", resources: [] });
  });

  it("refuses instances for an entry the state does not have", () => {
    expect(() => applyStateDelta(state(1, []), { serial: 2, lineage: "L", resources: [{ key: "terraform_data.d", instances: { set: [inst(0, "a")], removed: [] } }] })).toThrow(
      /updates instances of terraform_data\.d, which the state does not have; it was not applied/,
    );
  });
});
