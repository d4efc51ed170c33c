// A module bundle from the files a source gave (a git commit's tree, an archive's entries): the limits
// every bundle is held to (lib/modules.ts), text files only, tool folders left out, its checksum.
import type { Provisioner } from "@/lib/catalog";
import { bundleSha256 } from "@/lib/module-bundle";
import { isStateOrPlanFile, MODULE_LIMITS, MODULE_SKIPPED_FOLDERS } from "@/lib/modules";

/** Why a source was not registered: the message completes "Nothing was registered: …". */
export class SourceRefusal extends Error {}

export interface Bundle {
  files: Record<string, string>;
  sha256: string;
  size: number;
  fileCount: number;
  readme: string;
}

const MiB = (n: number) => `${(n / 1024 / 1024).toFixed(n % (1024 * 1024) ? 1 : 0)} MiB`;

/** Whether a path lies in a folder a bundle never takes in (.git, .terraform), or is a state or plan file. */
export const isSkipped = (p: string) => p.split("/").some((seg) => (MODULE_SKIPPED_FOLDERS as readonly string[]).includes(seg)) || isStateOrPlanFile(p);

/** Checks the file count and sizes before anything is read (a git tree's listing, an archive's directory). */
export function checkListing(entries: { path: string; size: number }[], from: string) {
  const kept = entries.filter((e) => !isSkipped(e.path));
  if (kept.length > MODULE_LIMITS.files) throw new SourceRefusal(`${from} has ${kept.length} files, more than a module may have (${MODULE_LIMITS.files}). Register the module's own folder (a subfolder, or a smaller archive).`);
  const big = kept.find((e) => e.size > MODULE_LIMITS.fileBytes);
  if (big) throw new SourceRefusal(`${big.path} in ${from} is ${MiB(big.size)}, more than a module's file may be (${MiB(MODULE_LIMITS.fileBytes)}). Keep large files out of the module.`);
  const total = kept.reduce((n, e) => n + e.size, 0);
  if (total > MODULE_LIMITS.bundleBytes) throw new SourceRefusal(`${from} holds ${MiB(total)} of files, more than a module bundle may (${MiB(MODULE_LIMITS.bundleBytes)}). Register the module's own folder, without build output or vendored files.`);
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The bundle of a module's files, or the refusal naming what is wrong with them. */
export function makeBundle(entries: { path: string; data: Buffer }[], provisioner: Provisioner, from: string): Bundle {
  const kept = entries.filter((e) => !isSkipped(e.path));
  checkListing(kept.map((e) => ({ path: e.path, size: e.data.length })), from);
  const files: Record<string, string> = {};
  const binary: string[] = [];
  for (const e of kept) {
    let text: string | null = null;
    try {
      text = e.data.includes(0) ? null : utf8.decode(e.data);
    } catch {}
    if (text === null) binary.push(e.path);
    else files[e.path] = text;
  }
  if (binary.length) {
    throw new SourceRefusal(
      `a module bundle holds UTF-8 text files only, and ${from} has ${binary.length === 1 ? "a file" : `${binary.length} files`} that ${binary.length === 1 ? "is" : "are"} not: ${binary.slice(0, 5).join(", ")}${binary.length > 5 ? ", …" : ""}. Remove ${binary.length === 1 ? "it" : "them"} from the module.`,
    );
  }
  const paths = Object.keys(files);
  if (!paths.length) throw new SourceRefusal(`${from} has no files. Point it at the module's folder.`);
  if (provisioner !== "pulumi" && !paths.some((p) => !p.includes("/") && p.endsWith(".tf"))) {
    throw new SourceRefusal(`${from} has no .tf files at its top level, and a ${provisioner} module is its folder's .tf files. Point it at the module's folder (for git, --path <subfolder>).`);
  }
  const readme = paths.find((p) => /^readme(\.md)?$/i.test(p));
  return {
    files,
    sha256: bundleSha256(files),
    size: Object.values(files).reduce((n, t) => n + Buffer.byteLength(t, "utf8"), 0),
    fileCount: paths.length,
    readme: readme ? files[readme] : "",
  };
}
