// Test gates: a `plantontest_gate` resource passes at once unless the test armed it, and then holds
// the apply until the test releases it (see engine/providers/test-gate.ts), so tests act mid-apply
// on a signal instead of a clock.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { gateFiles } from "../engine/providers/test-gate";

export interface TestGates {
  dir: string;
  /** The environment that enables gates in a runner (or in a console that starts hosted runners). */
  env: { PLANTON_TEST_GATES_DIR: string };
  /** Arms gate `name`: the next apply to reach it waits there. */
  hold: (name: string) => void;
  /** Resolves once an apply waits at gate `name`. */
  held: (name: string) => Promise<void>;
  /** Lets whatever waits at gate `name` through, and every later apply too. */
  release: (name: string) => void;
}

export function createTestGates(dir = fs.mkdtempSync(path.join(os.tmpdir(), "planton-gates-"))): TestGates {
  fs.mkdirSync(dir, { recursive: true });
  return {
    dir,
    env: { PLANTON_TEST_GATES_DIR: dir },
    hold: (name) => fs.writeFileSync(gateFiles(dir, name).hold, ""),
    held: (name) =>
      new Promise((resolve) => {
        const { waiting } = gateFiles(dir, name);
        const watcher = fs.watch(dir, () => {
          if (fs.existsSync(waiting)) (watcher.close(), resolve());
        });
        if (fs.existsSync(waiting)) (watcher.close(), resolve());
      }),
    release: (name) => fs.rmSync(gateFiles(dir, name).hold, { force: true }),
  };
}
