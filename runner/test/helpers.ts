import { mkdtemp, readdir, readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

export const CATALOG = path.resolve(import.meta.dirname, "../../catalog/modules");

export async function moduleFiles(name: string): Promise<Record<string, string>> {
  const dir = path.join(CATALOG, name);
  const files: Record<string, string> = {};
  for (const f of (await readdir(dir)).sort()) if (f.endsWith(".tf")) files[f] = await readFile(path.join(dir, f), "utf8");
  return files;
}

export function tempDir(prefix = "planton-runner-test-"): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), prefix));
}
