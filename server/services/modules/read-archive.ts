// Reading an uploaded module archive (.tar.gz or .zip) into its files, refusing any entry that would
// escape its folder (`../`, an absolute path), any link (symbolic or hard), device or fifo, and
// anything over the limits. Nothing is ever written to disk: a .tar.gz is gunzipped in memory with
// node:zlib (stopping at the unpacked-size limit) and its entries read by node-tar's Parser; a .zip is
// read by yauzl from the buffer, each entry's declared size checked against the limits before it is
// unpacked and the unpacked bytes held to that size (validateEntrySizes), so a zip bomb stops early.
import zlib from "node:zlib";
import { Parser, type ReadEntry } from "tar";
import yauzl from "yauzl";
import { MODULE_LIMITS } from "@/lib/modules";
import { isSkipped, SourceRefusal } from "./bundle";

export interface ArchiveEntry {
  path: string;
  data: Buffer;
}

/** Everything an archive may unpack to: the bundle limit plus room for its headers. */
const MAX_UNPACKED = MODULE_LIMITS.bundleBytes + MODULE_LIMITS.files * 1024 + 1024 * 1024;
/** Entries an archive may hold, folders and skipped files included. */
const MAX_ENTRIES = MODULE_LIMITS.files * 2 + 10;

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

function tooLarge(archive: string): never {
  throw new SourceRefusal(`${archive} unpacks to more than a module bundle may hold (${MODULE_LIMITS.bundleBytes / 1024 / 1024} MiB). Upload the module's folder only.`);
}

function fileTooLarge(name: string, archive: string): never {
  throw new SourceRefusal(`${name} in ${archive} is larger than a module's file may be (${MODULE_LIMITS.fileBytes / 1024 / 1024} MiB). Keep large files out of the module.`);
}

const symlinkRefusal = (archive: string, name: string) =>
  new SourceRefusal(`${archive} has a symbolic link ${name}, and a module bundle takes plain files only. Replace the link with the file it points to, then upload again.`);

/** The tar stream inside a .tar.gz, unpacked by zlib only up to MAX_UNPACKED. */
function gunzip(bytes: Buffer, archive: string): Buffer {
  if (bytes.length < 2 || bytes[0] !== 0x1f || bytes[1] !== 0x8b) {
    throw new SourceRefusal(`${archive} is not a gzip-compressed tar file (it does not start with a gzip header). Make it with tar -czf, or upload a .zip.`);
  }
  try {
    return zlib.gunzipSync(bytes, { maxOutputLength: MAX_UNPACKED });
  } catch (e) {
    if ((e as { code?: string }).code === "ERR_BUFFER_TOO_LARGE" || e instanceof RangeError) tooLarge(archive);
    throw new SourceRefusal(`${archive} is not a gzip-compressed tar file (${(e as Error).message}). Make it with tar -czf, or upload a .zip.`);
  }
}

async function readTar(bytes: Buffer, archive: string): Promise<ArchiveEntry[]> {
  const tar = gunzip(bytes, archive);
  const invalid = (why: string) => new SourceRefusal(`${archive} is not a valid tar file (${why}). Make it again with tar -czf.`);
  // node-tar's Parser would unpack a compressed stream inside the tar itself, past our limit: refuse one.
  if (tar[0] === 0x1f && tar[1] === 0x8b) throw invalid("it is compressed twice");
  const out: ArchiveEntry[] = [];
  let count = 0;
  let refusal: unknown;
  const parser = new Parser({ strict: true, brotli: false, zstd: false });
  const refuse = (e: unknown) => {
    refusal ??= e;
    parser.abort(new Error("refused"));
  };
  const onEntry = (entry: ReadEntry) => {
    if (++count > MAX_ENTRIES) tooMany(archive);
    const name = entry.path;
    const rel = entryPath(name, archive);
    if (entry.type === "Directory") return entry.resume();
    if (entry.type === "Link" || entry.type === "SymbolicLink") {
      throw new SourceRefusal(`${archive} has ${entry.type === "SymbolicLink" ? "a symbolic" : "a hard"} link ${name}, and a module bundle takes plain files only. Replace the link with the file it points to, then upload again.`);
    }
    if (entry.type !== "File" && entry.type !== "OldFile" && entry.type !== "ContiguousFile") {
      throw new SourceRefusal(`${archive} has ${name}, which is not a plain file (tar type ${entry.header.typeKey}). Upload the module's files only.`);
    }
    if (!rel || isSkipped(rel)) return entry.resume();
    if (entry.size > MODULE_LIMITS.fileBytes) fileTooLarge(rel, archive);
    const chunks: Buffer[] = [];
    entry.on("data", (c: Buffer) => chunks.push(c));
    entry.on("end", () => out.push({ path: rel, data: Buffer.concat(chunks) }));
  };
  parser.on("entry", (entry: ReadEntry) => {
    try {
      onEntry(entry);
    } catch (e) {
      entry.resume();
      refuse(e);
    }
  });
  // Entries node-tar does not hand on (an unknown type, an oversized extended header) are refused, not skipped.
  parser.on("ignoredEntry", (entry: ReadEntry) => {
    refuse(entry.meta ? invalid(`a ${entry.size}-byte extended header is larger than the server reads`) : new SourceRefusal(`${archive} has ${entry.path}, which is not a plain file (tar type ${entry.header.typeKey}). Upload the module's files only.`));
  });
  return new Promise((resolve, reject) => {
    parser.on("error", (e: Error) => {
      const why = e.message.replace(/^TAR_[A-Z_]+: /, "");
      reject(refusal ?? invalid(why === "checksum failure" ? "a header's checksum does not match" : why));
    });
    parser.on("end", () => (refusal ? reject(refusal) : resolve(out)));
    parser.end(tar);
  });
}

