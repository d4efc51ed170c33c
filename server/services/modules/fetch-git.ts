// Fetching a module version's files from a git repository, once, at registration: the `git` CLI in a
// private temporary folder, with no prompts, no hooks, no submodules, no user or system config, and
// only the https, ssh, git and file protocols (file only under PLANTON_MODULE_LOCAL_ROOTS).
import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { isWithin, realPathOf } from "@/lib/confined-path";
import { MODULE_LIMITS } from "@/lib/modules";
import { checkListing, isSkipped, SourceRefusal } from "./bundle";

export interface GitSource {
  url: string;
  ref: string;
  path?: string;
}

export interface FetchedGit {
  commit: string;
  /** The folder within the repository ("" for its root). */
  path: string;
  entries: { path: string; data: Buffer }[];
}

/** The local folder a `file://` URL or plain path names, or null when the URL is a remote one. */
function localPathOf(url: string): string | null {
  if (url.startsWith("file://")) {
    try {
      return decodeURIComponent(new URL(url).pathname);
    } catch {
      throw new SourceRefusal(`${url} is not a valid file:// URL. Write it as file:///absolute/path/to/repo.git.`);
    }
  }
  return path.isAbsolute(url) ? url : null;
}

/** The URL git is given, or the refusal: remote https/ssh/git URLs, and local repositories only under the operator's folders. */
export function checkGitUrl(url: string, localRoots: string[]): string {
  if (url.startsWith("-") || /\s/.test(url)) throw new SourceRefusal(`${JSON.stringify(url)} is not a repository URL. Give an https://, ssh:// or git:// URL (or git@host:path).`);
  const local = localPathOf(url);
  if (local !== null) {
    // Compared with links resolved (git is given the real path): a link under a root that leads out of it is outside.
    const roots = localRoots.map((r) => realPathOf(r) ?? path.resolve(r));
    const real = realPathOf(local) ?? path.resolve(local);
    if (!roots.some((r) => isWithin(r, real))) {
      throw new SourceRefusal(
        `${url} is a repository on the server's own disk, and ${roots.length ? `it is not under the folders the operator allows (${roots.join(", ")})` : "the operator allows none (PLANTON_MODULE_LOCAL_ROOTS is unset)"}. Register from an https:// or ssh:// URL, or ask the console's operator to list the folder in PLANTON_MODULE_LOCAL_ROOTS.`,
      );
    }
    return `file://${real}`;
  }
  if (/^(https|ssh|git):\/\/[^/]/i.test(url) || /^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^/]/.test(url)) return url;
  if (/^http:\/\//i.test(url)) throw new SourceRefusal(`${url} is plain http, which the server does not fetch from. Use the repository's https:// URL.`);
  throw new SourceRefusal(`${url} is not a repository URL the server fetches from. Give an https://, ssh:// or git:// URL, or git@host:path.`);
}

/** The subfolder, normalized ("" for the root), or the refusal for one that would leave the repository. */
export function checkSubfolder(p: string | undefined): string {
  const parts = (p ?? "").split("/").filter((s) => s && s !== ".");
  if (parts.includes("..") || (p ?? "").startsWith("/") || (p ?? "").includes("\\")) throw new SourceRefusal(`path ${p} leaves the repository. Give a folder inside it, like modules/bucket.`);
  return parts.join("/");
}

function gitEnv(home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    GIT_TERMINAL_PROMPT: "0",
    GIT_ALLOW_PROTOCOL: "https:ssh:git:file",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_SSH_COMMAND: "ssh -o BatchMode=yes",
    GIT_ASKPASS: "/bin/false",
    SSH_ASKPASS: "/bin/false",
    LC_ALL: "C",
  } as unknown as NodeJS.ProcessEnv;
}

const SAFE = ["-c", "core.hooksPath=/dev/null", "-c", "submodule.recurse=false", "-c", "fetch.recurseSubmodules=false", "-c", "protocol.version=2"];

function git(cwd: string, home: string, args: string[]): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile("git", [...SAFE, ...args], { cwd, env: gitEnv(home), timeout: MODULE_LIMITS.gitSeconds * 1000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
      resolve({ ok: !err, stdout: String(stdout), stderr: String(stderr || (err && !("code" in err && typeof err.code === "number") ? err.message : "")) }),
    );
  });
}

const firstLine = (s: string) =>
  s
    .split("\n")
    .map((l) => l.replace(/^(fatal|error): /, "").trim())
    .find(Boolean) ?? "no answer";

