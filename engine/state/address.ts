/**
 * Resource instance addresses as OpenTofu writes them: `local_file.page["about"]`,
 * `module.site[0].random_pet.name`, `module.a.module.b.data.local_file.x`.
 */
export type InstanceKey = number | string;

export interface ModuleStep {
  name: string;
  key?: InstanceKey;
}

export interface InstanceAddr {
  module: ModuleStep[];
  mode: "managed" | "data";
  type: string;
  name: string;
  key?: InstanceKey;
}

export function formatKey(key: InstanceKey | undefined): string {
  if (key === undefined) return "";
  return typeof key === "number" ? `[${key}]` : `[${JSON.stringify(key)}]`;
}

/** `module.a["x"].module.b`, or "" for the root module. */
export function formatModule(steps: ModuleStep[]): string {
  return steps.map((s) => `module.${s.name}${formatKey(s.key)}`).join(".");
}

/** The resource part of an address, without its module: `data.local_file.x[0]`. */
export function formatResource(a: Pick<InstanceAddr, "mode" | "type" | "name" | "key">): string {
  return `${a.mode === "data" ? "data." : ""}${a.type}.${a.name}${formatKey(a.key)}`;
}

export function formatAddress(a: InstanceAddr): string {
  const mod = formatModule(a.module);
  return mod ? `${mod}.${formatResource(a)}` : formatResource(a);
}

/** The configuration address (no instance keys): `module.site.local_file.page`. */
export function configAddress(a: InstanceAddr): string {
  return formatAddress({ module: a.module.map((s) => ({ name: s.name })), mode: a.mode, type: a.type, name: a.name });
}

/** Configuration address of an instance address given as text. */
export function configAddressOf(addr: string): string {
  return configAddress(parseAddress(addr));
}

const NAME = /^[A-Za-z_][A-Za-z0-9_-]*/;

/** Parses `name` and an optional `[0]` / `["key"]` at `s[i]`, returning the position after them. */
function step(s: string, i: number, what: string): { name: string; key?: InstanceKey; next: number } {
  const m = NAME.exec(s.slice(i));
  if (!m) throw new Error(`Invalid address "${s}": expected ${what} at position ${i + 1}`);
  let next = i + m[0].length;
  let key: InstanceKey | undefined;
  if (s[next] === "[") {
    const rest = s.slice(next);
    const num = /^\[(\d+)\]/.exec(rest);
    const str = /^\[("(?:[^"\\]|\\.)*")\]/.exec(rest);
    if (num) {
      key = Number(num[1]);
      next += num[0].length;
    } else if (str) {
      key = JSON.parse(str[1]!) as string;
      next += str[0].length;
    } else throw new Error(`Invalid address "${s}": an instance key is a number [0] or a quoted string ["name"]`);
  }
  return { name: m[0], key, next };
}

/** Parses a resource instance address; throws with the expected shape when it is not one. */
export function parseAddress(s: string): InstanceAddr {
  const module: ModuleStep[] = [];
  let i = 0;
  while (s.startsWith("module.", i)) {
    const st = step(s, i + "module.".length, "a module name");
    module.push(st.key === undefined ? { name: st.name } : { name: st.name, key: st.key });
    if (s[st.next] !== ".") throw new Error(`Invalid address "${s}": a module address must be followed by a resource, like module.site.local_file.page`);
    i = st.next + 1;
  }
  let mode: InstanceAddr["mode"] = "managed";
  if (s.startsWith("data.", i)) {
    mode = "data";
    i += "data.".length;
  }
  const t = NAME.exec(s.slice(i));
  if (!t || s[i + t[0].length] !== ".") throw new Error(`Invalid resource address "${s}": use type.name, type.name[0], type.name["key"] or module.name.type.name`);
  const n = step(s, i + t[0].length + 1, "a resource name");
  if (n.next !== s.length) throw new Error(`Invalid resource address "${s}": unexpected "${s.slice(n.next)}"`);
  return { module, mode, type: t[0], name: n.name, ...(n.key !== undefined ? { key: n.key } : {}) };
}

/** Parses a module instance address (`module.a["x"].module.b`); "" is the root module. */
export function parseModuleAddress(s: string): ModuleStep[] {
  if (s === "") return [];
  const out: ModuleStep[] = [];
  let i = 0;
  for (;;) {
    if (!s.startsWith("module.", i)) throw new Error(`Invalid module address "${s}": expected module.name`);
    const st = step(s, i + "module.".length, "a module name");
    out.push(st.key === undefined ? { name: st.name } : { name: st.name, key: st.key });
    if (st.next === s.length) return out;
    if (s[st.next] !== ".") throw new Error(`Invalid module address "${s}"`);
    i = st.next + 1;
  }
}
