import { randomUUID } from "node:crypto";
import type { StateInstance, StateResource, StateV4 } from "../types";
import { canonicalJson } from "../values";
import { ENGINE_VERSION } from "../version";

export function emptyState(lineage: string = randomUUID()): StateV4 {
  return { version: 4, terraform_version: ENGINE_VERSION, serial: 0, lineage, outputs: {}, resources: [], check_results: null };
}

export function cloneState(s: StateV4): StateV4 {
  return structuredClone(s);
}

/** Same content apart from serial and engine version? (Then serial need not move.) */
export function sameContent(a: StateV4, b: StateV4): boolean {
  const strip = (s: StateV4) => canonicalJson({ ...s, serial: 0, terraform_version: "" });
  return strip(a) === strip(b);
}

/** Instance address: type.name or type.name[0]. */
export function instanceAddress(r: Pick<StateResource, "type" | "name">, inst: Pick<StateInstance, "index_key">): string {
  return `${r.type}.${r.name}${inst.index_key !== undefined ? `[${inst.index_key}]` : ""}`;
}

export function parseInstanceAddress(addr: string): { type: string; name: string; index?: number } {
  const m = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)(?:\[(\d+)\])?$/.exec(addr);
  if (!m) throw new Error(`Invalid resource address "${addr}": use type.name or type.name[index]`);
  return { type: m[1]!, name: m[2]!, index: m[3] !== undefined ? Number(m[3]) : undefined };
}

export function listInstances(s: StateV4): { address: string; resource: StateResource; instance: StateInstance }[] {
  return s.resources.flatMap((resource) => resource.instances.map((instance) => ({ address: instanceAddress(resource, instance), resource, instance })));
}

export function findInstance(s: StateV4, addr: string): StateInstance | undefined {
  return listInstances(s).find((x) => x.address === addr)?.instance;
}

/** Writes (or with null, removes) one instance, keeping resources sorted like OpenTofu does. */
export function setInstance(s: StateV4, addr: string, provider: string, instance: StateInstance | null): void {
  const { type, name, index } = parseInstanceAddress(addr);
  let res = s.resources.find((r) => r.type === type && r.name === name);
  if (!res) {
    if (!instance) return;
    res = { mode: "managed", type, name, provider, instances: [] };
    s.resources.push(res);
    s.resources.sort((a, b) => `${a.type}.${a.name}`.localeCompare(`${b.type}.${b.name}`));
  }
  const i = res.instances.findIndex((x) => x.index_key === index);
  if (instance) {
    const inst = index !== undefined ? { index_key: index, ...instance } : instance;
    if (i >= 0) res.instances[i] = inst;
    else res.instances.push(inst);
    res.instances.sort((a, b) => (a.index_key ?? 0) - (b.index_key ?? 0));
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