/** Reads blobs by id with one `git cat-file --batch`. */
function readBlobs(cwd: string, home: string, ids: string[]): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", [...SAFE, "cat-file", "--batch"], { cwd, env: gitEnv(home) });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => chunks.push(c));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`git cat-file exited with ${code}`));
      const out = Buffer.concat(chunks);
      const blobs = new Map<string, Buffer>();
      let at = 0;
      while (at < out.length) {
        const nl = out.indexOf(10, at);
        const [id, , size] = out.subarray(at, nl).toString().split(" ");
        const n = Number(size);
        blobs.set(id, out.subarray(nl + 1, nl + 1 + n));
        at = nl + 1 + n + 1;
      }
      resolve(blobs);
    });
    child.stdin.end(ids.join("\n") + "\n");
  });
}

/** The files of `ref` (a branch, tag or commit) under `path` in the repository at `url`, or the refusal saying which step failed. */
export async function fetchGitSource(source: GitSource, localRoots: string[]): Promise<FetchedGit> {
  const url = checkGitUrl(source.url, localRoots);
  const sub = checkSubfolder(source.path);
  const ref = source.ref;
  if (ref.startsWith("-") || /[\s~^:?*[\\]|\.\.|@\{/.test(ref)) throw new SourceRefusal(`${ref} is not a branch, tag or commit name.`);
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "planton-module-"));
  try {
    const repo = path.join(home, "repo.git");
    await git(home, home, ["init", "-q", "--bare", repo]);
    const remote = await git(repo, home, ["ls-remote", "--", url]);
    if (!remote.ok) throw new SourceRefusal(`the repository ${source.url} could not be reached (git said: ${firstLine(remote.stderr)}). Check the URL and that the server may read it, then register again.`);
    const refs = remote.stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => l.split("\t")[1]);
    const named = [`refs/heads/${ref}`, `refs/tags/${ref}`, ref].find((r) => refs.includes(r));
    const isCommit = /^[0-9a-f]{7,40}$/i.test(ref);
    let commit: string | null = null;
    if (named || /^[0-9a-f]{40}$/i.test(ref)) {
      const shallow = await git(repo, home, ["fetch", "--quiet", "--depth", "1", "--no-tags", "--no-recurse-submodules", "--", url, named ?? ref]);
      if (shallow.ok) commit = (await git(repo, home, ["rev-parse", "--verify", "FETCH_HEAD^{commit}"])).stdout.trim() || null;
    }
    if (!commit && isCommit) {
      // A commit the server will not hand out by id alone (or an abbreviated one): fetch the history and look for it.
      const full = await git(repo, home, ["fetch", "--quiet", "--no-tags", "--no-recurse-submodules", "--", url, "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"]);
      if (full.ok) {
        const found = await git(repo, home, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`]);
        if (found.ok) commit = found.stdout.trim();
      }
    }
    if (!commit) {
      const known = refs.filter((r) => r.startsWith("refs/heads/") || (r.startsWith("refs/tags/") && !r.endsWith("^{}"))).map((r) => r.replace(/^refs\/(heads|tags)\//, ""));
      throw new SourceRefusal(
        `${source.url} has no branch, tag or commit ${ref}${known.length ? ` (it has ${known.slice(0, 8).join(", ")}${known.length > 8 ? ", …" : ""})` : ""}. Give an existing ref, then register again.`,
      );
    }
    if (sub) {
      const kind = await git(repo, home, ["cat-file", "-t", `${commit}:${sub}`]);
      if (!kind.ok || kind.stdout.trim() !== "tree") throw new SourceRefusal(`commit ${commit.slice(0, 12)} of ${source.url} has no folder ${sub}. Check --path (it is relative to the repository's root), then register again.`);
    }
    const listing = await git(repo, home, ["ls-tree", "-r", "-l", "-z", "--full-tree", commit, "--", ...(sub ? [`${sub}/`] : [])]);
    if (!listing.ok) throw new SourceRefusal(`the files of commit ${commit.slice(0, 12)} could not be listed (git said: ${firstLine(listing.stderr)}).`);
    const where = `${sub || "the repository's root"} at ${commit.slice(0, 12)}`;
    const entries = listing.stdout
      .split("\0")
      .filter(Boolean)
      .map((line) => {
        const [meta, file] = [line.slice(0, line.indexOf("\t")), line.slice(line.indexOf("\t") + 1)];
        const [mode, type, id, size] = meta.split(/\s+/);
        return { mode, type, id, size: Number(size) || 0, path: sub ? file.slice(sub.length + 1) : file };
      })
      .filter((e) => !isSkipped(e.path));
    const odd = entries.find((e) => e.type !== "blob" || e.mode === "120000");
    if (odd) {
      throw new SourceRefusal(`${odd.path} in ${where} is ${odd.type === "commit" ? "a submodule" : "a symbolic link"}, and a module bundle takes plain files only. Copy what it points to into the module, then register again.`);
    }
    checkListing(entries, where);
    const blobs = await readBlobs(repo, home, [...new Set(entries.map((e) => e.id))]);
    return { commit, path: sub, entries: entries.map((e) => ({ path: e.path, data: blobs.get(e.id) ?? Buffer.alloc(0) })) };
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}
