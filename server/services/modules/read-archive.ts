// Reading an uploaded module archive (.tar.gz or .zip) into its files, refusing any entry that would
// escape its folder (`../`, an absolute path), any link (symbolic or hard), device or fifo, and
// anything over the limits. Both formats are read here with node:zlib: their directory structures are
// small and fixed, and nothing is ever written to disk.
import zlib from "node:zlib";
import { MODULE_LIMITS } from "@/lib/modules";
import { isSkipped, SourceRefusal } from "./bundle";

export interface ArchiveEntry {
  path: string;
  data: Buffer;
}

/** Everything an archive may unpack to: the bundle limit plus room for its headers. */
const MAX_UNPACKED = MODULE_LIMITS.bundleBytes + MODULE_LIMITS.files * 1024 + 1024 * 1024;

/** A safe relative path for an entry name, or the refusal naming it. */
function entryPath(name: string, archive: string): string {
  const n = name.replace(/^\.\//, "");
  if (n.startsWith("/") || /^[A-Za-z]:/.test(n) || n.includes("\\") || n.split("/").includes("..") || n.includes("\0")) {
    throw new SourceRefusal(`${archive} has an entry ${JSON.stringify(name)} that escapes its folder. Make the archive from inside the module's folder (tar -czf module.tar.gz -C module .), then upload it again.`);
  }
  return n.split("/").filter((s) => s && s !== ".").join("/");
}

function tooMany(archive: string): never {
  throw new SourceRefusal(`${archive} has more than ${MODULE_LIMITS.files} entries, more than a module may have. Upload the module's folder only.`);
}

const octal = (b: Buffer) => parseInt(b.toString("latin1").replace(/\0.*$/s, "").trim() || "0", 8);
const cstr = (b: Buffer) => b.toString("utf8").replace(/\0.*$/s, "");

function gunzip(bytes: Buffer, archive: string): Buffer {
  try {
    return zlib.gunzipSync(bytes, { maxOutputLength: MAX_UNPACKED });
  } catch (e) {
    if ((e as { code?: string }).code === "ERR_BUFFER_TOO_LARGE" || e instanceof RangeError) {
      throw new SourceRefusal(`${archive} unpacks to more than a module bundle may hold (${MODULE_LIMITS.bundleBytes / 1024 / 1024} MiB). Upload the module's folder only.`);
    }
    throw new SourceRefusal(`${archive} is not a gzip-compressed tar file (${(e as Error).message}). Make it with tar -czf, or upload a .zip.`);
  }
}

function readTar(bytes: Buffer, archive: string): ArchiveEntry[] {
  const tar = gunzip(bytes, archive);
  const out: ArchiveEntry[] = [];
  let at = 0;
  let longName: string | null = null;
  let pax: Record<string, string> = {};
  let count = 0;
  while (at + 512 <= tar.length) {
    const h = tar.subarray(at, at + 512);
    if (h.every((b) => b === 0)) break;
    if (++count > MODULE_LIMITS.files * 2 + 10) tooMany(archive);
    const sum = h.reduce((s, b, i) => s + (i >= 148 && i < 156 ? 32 : b), 0);
    if (sum !== octal(h.subarray(148, 156))) throw new SourceRefusal(`${archive} is not a valid tar file (a header's checksum does not match). Make it again with tar -czf.`);
    const type = String.fromCharCode(h[156] || 48);
    const size = octal(h.subarray(124, 136));
    const body = tar.subarray(at + 512, at + 512 + size);
    at += 512 + Math.ceil(size / 512) * 512;
    const magic = h.subarray(257, 263).toString("latin1");
    const prefix = magic.startsWith("ustar") ? cstr(h.subarray(345, 500)) : "";
    let name = pax.path ?? longName ?? (prefix ? `${prefix}/${cstr(h.subarray(0, 100))}` : cstr(h.subarray(0, 100)));
    if (type === "x") {
      pax = {};
      for (const rec of body.toString("utf8").split("\n")) {
        const m = /^\d+ ([^=]+)=(.*)$/s.exec(rec);
        if (m) pax[m[1]] = m[2];
      }
      continue;
    }
    if (type === "L") {
      longName = cstr(body);
      continue;
    }
    if (type === "g") continue;
    pax = {};
    longName = null;
    const rel = entryPath(name, archive);
    if (type === "5") continue;
    if (type === "1" || type === "2") {
      throw new SourceRefusal(`${archive} has ${type === "2" ? "a symbolic" : "a hard"} link ${name}, and a module bundle takes plain files only. Replace the link with the file it points to, then upload again.`);
    }
    if (type !== "0" && type !== "7") throw new SourceRefusal(`${archive} has ${name}, which is not a plain file (tar type ${type}). Upload the module's files only.`);
    if (!rel || isSkipped(rel)) continue;
    name = rel;
    if (size > MODULE_LIMITS.fileBytes) throw new SourceRefusal(`${name} in ${archive} is larger than a module's file may be (${MODULE_LIMITS.fileBytes / 1024 / 1024} MiB). Keep large files out of the module.`);
    out.push({ path: name, data: Buffer.from(body) });
  }
  return out;
}

function readZip(bytes: Buffer, archive: string): ArchiveEntry[] {
  const bad = (why: string): never => {
    throw new SourceRefusal(`${archive} is not a zip file the server reads (${why}). Make it again with zip -r, or upload a .tar.gz.`);
  };
  let eocd = -1;
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 22 - 65535); i--) {
    if (bytes.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) bad("no end of central directory");
  const total = bytes.readUInt16LE(eocd + 10);
  let at = bytes.readUInt32LE(eocd + 16);
  if (total === 0xffff || at === 0xffffffff) bad("zip64 archives are not read");
  if (total > MODULE_LIMITS.files * 2 + 10) tooMany(archive);
  const out: ArchiveEntry[] = [];
  let unpacked = 0;
  for (let n = 0; n < total; n++) {
    if (at + 46 > bytes.length || bytes.readUInt32LE(at) !== 0x02014b50) bad("a central directory entry is damaged");
    const madeBy = bytes.readUInt16LE(at + 4) >> 8;
    const flags = bytes.readUInt16LE(at + 8);
    const method = bytes.readUInt16LE(at + 10);
    const compressed = bytes.readUInt32LE(at + 20);
    const size = bytes.readUInt32LE(at + 24);
    const nameLen = bytes.readUInt16LE(at + 28);
    const extraLen = bytes.readUInt16LE(at + 30);
    const commentLen = bytes.readUInt16LE(at + 32);
    const mode = bytes.readUInt32LE(at + 38) >>> 16;
    const local = bytes.readUInt32LE(at + 42);
    const name = bytes.subarray(at + 46, at + 46 + nameLen).toString("utf8");
    at += 46 + nameLen + extraLen + commentLen;
    const rel = entryPath(name, archive);
    const fileType = madeBy === 3 ? mode & 0o170000 : 0;
    if (fileType === 0o120000) throw new SourceRefusal(`${archive} has a symbolic link ${name}, and a module bundle takes plain files only. Replace the link with the file it points to, then upload again.`);
    if (name.endsWith("/") || fileType === 0o040000) continue;
    if (fileType && fileType !== 0o100000) throw new SourceRefusal(`${archive} has ${name}, which is not a plain file. Upload the module's files only.`);
    if (!rel || isSkipped(rel)) continue;
    if (flags & 1) throw new SourceRefusal(`${name} in ${archive} is encrypted. Upload an archive without a password.`);
    if (size > MODULE_LIMITS.fileBytes) throw new SourceRefusal(`${name} in ${archive} is larger than a module's file may be (${MODULE_LIMITS.fileBytes / 1024 / 1024} MiB). Keep large files out of the module.`);
    unpacked += size;
    if (unpacked > MAX_UNPACKED) throw new SourceRefusal(`${archive} unpacks to more than a module bundle may hold (${MODULE_LIMITS.bundleBytes / 1024 / 1024} MiB). Upload the module's folder only.`);
    if (local + 30 > bytes.length || bytes.readUInt32LE(local) !== 0x04034b50) bad(`the entry ${name} is damaged`);
    const start = local + 30 + bytes.readUInt16LE(local + 26) + bytes.readUInt16LE(local + 28);
    const raw = bytes.subarray(start, start + compressed);
    let data: Buffer;
    try {
      data = method === 0 ? Buffer.from(raw) : method === 8 ? zlib.inflateRawSync(raw, { maxOutputLength: MODULE_LIMITS.fileBytes + 1 }) : bad(`${name} is compressed with method ${method}; only deflate and stored are read`);
    } catch (e) {
      if (e instanceof SourceRefusal) throw e;
      throw new SourceRefusal(`${name} in ${archive} could not be unpacked (${(e as Error).message}). Make the archive again, then upload it.`);
    }
    if (data.length !== size) bad(`${name} unpacked to ${data.length} bytes, its header says ${size}`);
    out.push({ path: rel, data });
  }
  return out;
}

/** The files of an uploaded archive, with a single top-level folder stripped (`module/main.tf` → `main.tf`). */
export function readArchive(fileName: string, bytes: Buffer): ArchiveEntry[] {
  if (bytes.length > MODULE_LIMITS.archiveBytes) throw new SourceRefusal(`${fileName} is larger than an uploaded module may be (${MODULE_LIMITS.archiveBytes / 1024} KiB compressed). Register a larger module from git.`);
  const entries = /\.zip$/i.test(fileName) ? readZip(bytes, fileName) : readTar(bytes, fileName);
  if (entries.length > MODULE_LIMITS.files) tooMany(fileName);
  const tops = new Set(entries.map((e) => e.path.split("/")[0]));
  if (tops.size === 1 && entries.every((e) => e.path.includes("/"))) {
    const top = [...tops][0].length + 1;
    return entries.map((e) => ({ path: e.path.slice(top), data: e.data }));
  }
  return entries;
}
