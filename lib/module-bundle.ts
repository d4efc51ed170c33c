// A module bundle's checksum, the one definition: the server computes it when it resolves a job's
// module (preflight), the runner checks it before it writes the files, and jobs record it.
import { createHash } from "node:crypto";

/** SHA-256 hex of a module bundle in its canonical form: sorted paths, each `path\0content\0`. */
export function bundleSha256(files: Record<string, string>): string {
  const h = createHash("sha256");
  for (const p of Object.keys(files).sort()) h.update(`${p}\0${files[p]}\0`, "utf8");
  return h.digest("hex");
}
