// A state change at resource level (issue 15): what the builtin engine sends as each resource
// completes, instead of the whole document, and what the console replays onto the stored state to
// compact a journal into one full version. One rule for the engine (which makes and checks deltas),
// the runner (which sends them) and the server (which applies them), so both sides build the same bytes.
import { createHash } from "node:crypto";
import { z } from "zod";
import { canonicalJson } from "./canonical-json";

/** A v4 state as far as deltas need it: resources are entries keyed by module, mode, type and name. */
export interface DeltaState {
  serial: number;
  lineage: string;
  resources: DeltaResource[];
}

export interface DeltaResource {
  module?: string;
  mode?: string;
  type: string;
  name: string;
  instances: unknown[];
}

/**
 * Some instances of a resource entry that changed: `set` replaces the instance with the same index_key or
 * is added in the kept order, `removed` names instances by index_key (null: the one without a key). A
 * walk over a `count` of 500 sends the instance it wrote, not the 500 (each change the size of the change).
 */
export interface InstancesPatch {
  set: unknown[];
  removed: (string | number | null)[];
}

/**
 * A resource entry's change: its whole entry with all its instances (null when it is gone), or, when only
 * some of its instances changed and applying them gives the engine's entry exactly, those instances.
 */
export type ResourceChangeOfState = { key: string; entry: DeltaResource | null; instances?: undefined } | { key: string; instances: InstancesPatch; entry?: undefined };

/**
 * From one state to the next: every resource entry that changed, the top-level fields that changed
 * (serial always), and, only when applying the entries would not give the engine's order of resources, that order.
 */
export interface StateDelta {
  serial: number;
  lineage: string;
  resources: ResourceChangeOfState[];
  fields?: Record<string, unknown>;
  order?: string[];
}

/** The one key of a resource entry in a state: its address, as OpenTofu writes it (`module.site.data.local_file.x`). */
export function resourceKey(r: Pick<DeltaResource, "module" | "mode" | "type" | "name">): string {
  return `${r.module ? `${r.module}.` : ""}${r.mode === "data" ? "data." : ""}${r.type}.${r.name}`;
}

/** The order resources are kept in, as OpenTofu writes them (root module first, data before managed, by name). */
export function resourceOrder(r: Pick<DeltaResource, "module" | "mode" | "type" | "name">): string {
  return `${r.module ?? ""}\u0000${r.mode === "data" ? 0 : 1}\u0000${r.type}.${r.name}`;
}

export function sortResources<T extends Pick<DeltaResource, "module" | "mode" | "type" | "name">>(resources: T[]): void {
  resources.sort((a, b) => resourceOrder(a).localeCompare(resourceOrder(b)));
}

type IndexKey = string | number | undefined;
const indexKeyOf = (instance: unknown): IndexKey => (instance as { index_key?: string | number }).index_key;

/** The order instances are kept in within an entry, as OpenTofu writes them: numeric keys ascending, string keys by name. */
export function compareInstanceKeys(a: IndexKey, b: IndexKey): number {
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a ?? "").localeCompare(String(b ?? ""));
}

/** `entry` with `patch` applied (not changed): instances replaced in place, removed, or added in the kept order. */
function patchEntry(entry: DeltaResource, patch: InstancesPatch): DeltaResource {
  const removed = new Set(patch.removed);
  const instances = removed.size ? entry.instances.filter((x) => !removed.has(indexKeyOf(x) ?? null)) : [...entry.instances];
  const at = new Map(instances.map((x, i) => [indexKeyOf(x) ?? null, i]));
  let added = false;
  for (const x of patch.set) {
    const i = at.get(indexKeyOf(x) ?? null);
    if (i !== undefined) instances[i] = x;
    else {
      at.set(indexKeyOf(x) ?? null, instances.push(x) - 1);
      added = true;
    }
  }
  if (added) instances.sort((a, b) => compareInstanceKeys(indexKeyOf(a), indexKeyOf(b)));
  return { ...entry, instances };
}

/** The one checksum of a state's content: SHA-256 of its canonical JSON (so jsonb's key order never changes it). */
export function stateDigest(state: unknown): { checksum: string; size: number } {
  const bytes = canonicalJson(state);
  return { checksum: createHash("sha256").update(bytes).digest("hex"), size: Buffer.byteLength(bytes) };
}

