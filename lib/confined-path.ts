// Whether a path lies under a folder, as written and with symbolic links resolved: the one rule for every
// place the console and its runners take a folder on their own disk from a user (a hosted runner's `local`
// connection root, a module registered by file:// URL, a `local` state backend's folder). Server and runner
// code only (it reads the file system).
import fs from "node:fs";
import path from "node:path";

/** `p` is `base` or below it (both absolute; compared as written). */
export function isWithin(base: string, p: string): boolean {
  const rel = path.relative(base, p);
  return !(rel === ".." || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel));
}

function isLink(p: string): boolean {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

/** `p` (made absolute) with the links along its existing part resolved; null when one of them leads to nothing. */
export function realPathOf(p: string): string | null {
  let head = path.resolve(p);
  const missing: string[] = [];
  while (!fs.existsSync(head) && !isLink(head) && path.dirname(head) !== head) {
    missing.unshift(path.basename(head));
    head = path.dirname(head);
  }
  try {
    return path.join(fs.realpathSync(head), ...missing);
  } catch {
    return null;
  }
}

/** `p` lies under `base` as written and with links resolved: no `..` and no link leads out of it. */
export function confined(base: string, p: string): boolean {
  const realBase = realPathOf(base);
  const realP = realPathOf(p);
  return isWithin(path.resolve(base), path.resolve(p)) && realBase !== null && realP !== null && isWithin(realBase, realP);
}
