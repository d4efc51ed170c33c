import { planFromSchema, type Provider, type ProviderSchema } from "./provider";

const SCHEMA: ProviderSchema = {
  name: "time",
  source: "registry.opentofu.org/hashicorp/time",
  resources: {
    time_sleep: {
      version: 0,
      idAttribute: "id",
      attributes: {
        create_duration: { type: "string", optional: true },
        destroy_duration: { type: "string", optional: true },
        triggers: { type: "map", optional: true, forceNew: true },
        id: { type: "string", computed: true },
      },
    },
  },
};

/** "30s", "1m30s", "500ms" → milliseconds, as the time provider reads durations. */
export function parseDuration(address: string, text: unknown): number {
  if (text === null || text === undefined || text === "") return 0;
  const s = String(text);
  const parts = [...s.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (!parts.length || parts.map((p) => p[0]).join("") !== s) throw new Error(`${address}: ${JSON.stringify(s)} is not a duration; write it like 30s, 1m30s or 500ms`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
  return parts.reduce((ms, p) => ms + Number(p[1]) * unit[p[2] as keyof typeof unit], 0);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The time provider's time_sleep: waits on create (and destroy), e.g. for something to settle. */
export function createTimeProvider(): Provider {
  return {
    schema: () => SCHEMA,
    configure: async () => {},
    read: async ({ state }) => ({ state }),
    plan: async ({ address, prior, config }) => {
      parseDuration(address, config.create_duration);
      parseDuration(address, config.destroy_duration);
      return planFromSchema(SCHEMA.resources.time_sleep!, prior, config);
    },
    apply: async ({ address, prior, planned }) => {
      if (!planned) {
        await sleep(parseDuration(address, prior?.destroy_duration));
        return { state: null };
      }
      if (!prior) await sleep(parseDuration(address, planned.create_duration));
      return { state: { ...planned, id: prior && typeof prior.id === "string" ? prior.id : new Date().toISOString() } };
    },
    importState: async ({ id }) => ({ state: { id, create_duration: null, destroy_duration: null, triggers: null } }),
  };
}
