import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

export const CATALOG = path.resolve(import.meta.dirname, "../../catalog/modules");

export function tempDir(prefix = "planton-runner-test-"): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), prefix));
}
