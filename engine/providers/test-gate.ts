import { existsSync, watch, writeFileSync, rmSync } from "node:fs";
import path from "node:path";
import { planFromSchema, type Provider, type ProviderSchema } from "./provider";

const SCHEMA: ProviderSchema = {
  name: "plantontest",
  source: "registry.opentofu.org/planton/plantontest",
  resources: {
    plantontest_gate: {
      version: 0,
      idAttribute: "name",
      attributes: {
        name: { type: "string", required: true, forceNew: true },
        id: { type: "string", computed: true },
      },
    },
  },
};

/** Marker files: a test writes `<name>.hold` to arm the gate; the gate writes `<name>.waiting` while it holds an apply. */
export const gateFiles = (dir: string, name: string) => ({ hold: path.join(dir, `${name}.hold`), waiting: path.join(dir, `${name}.waiting`) });

/** Resolves once `file` is gone, watching its folder (no polling clock). */
function whenGone(file: string): Promise<void> {
  return new Promise((resolve) => {
    const watcher = watch(path.dirname(file), () => {
      if (existsSync(file)) return;
      watcher.close();
      resolve();
    });
    if (!existsSync(file)) {
      watcher.close();
      resolve();
    }
  });
}

/** Holds while the test has gate `name` armed, with its waiting marker written meanwhile. */
export async function holdWhileArmed(dir: string, name: string): Promise<void> {
  const files = gateFiles(dir, name);
  if (!existsSync(files.hold)) return;
  writeFileSync(files.waiting, new Date().toISOString());
  await whenGone(files.hold);
  rmSync(files.waiting, { force: true });
}

/**
 * Test-only: `plantontest_gate` passes at once unless the test armed it, and then holds its create
 * until the test releases it, so a test can act while an apply is in flight without waiting on a clock. Registered only when the runner is given a
 * gates folder (PLANTON_TEST_GATES_DIR, set by the test harness); modules elsewhere cannot use it.
 */
export function createTestGateProvider(dir: string): Provider {
  return {
    schema: () => SCHEMA,
    configure: async () => {},
    // Armed as `<name>.refresh`, the gate also holds a refresh that reads it, so a test can act mid-step with steps still to come.
    read: async ({ state }) => {
      await holdWhileArmed(dir, `${String(state.name)}.refresh`);
      return { state };
    },
    plan: async ({ prior, config }) => planFromSchema(SCHEMA.resources.plantontest_gate!, prior, config),
    apply: async ({ prior, planned }) => {
      if (!planned) return { state: null };
      if (!prior) await holdWhileArmed(dir, String(planned.name));
      return { state: { ...planned, id: String(planned.name) } };
    },
    importState: async ({ id }) => ({ state: { name: id, id } }),
  };
}
