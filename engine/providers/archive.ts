import { createHash } from "node:crypto";
import { deflateRawSync } from "node:zlib";
import type { LocalFiles } from "./local";
import type { Provider, ProviderSchema } from "./provider";
import type { Attrs, Value } from "../values";

const SCHEMA: ProviderSchema = {
  name: "archive",
  source: "registry.opentofu.org/hashicorp/archive",
  resources: {},
  dataSources: {
    archive_file: {
      version: 0,
      idAttribute: "id",
      attributes: {
        type: { type: "string", required: true },
        output_path: { type: "string", required: true },
        output_file_mode: { type: "string", optional: true },
        source_content: { type: "string", optional: true },
        source_content_filename: { type: "string", optional: true },
        source_file: { type: "string", optional: true },
        id: { type: "string", computed: true },
        output_size: { type: "number", computed: true },
        output_md5: { type: "string", computed: true },
        output_sha: { type: "string", computed: true },
        output_sha256: { type: "string", computed: true },
        output_base64sha256: { type: "string", computed: true },
        output_sha512: { type: "string", computed: true },
        output_base64sha512: { type: "string", computed: true },
      },
      blocks: {
        source: {
          nesting: "set",
          attributes: {
            content: { type: "string", required: true },
            filename: { type: "string", required: true },
          },
        },
      },
    },
  },
};

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** A zip of the entries (deflated, dated 1980-01-01 so the same input gives the same bytes). */
export function zip(entries: { name: string; data: Uint8Array }[]): Buffer {
  const DOS_DATE = (1 << 5) | 1;
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, "utf8");
    const packed = deflateRawSync(e.data);
    const crc = crc32(e.data);
    const head = Buffer.alloc(30);
    head.writeUInt32LE(0x04034b50, 0);
    head.writeUInt16LE(20, 4);
    head.writeUInt16LE(0x0800, 6); // names are UTF-8
    head.writeUInt16LE(8, 8); // deflate
    head.writeUInt16LE(0, 10);
    head.writeUInt16LE(DOS_DATE, 12);
    head.writeUInt32LE(crc, 14);
    head.writeUInt32LE(packed.length, 18);
    head.writeUInt32LE(e.data.length, 22);
    head.writeUInt16LE(name.length, 26);
    head.writeUInt16LE(0, 28);
    locals.push(head, name, packed);
    const cd = Buffer.alloc(46);
    cd.writeUInt32LE(0x02014b50, 0);
    cd.writeUInt16LE((3 << 8) | 20, 4); // made by unix, so the mode below counts
    cd.writeUInt16LE(20, 6);
    cd.writeUInt16LE(0x0800, 8);
    cd.writeUInt16LE(8, 10);
    cd.writeUInt16LE(0, 12);
    cd.writeUInt16LE(DOS_DATE, 14);
    cd.writeUInt32LE(crc, 16);
    cd.writeUInt32LE(packed.length, 20);
    cd.writeUInt32LE(e.data.length, 24);
    cd.writeUInt16LE(name.length, 28);
    cd.writeUInt32LE((0o100644 << 16) >>> 0, 38);
    cd.writeUInt32LE(offset, 42);
    central.push(cd, name);
    offset += head.length + name.length + packed.length;
  }
  const cdSize = central.reduce((n, b) => n + b.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cdSize, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, ...central, end]);
}

const hash = (algo: string, b: Buffer, enc: "hex" | "base64" = "hex") => createHash(algo).update(b).digest(enc);

/**
 * hashicorp/archive's archive_file data source, zip only, writing under the local provider's root
 * (the same confinement: paths outside it, or through links, are refused). Sources: source blocks,
 * source_content with source_content_filename, or source_file. source_dir is not supported.
 */
export function createArchiveProvider(files: LocalFiles): Provider {
  const refuse = (address: string, what: string): never => {
    throw new Error(`${address}: ${what}`);
  };
  return {
    schema: () => SCHEMA,
    configure: async () => {},
    read: async ({ state }) => ({ state }),
    plan: async ({ address }) => refuse(address, "archive_file is a data source only"),
    apply: async ({ address }) => refuse(address, "archive_file is a data source only"),
    importState: async ({ address }) => refuse(address, "archive_file is a data source only"),
    readData: async ({ address, config }) => {
      if (config.type !== "zip") refuse(address, `type must be "zip" (the builtin engine writes zip archives only), got ${JSON.stringify(config.type)}`);
      const entries: { name: string; data: Uint8Array }[] = [];
      for (const s of (config.source as Attrs[] | null) ?? []) entries.push({ name: String(s.filename), data: Buffer.from(String(s.content), "utf8") });
      if (typeof config.source_content === "string") {
        if (typeof config.source_content_filename !== "string") refuse(address, "source_content needs source_content_filename");
        entries.push({ name: String(config.source_content_filename), data: Buffer.from(config.source_content, "utf8") });
      }
      if (typeof config.source_file === "string") {
        entries.push({ name: config.source_file.split("/").pop()!, data: await files.readBytes(address, config.source_file) });
      }
      if (entries.length === 0) refuse(address, "nothing to archive: give source blocks, source_content with source_content_filename, or source_file");
      const names = new Set<string>();
      for (const e of entries) {
        if (names.has(e.name)) refuse(address, `two sources are named ${e.name}; each file in the archive needs its own name`);
        names.add(e.name);
      }
      entries.sort((a, b) => a.name.localeCompare(b.name));
      const bytes = zip(entries);
      const fileMode = typeof config.output_file_mode === "string" && /^0?[0-7]{3}$/.test(config.output_file_mode) ? parseInt(config.output_file_mode, 8) : 0o644;
      await files.writeBytes(address, config.output_path, bytes, fileMode, 0o755);
      const state: Attrs = {
        ...config,
        id: hash("sha1", bytes),
        output_size: bytes.length,
        output_md5: hash("md5", bytes),
        output_sha: hash("sha1", bytes),
        output_sha256: hash("sha256", bytes),
        output_base64sha256: hash("sha256", bytes, "base64"),
        output_sha512: hash("sha512", bytes),
        output_base64sha512: hash("sha512", bytes, "base64"),
      };
      return { state: state as { [k: string]: Value } };
    },
  };
}