/** `delta` applied to `base` (not changed): entries replaced in place, removed, or added in the kept order. */
export function applyStateDelta<S extends DeltaState>(base: S, delta: StateDelta): S {
  if (base.lineage !== delta.lineage) {
    throw new Error(`The state change is for lineage ${delta.lineage}, but the state has lineage ${base.lineage}; it was not applied.`);
  }
  const next = { ...base, ...(delta.fields ?? {}), serial: delta.serial, lineage: base.lineage } as S;
  let resources = [...base.resources];
  let added = false;
  for (const { key, entry, instances } of delta.resources) {
    const i = resources.findIndex((r) => resourceKey(r) === key);
    if (instances) {
      if (i < 0) throw new Error(`The state change updates instances of ${key}, which the state does not have; it was not applied.`);
      resources[i] = patchEntry(resources[i], instances);
    } else if (!entry) {
      if (i >= 0) resources.splice(i, 1);
    } else if (i >= 0) resources[i] = entry;
    else {
      resources.push(entry);
      added = true;
    }
  }
  if (delta.order) {
    const byKey = new Map(resources.map((r) => [resourceKey(r), r]));
    resources = delta.order.map((k) => byKey.get(k)).filter((r): r is DeltaResource => !!r);
  } else if (added) sortResources(resources);
  next.resources = resources;
  return next;
}

/**
 * What changed from `from` to `to` (same lineage); `to` is exactly `applyStateDelta(from, delta)`.
 * `touched`, when the caller knows it, names the only resource entries that may have changed in place:
 * the others present on both sides are taken as equal without encoding them (entries added or removed are
 * always found), so a walk that saves after each resource does not re-encode the whole state each time.
 * An entry or instance object shared by both sides (the engine's snapshots share what did not change) is
 * equal without being encoded, so a change costs what changed, not the size of its entry or the state.
 */
export function diffStates(from: DeltaState, to: DeltaState, touched?: ReadonlySet<string>): StateDelta {
  const before = new Map(from.resources.map((r) => [resourceKey(r), r]));
  const after = new Set<string>();
  const resources: StateDelta["resources"] = [];
  let reshaped = false;
  for (const r of to.resources) {
    const key = resourceKey(r);
    after.add(key);
    const old = before.get(key);
    if (!old) {
      resources.push({ key, entry: r });
      reshaped = true;
    } else if (old !== r && (!touched || touched.has(key))) {
      const change = entryChange(key, old, r);
      if (change) resources.push(change);
    }
  }
  for (const key of before.keys()) {
    if (after.has(key)) continue;
    resources.push({ key, entry: null });
    reshaped = true;
  }
  const fields: Record<string, unknown> = {};
  const a = from as unknown as Record<string, unknown>;
  const b = to as unknown as Record<string, unknown>;
  for (const f of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (f === "resources" || f === "serial" || f === "lineage") continue;
    // A field the next state lacks is left as it was (a v4 state never drops one); null is a value.
    if (f in b && (!(f in a) || (a[f] !== b[f] && canonicalJson(a[f]) !== canonicalJson(b[f])))) fields[f] = b[f];
  }
  const delta: StateDelta = { serial: to.serial, lineage: to.lineage, resources, ...(Object.keys(fields).length ? { fields } : {}) };
  // With no entry added or removed, applying the delta keeps `from`'s order (entries are replaced in place):
  // the orders are compared key by key, without rebuilding the state.
  const wanted = () => to.resources.map(resourceKey);
  if (reshaped) {
    if (applyStateDelta(from, delta).resources.map(resourceKey).join("\u0001") !== wanted().join("\u0001")) delta.order = wanted();
  } else if (from.resources.some((r, i) => r !== to.resources[i] && resourceKey(r) !== resourceKey(to.resources[i]))) delta.order = wanted();
  return delta;
}

