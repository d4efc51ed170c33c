// The `local` kind: states as files in a directory (a self-hosted runner's own disk). Keys are relative
// paths under the root; the lock is an exclusively created `<key>.lock.info` holding OpenTofu's lock
// info JSON, the layout the builtin engine's local backend uses, so either can read the other's lock.
import { randomUUID } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, readFile as readFileCallback, readFileSync } from "node:fs";
import { link, mkdir, open, readdir, rename, rm, stat, unlink } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { sha256Of } from "../lib/artifacts";
import { lockInfoOf, StateLockedError } from "./rules";
import { STORE_VERSION, storedStateRead, whoAmI } from "./store-common";
import type { LockInfo, LockRequest, StateObjectInfo, StateStore, StoredState } from "./types";

const LOCK_SUFFIX = ".lock.info";
const TEMP_SUFFIX = ".planton-tmp";

/** A key the local kind will not store: it would leave the backend's folder or clash with its own files. */
export class StateKeyRefused extends Error {
  constructor(key: string, why: string) {
    super(
      `Nothing was done under ${JSON.stringify(key)}: a local state key is a relative path inside the backend's folder, and this one ${why}. ` +
        `Use a key like "component/environment/terraform.tfstate".`,
    );
    this.name = "StateKeyRefused";
  }
}

const isMissing = (e: unknown) => (e as NodeJS.ErrnoException).code === "ENOENT";

// The callback readFile: a small file in one request chain, about a third less CPU than fs/promises' readFile (which
// reads through a FileHandle, a round trip per step). A state file is read whole on every read and on the move's read-back.
const readWhole = promisify(readFileCallback);
// Node takes open(2) flags as a number here too; its types say only a string like "r".
const READ_NONBLOCK = (constants.O_RDONLY | constants.O_NONBLOCK) as unknown as string;

/** The file's bytes, or null when there is none. O_NONBLOCK: a FIFO planted at the name reads as empty instead of holding a pool thread until something writes to it. */
async function bytesOf(file: string): Promise<Buffer | null> {
  try {
    return await readWhole(file, { flag: READ_NONBLOCK });
  } catch (e) {
    if (isMissing(e)) return null;
    throw e;
  }
}

/** Files up to this size are read on the calling thread (see smallFileBytes). */
const SYNC_READ_LIMIT = 64 * 1024;

/**
 * A small file's bytes read on the calling thread — open, fstat, read, close: about 20 µs of CPU for a few KB, against
 * about 55 µs and four trips through libuv's four-thread pool, where they queue behind other writes' fsyncs (the
 * move's read-back of every copy). Null when there is none; undefined when it is larger than SYNC_READ_LIMIT or not a
 * regular file, to be read through the pool (a big read would hold the event loop; O_NONBLOCK keeps a FIFO planted at
 * the name from hanging this open, and with it the process).
 */
function smallFileBytes(file: string): Buffer | null | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    if (isMissing(e)) return null;
    throw e;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > SYNC_READ_LIMIT) return undefined;
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Removes a temporary file of ours (one unlink; `rm` would stat it first); one already gone is not an error. */
async function removeTemp(file: string) {
  await unlink(file).catch((e) => {
    if (!isMissing(e)) throw e;
  });
}

