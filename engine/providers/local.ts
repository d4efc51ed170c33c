import { createHash } from "node:crypto";
import { closeSync, constants, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { planFromSchema, type Provider, type ProviderSchema } from "./provider";
import { isUnknown, type Attrs } from "../values";

const SCHEMA: ProviderSchema = {
  name: "local",
  source: "registry.opentofu.org/hashicorp/local",
  resources: {
    local_file: {
      version: 0,
      idAttribute: "id",
      attributes: {
        filename: { type: "string", required: true, forceNew: true },
        content: { type: "string", optional: true, default: "" },
        file_permission: { type: "string", optional: true, default: "0644" },
        directory_permission: { type: "string", optional: true, default: "0755" },
        id: { type: "string", computed: true },
        content_sha256: { type: "string", computed: true },
        content_md5: { type: "string", computed: true },
      },
    },
    local_directory: {
      version: 0,
      idAttribute: "id",
      attributes: {
        path: { type: "string", required: true, forceNew: true },
        permission: { type: "string", optional: true, default: "0755" },
        id: { type: "string", computed: true },
      },
    },
  },
  dataSources: {
    local_file: fileDataSchema(false),
    local_sensitive_file: fileDataSchema(true),
  },
};

/** hashicorp/local's file data sources: the file's content and its digests (all sensitive for local_sensitive_file). */
function fileDataSchema(sensitive: boolean) {
  const computed = { type: "string" as const, computed: true, ...(sensitive ? { sensitive: true } : {}) };
  return {
    version: 0,
    idAttribute: "id",
    attributes: {
      filename: { type: "string" as const, required: true },
      content: computed,
      content_base64: computed,
      id: { type: "string" as const, computed: true },
      content_md5: { type: "string" as const, computed: true },
      content_sha1: { type: "string" as const, computed: true },
      content_sha256: { type: "string" as const, computed: true },
      content_base64sha256: { type: "string" as const, computed: true },
      content_sha512: { type: "string" as const, computed: true },
      content_base64sha512: { type: "string" as const, computed: true },
    },
  };
}

const digest = (algo: string, s: string | Buffer, enc: "hex" | "base64" = "hex") => createHash(algo).update(s).digest(enc);
const contentHashes = (content: string): Attrs => ({ id: digest("sha1", content), content_sha256: digest("sha256", content), content_md5: digest("md5", content) });
const mode = (m: number) => (m & 0o777).toString(8).padStart(4, "0");

function parseMode(v: unknown, address: string, attr: string): number {
  if (typeof v !== "string" || !/^0?[0-7]{3}$/.test(v)) throw new Error(`${address}: ${attr} must be an octal string such as "0644", got ${JSON.stringify(v)}`);
  return parseInt(v, 8);
}

const errno = (e: unknown) => (e as NodeJS.ErrnoException).code;

/** `p` lies in `base` or is `base` (both already absolute). */
function within(base: string, p: string): boolean {
  const rel = path.relative(base, p);
  return !(rel === ".." || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel));
}

/** A symbolic link whose target does not exist (or loops): nothing is created through it. */
class LinkToNothing extends Error {
  constructor(readonly link: string) {
    super(`symbolic link ${link} leads to nothing`);
  }
}

/**
 * `p` with every symbolic link along it resolved, and the part that does not exist yet appended as written.
 *
 * This provider's file calls are synchronous on purpose (all but a folder's recursive removal): each is a few
 * microseconds on a local disk, where a promise call cost 40–50 µs of the main thread (measured on node 20) and a
 * round trip through libuv's thread pool, which on a busy machine waits for that thread to be scheduled. An apply
 * makes six or more per file: with 50 files in a chain, the synchronous calls took a 151-resource apply from
 * 281–389 ms to 214–287 ms (p50 of four runs each, bench/jobs.ts throughput phase).
 */
function resolveLinks(p: string): string {
  let head = p;
  const missing: string[] = [];
  while (!lstatSync(head, { throwIfNoEntry: false })) {
    const up = path.dirname(head);
    if (up === head) break;
    missing.unshift(path.basename(head));
    head = up;
  }
  try {
    return path.join(realpathSync.native(head), ...missing);
  } catch (e) {
    // lstat found it, realpath cannot follow it: a dangling link (or a loop).
    if (errno(e) === "ENOENT" || errno(e) === "ELOOP") throw new LinkToNothing(head);
    throw e;
  }
}

/** Opens `file` without following a link at that name; `ELOOP` means one appeared there. */
const openNoFollow = (file: string, flags: number, fileMode?: number) => openSync(file, flags | constants.O_NOFOLLOW, fileMode);

