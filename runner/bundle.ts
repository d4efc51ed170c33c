import { bundleSha256 } from "../lib/module-bundle";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";


export class BundleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BundleError";
  }
}

/** Checks the bundle against its declared checksum, then writes its files under `dir`. */
export async function writeBundle(dir: string, files: Record<string, string>, expectedSha256: string): Promise<void> {
  const actual = bundleSha256(files);
  if (actual !== expectedSha256.toLowerCase()) {
    throw new BundleError(
      `Nothing ran: the module bundle does not match its checksum (expected sha256 ${expectedSha256}, got ${actual}). ` +
        "The module was changed or damaged on its way to the runner; run the job again, and if it repeats, check the module's registry entry.",
    );
  }
  const root = path.resolve(dir);
  for (const [rel, content] of Object.entries(files)) {
    const target = path.resolve(root, rel);
    // A bundle path may not climb out of the workspace.
    if (path.isAbsolute(rel) || !target.startsWith(root + path.sep)) {
      throw new BundleError(`Nothing ran: the module bundle names a file outside the module folder (${rel}); module files must use relative paths.`);
    }
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, content);
  }
}
