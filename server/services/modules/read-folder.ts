// A builtin module's files, read from the folder the platform ships it in (catalog/modules/<name>).
import fs from "node:fs";
import path from "node:path";
import { bundleSha256 } from "@/lib/module-bundle";

export interface ModuleBundle {
  files: Record<string, string>;
  sha256: string;
}

/** Reads a builtin module's files from its `source` folder (relative to the server's working folder); null when there is no such folder. */
export function readModuleBundle(source: string): ModuleBundle | null {
  if (/^[a-z]+:/i.test(source)) return null;
  const root = path.resolve(/*turbopackIgnore: true*/ process.cwd(), source);
  if (!fs.existsSync(root) || !fs.statSync(root).isDirectory()) return null;
  const files: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) files[path.relative(root, full).split(path.sep).join("/")] = fs.readFileSync(full, "utf8");
    }
  };
  walk(root);
  return { files, sha256: bundleSha256(files) };
}
