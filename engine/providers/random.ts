import { randomBytes, randomInt } from "node:crypto";
import { planFromSchema, type Provider, type ProviderSchema } from "./provider";
import { ADJECTIVES, ADVERBS, NAMES } from "./words";
import type { Attrs, Value } from "../values";

const SCHEMA: ProviderSchema = {
  name: "random",
  source: "registry.opentofu.org/hashicorp/random",
  resources: {
    random_id: {
      version: 0,
      idAttribute: "id",
      attributes: {
        byte_length: { type: "number", required: true, forceNew: true },
        keepers: { type: "map", optional: true, forceNew: true },
        prefix: { type: "string", optional: true, forceNew: true },
        id: { type: "string", computed: true },
        b64_url: { type: "string", computed: true },
        b64_std: { type: "string", computed: true },
        hex: { type: "string", computed: true },
        dec: { type: "string", computed: true },
      },
    },
    random_pet: {
      version: 0,
      idAttribute: "id",
      attributes: {
        length: { type: "number", optional: true, forceNew: true, default: 2 },
        separator: { type: "string", optional: true, forceNew: true, default: "-" },
        prefix: { type: "string", optional: true, forceNew: true },
        keepers: { type: "map", optional: true, forceNew: true },
        id: { type: "string", computed: true },
      },
    },
    random_password: {
      version: 3,
      idAttribute: "id",
      attributes: {
        length: { type: "number", required: true, forceNew: true },
        special: { type: "bool", optional: true, forceNew: true, default: true },
        upper: { type: "bool", optional: true, forceNew: true, default: true },
        lower: { type: "bool", optional: true, forceNew: true, default: true },
        numeric: { type: "bool", optional: true, forceNew: true, default: true },
        min_special: { type: "number", optional: true, forceNew: true, default: 0 },
        min_upper: { type: "number", optional: true, forceNew: true, default: 0 },
        min_lower: { type: "number", optional: true, forceNew: true, default: 0 },
        min_numeric: { type: "number", optional: true, forceNew: true, default: 0 },
        override_special: { type: "string", optional: true, forceNew: true },
        keepers: { type: "map", optional: true, forceNew: true },
        result: { type: "string", computed: true, sensitive: true },
        id: { type: "string", computed: true },
      },
    },
  },
};

function idAttrs(bytes: Buffer, prefix: Value): Attrs {
  const p = typeof prefix === "string" ? prefix : "";
  const b64url = bytes.toString("base64url");
  return {
    id: b64url,
    b64_url: p + b64url,
    b64_std: p + bytes.toString("base64"),
    hex: p + bytes.toString("hex"),
    dec: p + BigInt(bytes.length ? "0x" + bytes.toString("hex") : "0").toString(10),
  };
}

function pick<T>(list: T[]): T {
  return list[randomInt(list.length)]!;
}

function pet(length: number, separator: string, prefix: Value): string {
  const words: string[] = [];
  for (let i = 0; i < length - 2; i++) words.push(pick(ADVERBS));
  if (length >= 2) words.push(pick(ADJECTIVES));
  words.push(pick(NAMES));
  if (typeof prefix === "string" && prefix !== "") words.unshift(prefix);
  return words.join(separator);
}

function password(a: Attrs): string {
  const length = Number(a.length);
  const sets: { chars: string; min: number }[] = [];
  if (a.lower !== false) sets.push({ chars: "abcdefghijklmnopqrstuvwxyz", min: Number(a.min_lower ?? 0) });
  if (a.upper !== false) sets.push({ chars: "ABCDEFGHIJKLMNOPQRSTUVWXYZ", min: Number(a.min_upper ?? 0) });
  if (a.numeric !== false) sets.push({ chars: "0123456789", min: Number(a.min_numeric ?? 0) });
  if (a.special !== false) {
    const chars = typeof a.override_special === "string" ? a.override_special : "!@#$%&*()-_=+[]{}<>:?";
    if (chars) sets.push({ chars, min: Number(a.min_special ?? 0) });
  }
  if (sets.length === 0) throw new Error("random_password: every character class is turned off; enable at least one of lower, upper, numeric, special");
  const out: string[] = [];
  for (const s of sets) for (let i = 0; i < s.min; i++) out.push(pick([...s.chars]));
  const all = sets.map((s) => s.chars).join("");
  while (out.length < length) out.push(all[randomInt(all.length)]!);
  for (let i = out.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out.join("");
}

/** hashicorp/random: values are made once at create and kept in state; nothing remote to read. */
export function createRandomProvider(): Provider {
  return {
    schema: () => SCHEMA,
    configure: async () => {},
    read: async ({ state }) => ({ state }),
    plan: async ({ type, prior, config }) => planFromSchema(SCHEMA.resources[type]!, prior, config),
    apply: async ({ type, prior, planned }) => {
      if (!planned) return { state: null };
      if (prior && planned.id === prior.id && typeof prior.id === "string") return { state: { ...planned } };
      if (type === "random_id") {
        const n = Number(planned.byte_length);
        if (!Number.isInteger(n) || n < 1) throw new Error("random_id: byte_length must be a whole number of at least 1");
        return { state: { ...planned, ...idAttrs(randomBytes(n), planned.prefix ?? null) } };
      }
      if (type === "random_pet") {
        const id = pet(Number(planned.length ?? 2), String(planned.separator ?? "-"), planned.prefix ?? null);
        return { state: { ...planned, id } };
      }
      const length = Number(planned.length);
      if (!Number.isInteger(length) || length < 1) throw new Error("random_password: length must be a whole number of at least 1");
      return { state: { ...planned, result: password(planned), id: "none" } };
    },
    importState: async ({ type, id }) => {
      const base: Attrs = {};
      for (const [k, a] of Object.entries(SCHEMA.resources[type]!.attributes)) base[k] = a.default ?? null;
      if (type === "random_id") {
        const bytes = Buffer.from(id, "base64url");
        return { state: { ...base, byte_length: bytes.length, ...idAttrs(bytes, null) } };
      }
      if (type === "random_password") return { state: { ...base, length: [...id].length, result: id, id: "none" } };
      return { state: { ...base, id, length: id.split("-").length } };
    },
  };
}
