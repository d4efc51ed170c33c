// The data folder (PLANTON_DATA_DIR) holds the embedded database, the server key and the local
// infrastructure hosted runners write: private to the console's user, folders 0700 and files 0600.
import fs from "node:fs";
import path from "node:path";

/** Group and other permission bits: none may be set on anything in the data folder. */
const OTHERS = 0o077;

/**
 * Creates `dir` 0700 when missing and takes group and other permissions off everything in it
 * (symbolic links are not followed). Returns what it changed, as paths relative to `dir` ("." for itself).
 */
export function makeDataFolderPrivate(dir: string): string[] {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const repaired: string[] = [];
  const visit = (p: string) => {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(p);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
      throw err;
    }
    if (st.isSymbolicLink()) return;
    if (st.mode & OTHERS) {
      fs.chmodSync(p, st.mode & 0o700);
      repaired.push(path.relative(dir, p) || ".");
    }
    if (st.isDirectory()) for (const name of fs.readdirSync(p)) visit(path.join(p, name));
  };
  visit(dir);
  return repaired;
}

/** One log line naming what was made private: top-level entries, with how many entries under each. */
export function describeRepair(dir: string, repaired: string[]): string {
  const byTop = new Map<string, number>();
  for (const p of repaired) {
    const top = p.split(path.sep)[0]!;
    byTop.set(top, (byTop.get(top) ?? 0) + 1);
  }
  const tops = [...byTop].sort(([a], [b]) => (a === "." ? -1 : b === "." ? 1 : a.localeCompare(b)));
  const names = tops.map(([top, n]) => (top === "." ? "the folder itself" : n === 1 && repaired.includes(top) ? top : `${top} (${n} ${n === 1 ? "entry" : "entries"})`));
  return `The data folder ${dir} had entries that group or others could read; they are private again (folders 0700, files 0600): ${names.join(", ")}.`;
}