/** `fn` with the descriptor `fd`, closed afterwards. */
function withFd<T>(fd: number, fn: (fd: number) => T): T {
  try {
    return fn(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * hashicorp/local, confined to a root directory. Every path is resolved under the root given by
 * the connection, symbolic links included: a path that leads outside it, or through a link to
 * nothing, is refused, and files are opened without following a link at their own name. With
 * `ownerOnly`, what it writes is readable by its user only (group and other permission bits dropped).
 */
/** The local provider's confined file access, shared with providers that write files under the same root (archive). */
export interface LocalFiles {
  /** The file's bytes; a missing file is an error naming the path and the root. */
  readBytes(address: string, p: unknown): Promise<Buffer>;
  /** Writes the file (creating its folders), as local_file does. */
  writeBytes(address: string, p: unknown, bytes: Uint8Array, fileMode: number, dirMode: number): Promise<void>;
}

export function createLocalProvider(): Provider & { files: LocalFiles } {
  let root: string | null = null;
  let ownerOnly = false;
  const granted = (m: number) => (ownerOnly ? m & 0o700 : m);
  /** The permission to record: the one asked for when the object has what the provider grants for it. */
  const recorded = (actual: number, asked: unknown) => {
    if (!ownerOnly) return mode(actual);
    const want = typeof asked === "string" && /^0?[0-7]{3}$/.test(asked) ? parseInt(asked, 8) : null;
    return want !== null && granted(want) === (actual & 0o777) ? (asked as string) : mode(actual);
  };

  /** The real path (no links) of `p` under the root, or an error that names the path and the root. */
  async function inside(address: string, p: unknown): Promise<string> {
    if (root === null) {
      throw new Error(`${address}: the local provider has no root directory; set one on the component's connection (local.root)`);
    }
    if (typeof p !== "string" || p === "") throw new Error(`${address}: the path must be a non-empty string`);
    const outside = () => new Error(`${address}: path ${p} is outside the connection root ${root}; use a path inside it`);
    const abs = path.resolve(root, p);
    if (!within(root, abs)) throw outside();
    let realRoot: string;
    let real: string;
    try {
      realRoot = resolveLinks(root);
      real = resolveLinks(abs);
    } catch (e) {
      if (!(e instanceof LinkToNothing)) throw e;
      throw new Error(`${address}: path ${p} goes through the symbolic link ${e.link}, whose target does not exist; the local provider creates nothing through a link. Remove the link or use another path under the connection root ${root}`);
    }
    if (!within(realRoot, real)) throw outside();
    return real;
  }

  /** A link swapped in after the check makes the open fail with ELOOP: said as the path being outside. */
  function noLink<T>(address: string, p: unknown, fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      if (errno(e) === "ELOOP") throw new Error(`${address}: path ${String(p)} is outside the connection root ${root}; use a path inside it`);
      throw e;
    }
  }

  async function readFileState(address: string, state: Attrs): Promise<Attrs | null> {
    const real = await inside(address, state.filename);
    return noLink(address, state.filename, () => {
      let fd;
      try {
        // O_NONBLOCK: a FIFO planted at the name must not hang the read (it is then not a file).
        fd = openNoFollow(real, constants.O_RDONLY | constants.O_NONBLOCK);
      } catch (e) {
        if (errno(e) === "ENOENT" || errno(e) === "EISDIR") return null;
        throw e;
      }
      return withFd(fd, (fd) => {
        const st = fstatSync(fd);
        if (!st.isFile()) return null;
        const content = readFileSync(fd, "utf8");
        return { ...state, content, file_permission: recorded(st.mode, state.file_permission), ...contentHashes(content) };
      });
    });
  }

  /** Creates the folders `dir` needs (each `dirMode`), then checks no link was swapped in along the way. */
  function folders(address: string, p: unknown, dir: string, dirMode: number): void {
    mkdirSync(dir, { recursive: true, mode: granted(dirMode) });
    if (realpathSync.native(dir) !== dir) throw new Error(`${address}: path ${String(p)} is outside the connection root ${root}; use a path inside it`);
  }

  const notAFile = (address: string, p: unknown) => new Error(`${address}: ${String(p)} is not a regular file; the local provider reads and writes regular files only. Remove what is there or use another path under the connection root ${root}`);

  function writeFileAt(address: string, p: unknown, file: string, content: string | Uint8Array, fileMode: number): void {
    noLink(address, p, () => {
      let fd: number;
      try {
        // O_NONBLOCK: a FIFO planted at the name must not hang the write — and with these calls synchronous, the
        // whole process — when nothing reads it (the open then fails with ENXIO); a regular file ignores the flag.
        fd = openNoFollow(file, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NONBLOCK, granted(fileMode));
      } catch (e) {
        if (errno(e) === "ENXIO") throw notAFile(address, p);
        throw e;
      }
      withFd(fd, (fd) => {
        if (!fstatSync(fd).isFile()) throw notAFile(address, p);
        fchmodSync(fd, granted(fileMode));
        writeFileSync(fd, content);
      });
    });
  }

  function chmodFolder(address: string, p: unknown, dir: string, dirMode: number): void {
    noLink(address, p, () => withFd(openNoFollow(dir, constants.O_RDONLY | constants.O_DIRECTORY), (fd) => fchmodSync(fd, granted(dirMode))));
  }

  const files: LocalFiles = {
    readBytes: async (address, p) => {
      const real = await inside(address, p);
      return noLink(address, p, () => {
        let fd;
        try {
          fd = openNoFollow(real, constants.O_RDONLY | constants.O_NONBLOCK);
        } catch (e) {
          if (errno(e) === "ENOENT") throw new Error(`${address}: no file exists at ${String(p)} under the connection root ${root}; create it first or fix the path`);
          throw e;
        }
        return withFd(fd, (fd) => {
          if (!fstatSync(fd).isFile()) throw notAFile(address, p);
          return readFileSync(fd);
        });
      });
    },
    writeBytes: async (address, p, bytes, fileMode, dirMode) => {
      const abs = await inside(address, p);
      folders(address, p, path.dirname(abs), dirMode);
      writeFileAt(address, p, abs, bytes, fileMode);
    },
  };

  return {
    files,
    schema: () => SCHEMA,
    configure: async (config) => {
      root = typeof config.root === "string" && config.root !== "" ? path.resolve(config.root) : null;
      ownerOnly = config.ownerOnly === true;
    },
    read: async ({ address, type, state }) => {
      if (type === "local_file") return { state: await readFileState(address, state) };
      const abs = await inside(address, state.path);
      try {
        const st = lstatSync(abs);
        if (!st.isDirectory()) return { state: null };
        return { state: { ...state, permission: recorded(st.mode, state.permission) } };
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "ENOENT") return { state: null };
        throw e;
      }
    },
    plan: async ({ address, type, prior, config }) => {
      const result = planFromSchema(SCHEMA.resources[type]!, prior, config);
      const p = result.planned;
      if (type === "local_file") {
        if (!isUnknown(p.filename)) await inside(address, p.filename);
        if (!isUnknown(p.file_permission)) parseMode(p.file_permission, address, "file_permission");
        if (typeof p.content === "string") Object.assign(p, contentHashes(p.content));
      } else {
        if (!isUnknown(p.path)) {
          await inside(address, p.path);
          p.id = p.path;
        }
        if (!isUnknown(p.permission)) parseMode(p.permission, address, "permission");
      }
      return result;
    },
    apply: async ({ address, type, prior, planned }) => {
      if (type === "local_file") {
        if (!planned) {
          rmSync(await inside(address, prior!.filename), { force: true });
          return { state: null };
        }
        const abs = await inside(address, planned.filename);
        const content = String(planned.content ?? "");
        folders(address, planned.filename, path.dirname(abs), parseMode(planned.directory_permission, address, "directory_permission"));
        writeFileAt(address, planned.filename, abs, content, parseMode(planned.file_permission, address, "file_permission"));
        return { state: { ...planned, content, ...contentHashes(content) } };
      }
      if (!planned) {
        await rm(await inside(address, prior!.path), { recursive: true, force: true });
        return { state: null };
      }
      const abs = await inside(address, planned.path);
      const dirMode = parseMode(planned.permission, address, "permission");
      folders(address, planned.path, abs, dirMode);
      chmodFolder(address, planned.path, abs, dirMode);
      return { state: { ...planned, id: planned.path } };
    },
    readData: async ({ address, config }) => {
      const bytes = await files.readBytes(address, config.filename);
      return {
        state: {
          filename: config.filename ?? null,
          content: bytes.toString("utf8"),
          content_base64: bytes.toString("base64"),
          id: digest("sha1", bytes),
          content_md5: digest("md5", bytes),
          content_sha1: digest("sha1", bytes),
          content_sha256: digest("sha256", bytes),
          content_base64sha256: digest("sha256", bytes, "base64"),
          content_sha512: digest("sha512", bytes),
          content_base64sha512: digest("sha512", bytes, "base64"),
        },
      };
    },
    importState: async ({ address, type, id }) => {
      if (type === "local_file") {
        const base: Attrs = { filename: id, content: "", file_permission: "0644", directory_permission: "0755" };
        const state = await readFileState(address, base);
        if (!state) throw new Error(`${address}: cannot import: no file exists at ${id} under the connection root ${root}`);
        return { state };
      }
      const abs = await inside(address, id);
      const st = lstatSync(abs, { throwIfNoEntry: false });
      if (!st?.isDirectory()) throw new Error(`${address}: cannot import: no directory exists at ${id} under the connection root ${root}`);
      return { state: { path: id, permission: mode(st.mode), id } };
    },
  };
}
