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

/** Marker files a test watches and writes: `<name>.waiting` while a gate holds an apply, `<name>.open` to let it through. */
export const gateFiles = (dir: string, name: string) => ({ waiting: path.join(dir, `${name}.waiting`), open: path.join(dir, `${name}.open`) });

/** Resolves once `file` exists, watching its folder (no polling clock). */
function whenExists(file: string): Promise<void> {
  return new Promise((resolve) => {
    const watcher = watch(path.dirname(file), () => {
      if (!existsSync(file)) return;
      watcher.close();
      resolve();
    });
    if (existsSync(file)) {
      watcher.close();
      resolve();
    }
  });
}

/**
 * Test-only: `plantontest_gate` holds its create until the test opens it, so a test can act while
 * an apply is in flight without waiting on a clock. Registered only when the runner is given a
 * gates folder (PLANTON_TEST_GATES_DIR, set by the test harness); modules elsewhere cannot use it.
 */
export function createTestGateProvider(dir: string): Provider {
  return {
    schema: () => SCHEMA,
    configure: async () => {},
    read: async ({ state }) => ({ state }),
    plan: async ({ prior, config }) => planFromSchema(SCHEMA.resources.plantontest_gate!, prior, config),
    apply: async ({ prior, planned }) => {
      if (!planned) return { state: null };
      if (!prior) {
        const files = gateFiles(dir, String(planned.name));
        writeFileSync(files.waiting, new Date().toISOString());
        await whenExists(files.open);
        rmSync(files.waiting, { force: true });
      }
      return { state: { ...planned, id: String(planned.name) } };
    },
    importState: async ({ id }) => ({ state: { name: id, id } }),
  };
}
