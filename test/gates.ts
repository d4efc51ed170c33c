// Test gates: a `plantontest_gate` resource holds its apply until the test opens it (see
// engine/providers/test-gate.ts), so tests act mid-apply on a signal instead of a clock.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { gateFiles } from "../engine/providers/test-gate";

export interface TestGates {
  dir: string;
  /** The environment that enables gates in a runner (or a console that starts hosted runners). */
  env: { PLANTON_TEST_GATES_DIR: string };
  /** Resolves once an apply is held at gate `name`. */
  held: (name: string) => Promise<void>;
  /** Lets every apply held (or later reaching) gate `name` through. */
  open: (name: string) => void;
  /** Closes gate `name` again for the next run. */
  close: (name: string) => void;
}

export function createTestGates(dir = fs.mkdtempSync(path.join(os.tmpdir(), "planton-gates-"))): TestGates {
  fs.mkdirSync(dir, { recursive: true });
  return {
    dir,
    env: { PLANTON_TEST_GATES_DIR: dir },
    held: (name) =>
      new Promise((resolve) => {
        const { waiting } = gateFiles(dir, name);
        const watcher = fs.watch(dir, () => {
          if (fs.existsSync(waiting)) (watcher.close(), resolve());
        });
        if (fs.existsSync(waiting)) (watcher.close(), resolve());
      }),
    open: (name) => fs.writeFileSync(gateFiles(dir, name).open, ""),
    close: (name) => fs.rmSync(gateFiles(dir, name).open, { force: true }),
  };
}