async function readZip(bytes: Buffer, archive: string): Promise<ArchiveEntry[]> {
  const bad = (why: string) => new SourceRefusal(`${archive} is not a zip file the server reads (${why}). Make it again with zip -r, or upload a .tar.gz.`);
  let zip: yauzl.ZipFile;
  try {
    // Names are decoded and checked here (decodeStrings: false), so a bad one is refused with our message.
    zip = await yauzl.fromBufferPromise(bytes, { decodeStrings: false, strictFileNames: true, validateEntrySizes: true });
  } catch (e) {
    throw bad((e as Error).message);
  }
  try {
    if (zip.entryCount > MAX_ENTRIES) tooMany(archive);
    const out: ArchiveEntry[] = [];
    let unpacked = 0;
    const entries = zip.eachEntry();
    for (;;) {
      let next: IteratorResult<yauzl.Entry>;
      try {
        next = await entries.next();
      } catch (e) {
        throw bad((e as Error).message);
      }
      if (next.done) break;
      const entry = next.value;
      const name = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, entry.extraFields, true);
      const rel = entryPath(name, archive);
      const mode = entry.externalFileAttributes >>> 16;
      const fileType = entry.versionMadeBy >> 8 === 3 ? mode & 0o170000 : 0;
      if (fileType === 0o120000) throw symlinkRefusal(archive, name);
      if (name.endsWith("/") || fileType === 0o040000) continue;
      if (fileType && fileType !== 0o100000) throw new SourceRefusal(`${archive} has ${name}, which is not a plain file. Upload the module's files only.`);
      if (!rel || isSkipped(rel)) continue;
      if (entry.isEncrypted()) throw new SourceRefusal(`${name} in ${archive} is encrypted. Upload an archive without a password.`);
      if (entry.uncompressedSize > MODULE_LIMITS.fileBytes) fileTooLarge(name, archive);
      unpacked += entry.uncompressedSize;
      if (unpacked > MAX_UNPACKED) tooLarge(archive);
      if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) throw bad(`${name} is compressed with method ${entry.compressionMethod}; only deflate and stored are read`);
      let stream: NodeJS.ReadableStream;
      try {
        stream = await zip.openReadStreamPromise(entry);
      } catch (e) {
        throw bad(`the entry ${name} is damaged: ${(e as Error).message}`);
      }
      // validateEntrySizes ends the stream with an error as soon as it passes the declared size.
      const chunks: Buffer[] = [];
      try {
        for await (const c of stream) chunks.push(c as Buffer);
      } catch (e) {
        throw new SourceRefusal(`${name} in ${archive} could not be unpacked (${(e as Error).message}). Make the archive again, then upload it.`);
      }
      out.push({ path: rel, data: Buffer.concat(chunks) });
    }
    return out;
  } finally {
    zip.close();
  }
}

/** The files of an uploaded archive, with a single top-level folder stripped (`module/main.tf` → `main.tf`). */
export async function readArchive(fileName: string, bytes: Buffer): Promise<ArchiveEntry[]> {
  if (bytes.length > MODULE_LIMITS.archiveBytes) throw new SourceRefusal(`${fileName} is larger than an uploaded module may be (${MODULE_LIMITS.archiveBytes / 1024} KiB compressed). Register a larger module from git.`);
  const entries = /\.zip$/i.test(fileName) ? await readZip(bytes, fileName) : await readTar(bytes, fileName);
  if (entries.length > MODULE_LIMITS.files) tooMany(fileName);
  const tops = new Set(entries.map((e) => e.path.split("/")[0]));
  if (tops.size === 1 && entries.every((e) => e.path.includes("/"))) {
    const top = [...tops][0].length + 1;
    return entries.map((e) => ({ path: e.path.slice(top), data: e.data }));
  }
  return entries;
}
