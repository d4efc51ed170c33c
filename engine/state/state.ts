import { randomUUID } from "node:crypto";
import type { StateInstance, StateResource, StateV4 } from "../types";
import { compareInstanceKeys, resourceKey, sortResources } from "../../lib/state-delta";
import { canonicalJson } from "../values";
import { ENGINE_VERSION } from "../version";
import { formatAddress, formatModule, parseAddress, parseModuleAddress, type InstanceKey } from "./address";

export function emptyState(lineage: string = randomUUID()): StateV4 {
  return { version: 4, terraform_version: ENGINE_VERSION, serial: 0, lineage, outputs: {}, resources: [], check_results: null };
}

export function cloneState(s: StateV4): StateV4 {
  return structuredClone(s);
}

/**
 * A copy of `s` that later writes to `s` never reach, sharing with `previous` (an earlier snapshot of `s`)
 * each resource entry not in `touched` (keys as `resourceKey` gives them; null: any entry may have changed).
 * setInstance changes an entry and its instance list in place but never an instance object, so a changed
 * entry is copied with its list and shares its instance objects: a snapshot costs the entries that changed.
 */
export function snapshotState(s: StateV4, previous: StateV4, touched: ReadonlySet<string> | null): StateV4 {
  const kept = touched ? new Map(previous.resources.map((r) => [resourceKey(r), r])) : new Map<string, StateResource>();
  const resources = s.resources.map((r) => {
    const key = resourceKey(r);
    return (!touched?.has(key) && kept.get(key)) || { ...r, instances: [...r.instances] };
  });
  return { ...s, resources };
}

/** Same content apart from serial and engine version? (Then serial need not move.) */
export function sameContent(a: StateV4, b: StateV4): boolean {
  const strip = (s: StateV4) => canonicalJson({ ...s, serial: 0, terraform_version: "" });
  return strip(a) === strip(b);
}

/** Instance address as OpenTofu writes it: `type.name`, `type.name[0]`, `module.site.data.local_file.x["k"]`. */
export function instanceAddress(r: Pick<StateResource, "type" | "name" | "module" | "mode">, inst: Pick<StateInstance, "index_key">): string {
  return formatAddress({ module: parseModuleAddress(r.module ?? ""), mode: r.mode ?? "managed", type: r.type, name: r.name, ...(inst.index_key !== undefined ? { key: inst.index_key } : {}) });
}

/** Type, name and instance key of an address (with its module path and mode). */
export function parseInstanceAddress(addr: string): { type: string; name: string; index?: InstanceKey; module: string; mode: "managed" | "data" } {
  const a = parseAddress(addr);
  return { type: a.type, name: a.name, index: a.key, module: formatModule(a.module), mode: a.mode };
}

export function listInstances(s: StateV4): { address: string; resource: StateResource; instance: StateInstance }[] {
  return s.resources.flatMap((resource) => resource.instances.map((instance) => ({ address: instanceAddress(resource, instance), resource, instance })));
}

/** One instance by address: its resource entry by type, name, module and mode, then its key (no address is formatted). */
export function findInstance(s: StateV4, addr: string): StateInstance | undefined {
  const { type, name, index, module, mode } = parseInstanceAddress(addr);
  return s.resources.find((r) => r.type === type && r.name === name && (r.module ?? "") === module && (r.mode ?? "managed") === mode)?.instances.find((x) => x.index_key === index);
}

/** Writes (or with null, removes) one instance, keeping resources sorted like OpenTofu does. */
export function setInstance(s: StateV4, addr: string, provider: string, instance: StateInstance | null): void {
  const { type, name, index, module, mode } = parseInstanceAddress(addr);
  const same = (r: StateResource) => r.type === type && r.name === name && (r.module ?? "") === module && (r.mode ?? "managed") === mode;
  let res = s.resources.find(same);
  if (!res) {
    if (!instance) return;
    res = { ...(module ? { module } : {}), mode, type, name, provider, instances: [] };
    s.resources.push(res);
    sortResources(s.resources);
  }
  const i = res.instances.findIndex((x) => x.index_key === index);
  if (instance) {
    const { index_key: _drop, ...rest } = instance;
    const inst = index !== undefined ? { index_key: index, ...rest } : rest;
    if (i >= 0) res.instances[i] = inst;
    else res.instances.push(inst);
    res.instances.sort((a, b) => compareInstanceKeys(a.index_key, b.index_key));
  } else if (i >= 0) res.instances.splice(i, 1);
  if (res.instances.length === 0) s.resources = s.resources.filter((r) => r !== res);
}

/** Checks the shape of a state document read from storage. */
export function assertStateV4(v: unknown): asserts v is StateV4 {
  const s = v as Partial<StateV4>;
  if (!s || typeof s !== "object" || s.version !== 4 || typeof s.lineage !== "string" || typeof s.serial !== "number" || !Array.isArray(s.resources)) {
    throw new Error("Unsupported state: expected an OpenTofu version-4 state document (version 4, lineage, serial, resources)");
  }
}