/** Writes `data` to a fresh file readable by its owner only, flushed, so a rename over the target is all-or-nothing. */
async function writeFresh(file: string, data: Uint8Array | string) {
  const handle = await open(file, "wx", 0o600);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export class LocalStateStore implements StateStore {
  readonly kind = "local" as const;
  readonly root: string;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  /** The file for `key`, after refusing keys that escape the root or name the store's own files. */
  pathOf(key: string): string {
    if (typeof key !== "string" || key === "") throw new StateKeyRefused(String(key), "is empty");
    if (key.includes("\0")) throw new StateKeyRefused(key, "contains a NUL character");
    if (path.isAbsolute(key) || key.startsWith("/") || key.startsWith("\\") || /^[a-zA-Z]:/.test(key)) throw new StateKeyRefused(key, "is an absolute path");
    const segments = key.split(/[/\\]/);
    if (segments.some((s) => s === "..")) throw new StateKeyRefused(key, 'has a ".." segment that would leave the folder');
    if (segments.some((s) => s === "" || s === ".")) throw new StateKeyRefused(key, 'has an empty or "." segment');
    if (key.endsWith(LOCK_SUFFIX) || key.endsWith(TEMP_SUFFIX)) throw new StateKeyRefused(key, `ends in ${key.endsWith(LOCK_SUFFIX) ? LOCK_SUFFIX : TEMP_SUFFIX}, which names the backend's own lock and temporary files`);
    const file = path.resolve(this.root, key);
    const rel = path.relative(this.root, file);
    if (!rel || rel.startsWith("..") || path.isAbsolute(rel)) throw new StateKeyRefused(key, "resolves outside the folder");
    return file;
  }

  private async folderFor(file: string) {
    // State holds secrets: folders the store creates are its owner's only.
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  }

  async read(key: string): Promise<StoredState | null> {
    const bytes = await bytesOf(this.pathOf(key));
    return bytes ? storedStateRead(key, new Uint8Array(bytes)) : null;
  }

  async checksum(key: string): Promise<string | null> {
    const file = this.pathOf(key);
    const small = smallFileBytes(file);
    const bytes = small === undefined ? await bytesOf(file) : small;
    return bytes ? sha256Of(bytes).hex : null;
  }

  async write(key: string, state: StoredState): Promise<void> {
    const file = this.pathOf(key);
    await this.folderFor(file);
    // A reader sees the old state or the new one, never half of either: write aside, then rename over.
    const tmp = `${file}.${randomUUID()}${TEMP_SUFFIX}`;
    try {
      await writeFresh(tmp, state.bytes);
      await rename(tmp, file);
    } catch (e) {
      await removeTemp(tmp);
      throw e;
    }
  }

  async create(key: string, state: StoredState): Promise<boolean> {
    const file = this.pathOf(key);
    await this.folderFor(file);
    // Written aside, then hard-linked into place: link refuses an existing name, so nothing is replaced.
    const tmp = `${file}.${randomUUID()}${TEMP_SUFFIX}`;
    try {
      await writeFresh(tmp, state.bytes);
      await link(tmp, file);
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw e;
    } finally {
      await removeTemp(tmp);
    }
  }

  private async readLock(file: string): Promise<LockInfo | null> {
    const bytes = await bytesOf(`${file}${LOCK_SUFFIX}`);
    return bytes ? (JSON.parse(bytes.toString("utf8")) as LockInfo) : null;
  }

  async lock(key: string, request: LockRequest, attempt = 0): Promise<LockInfo> {
    const file = this.pathOf(key);
    const info = lockInfoOf(request, file, whoAmI(), STORE_VERSION, randomUUID);
    await this.folderFor(file);
    // Written whole aside, then linked into place: link() fails if the lock exists, and a second
    // locker never reads a half-written lock file.
    const tmp = `${file}.${randomUUID()}${TEMP_SUFFIX}`;
    await writeFresh(tmp, JSON.stringify(info));
    try {
      await link(tmp, `${file}${LOCK_SUFFIX}`);
      return info;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    } finally {
      await removeTemp(tmp);
    }
    const holder = await this.readLock(file);
    if (holder) throw new StateLockedError(holder);
    // Released between our attempt and the read: try again, a few times.
    if (attempt < 3) return this.lock(key, request, attempt + 1);
    throw new Error(`The state ${key} was not locked: its lock kept changing hands. Run the job again.`);
  }

  async unlock(key: string, id: string): Promise<void> {
    const file = this.pathOf(key);
    const holder = await this.readLock(file);
    if (!holder) throw new Error(`The lock on ${key} was not released: the state is not locked. Nothing to do.`);
    if (holder.ID !== id) throw new StateLockedError(holder);
    await rm(`${file}${LOCK_SUFFIX}`, { force: true });
  }

  lockHolder(key: string): Promise<LockInfo | null> {
    return this.readLock(this.pathOf(key));
  }

  async forceUnlock(key: string): Promise<LockInfo | null> {
    const file = this.pathOf(key);
    const holder = await this.readLock(file);
    await rm(`${file}${LOCK_SUFFIX}`, { force: true });
    return holder;
  }

  async list(prefix = ""): Promise<StateObjectInfo[]> {
    // Walk only the folder the prefix names (its part up to the last "/"), not the whole tree.
    const dirPart = prefix.includes("/") ? prefix.slice(0, prefix.lastIndexOf("/")) : "";
    const start = dirPart ? this.pathOf(dirPart) : this.root;
    const out: StateObjectInfo[] = [];
    const walk = async (dir: string) => {
      let entries;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (e) {
        if (isMissing(e)) return;
        throw e;
      }
      for (const entry of entries) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) await walk(full);
        else if (entry.isFile() && !entry.name.endsWith(LOCK_SUFFIX) && !entry.name.endsWith(TEMP_SUFFIX)) {
          const key = path.relative(this.root, full).split(path.sep).join("/");
          if (!key.startsWith(prefix)) continue;
          try {
            out.push({ key, size: (await stat(full)).size });
          } catch (e) {
            if (!isMissing(e)) throw e; // deleted while we walked: not listed
          }
        }
      }
    };
    await walk(start);
    return out;
  }

  async delete(key: string): Promise<void> {
    const file = this.pathOf(key);
    await rm(file, { force: true });
    await rm(`${file}${LOCK_SUFFIX}`, { force: true });
  }
}