/** One entry's change from `old` to `now` (same key), or null when they are equal: the instances that changed, when that rebuilds `now` exactly. */
function entryChange(key: string, old: DeltaResource, now: DeltaResource): ResourceChangeOfState | null {
  const { instances: oldInstances, ...oldFields } = old;
  const { instances: newInstances, ...newFields } = now;
  if (canonicalJson(oldFields) !== canonicalJson(newFields)) return { key, entry: now };
  // The walk's usual case: the same instances in the same places, some of them written (shared ones are equal).
  if (oldInstances.length === newInstances.length && oldInstances.every((x, i) => x === newInstances[i] || indexKeyOf(x) === indexKeyOf(newInstances[i]))) {
    const written = newInstances.filter((x, i) => x !== oldInstances[i] && canonicalJson(x) !== canonicalJson(oldInstances[i]));
    if (!written.length) return null;
    return written.length >= newInstances.length ? { key, entry: now } : { key, instances: { set: written, removed: [] } };
  }
  const olds = new Map(oldInstances.map((x) => [indexKeyOf(x) ?? null, x]));
  const set: unknown[] = [];
  for (const x of newInstances) {
    const was = olds.get(indexKeyOf(x) ?? null);
    if (was !== x && (was === undefined || canonicalJson(was) !== canonicalJson(x))) set.push(x);
  }
  const kept = new Set(newInstances.map((x) => indexKeyOf(x) ?? null));
  const removed = [...olds.keys()].filter((k) => !kept.has(k));
  const patch: InstancesPatch = { set, removed };
  // The patch must give the engine's instances in the engine's order (a stored entry may be kept in another order).
  const rebuilt = patchEntry(old, patch).instances;
  const sameOrder = rebuilt.length === newInstances.length && rebuilt.every((x, i) => indexKeyOf(x) === indexKeyOf(newInstances[i]));
  if (!set.length && !removed.length && sameOrder) return null;
  // A patch as large as the entry saves nothing (a resource without count or for_each): the entry is sent whole.
  if (!sameOrder || set.length + removed.length >= newInstances.length) return { key, entry: now };
  return { key, instances: patch };
}

const deltaResource = z.looseObject({ module: z.string().optional(), mode: z.string().optional(), type: z.string().min(1), name: z.string().min(1), instances: z.array(z.unknown()) });

/** A state change as the runner API takes it. */
export const stateDeltaSchema = z.object({
  serial: z.number().int().min(0),
  lineage: z.string().min(1),
  resources: z.array(
    z.union([
      z.object({ key: z.string().min(1), entry: deltaResource.nullable() }).refine((r) => !r.entry || resourceKey(r.entry) === r.key, "a resource entry's key must be its module, mode, type and name"),
      z.object({ key: z.string().min(1), instances: z.object({ set: z.array(z.looseObject({ index_key: z.union([z.string(), z.number()]).optional() })), removed: z.array(z.union([z.string(), z.number(), z.null()])) }) }),
    ]),
  ),
  fields: z.record(z.string(), z.unknown()).optional(),
  order: z.array(z.string()).optional(),
});

/** The steps whose state is saved as changes (the builtin engine's apply and destroy). */
export const JOURNAL_STEPS = ["apply", "destroy"] as const;

/** POST …/state/journal: changes in order, each numbered within the attempt's step (a retried batch is applied once). */
/** The most changes one request may carry (a batch, or the tail that goes with the commit). */
export const JOURNAL_ENTRIES_MOST = 2000;
const journalEntries = z.array(z.object({ seq: z.number().int().positive(), baseSerial: z.number().int().min(0), delta: stateDeltaSchema })).min(1).max(JOURNAL_ENTRIES_MOST);
const journalLockId = z.string().min(1).max(200);
export const stateJournalBatch = z.object({ step: z.enum(JOURNAL_STEPS), lockId: journalLockId, entries: journalEntries });
export interface StateJournalBatch {
  step: (typeof JOURNAL_STEPS)[number];
  lockId: string;
  entries: { seq: number; baseSerial: number; delta: StateDelta }[];
}

/**
 * POST …/state/journal/commit: compacts the step's changes; `checksum` is the engine's final state's stateDigest.
 * The step's last changes may come with it (`entries` under `lockId`, kept as a batch would be): one request, not two.
 */
export const stateJournalCommit = z
  .object({ step: z.enum(JOURNAL_STEPS), checksum: z.string().regex(/^[0-9a-f]{64}$/).optional(), lockId: journalLockId.optional(), entries: journalEntries.optional() })
  .refine((c) => !c.entries || c.lockId, { message: "changes sent with the commit need the lockId they were made under", path: ["lockId"] });
export interface StateJournalCommit {
  step: StateJournalBatch["step"];
  checksum?: string;
  lockId?: string;
  entries?: StateJournalBatch["entries"];
}
export type StateJournalCommitResult = { entries: number; written: boolean; match: boolean; serial?: number; checksum?: string };

/** The log line a step's compacted state changes leave in the job's events (the benchmark reads it back with JOURNAL_LINE). */
export function journalLine(changes: number, requests: number, serial: number | undefined): string {
  return `State saved as ${changes} resource change(s) sent in ${requests} request(s), compacted by the console into one state write${serial === undefined ? "" : ` (serial ${serial})`}.`;
}
export const JOURNAL_LINE = /^State saved as (\d+) resource change\(s\) sent in (\d+) request\(s\)/;
