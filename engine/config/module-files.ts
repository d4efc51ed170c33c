// A module folder's files as text, by slash-separated relative path: the `*.tf` files the module is
// parsed from, and the rest (templates, JSON, YAML…) that file(), templatefile() and fileset() read.
// They travel in the saved plan, so apply reads exactly what plan read.
import { lstat, readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { isStateOrPlanFile } from "../../lib/modules";

const MAX_FILES = 2000;
const MAX_FILE_BYTES = 1024 * 1024;

/** Reads a module folder; hidden entries (.terraform, .git), state and plan files, symbolic links, large and non-UTF-8 files are left out. */
export async function readModuleFiles(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  let count = 0;
  const walk = async (rel: string): Promise<void> => {
    for (const name of (await readdir(path.join(dir, rel))).sort()) {
      // State and plan files may sit beside a module on a laptop; they are never part of it, and may hold secrets.
      if (name.startsWith(".") || isStateOrPlanFile(name) || count >= MAX_FILES) continue;
      const relPath = rel ? `${rel}/${name}` : name;
      const st = await lstat(path.join(dir, relPath));
      if (st.isDirectory()) await walk(relPath);
      else if (st.isFile() && st.size <= MAX_FILE_BYTES) {
        const bytes = await readFile(path.join(dir, relPath));
        const text = bytes.toString("utf8");
        if (!Buffer.from(text, "utf8").equals(bytes)) continue;
        files[relPath] = text;
        count++;
      }
    }
  };
  await walk("");
  return files;
}

/** The `*.tf` files of the module itself (not of folders inside it), sorted. */
export const configFileNames = (files: Record<string, string>): string[] =>
  Object.keys(files)
    .filter((n) => n.endsWith(".tf") && !n.includes("/"))
    .sort();
