import { createHash } from "node:crypto";
import { chmod, mkdir, readFile, realpath, rm, stat, writeFile } from "node:fs/promises";
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
};

const digest = (algo: string, s: string) => createHash(algo).update(s, "utf8").digest("hex");
const contentHashes = (content: string): Attrs => ({ id: digest("sha1", content), content_sha256: digest("sha256", content), content_md5: digest("md5", content) });
const mode = (m: number) => (m & 0o777).toString(8).padStart(4, "0");

function parseMode(v: unknown, address: string, attr: string): number {
  if (typeof v !== "string" || !/^0?[0-7]{3}$/.test(v)) throw new Error(`${address}: ${attr} must be an octal string such as "0644", got ${JSON.stringify(v)}`);
  return parseInt(v, 8);
}

async function isMissing(p: string): Promise<boolean> {
  try {
    await stat(p);
    return false;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return true;
    throw e;
  }
}

/**
 * hashicorp/local, confined to a root directory. Every path is resolved under the root given by
 * the connection; a path (or symlinked parent) that leads outside it is refused.
 */
export function createLocalProvider(): Provider {
  let root: string | null = null;

  async function inside(address: string, p: unknown): Promise<string> {
    if (root === null) {
      throw new Error(`${address}: the local provider has no root directory; set one on the component's connection (local.root)`);
    }
    if (typeof p !== "string" || p === "") throw new Error(`${address}: the path must be a non-empty string`);
    const outside = () => new Error(`${address}: path ${p} is outside the connection root ${root}; use a path inside it`);
    const abs = path.resolve(root, p);
    const rel = path.relative(root, abs);
    if (rel === ".." || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) throw outside();
    // A symlink inside the root could still point outside it: check the nearest existing ancestor.
    const realRoot = await realpath(root).catch(() => root!);
    let probe = abs;
    while (probe !== root && (await isMissing(probe))) probe = path.dirname(probe);
    const real = await realpath(probe).catch(() => probe);
    const realRel = path.relative(realRoot, real);
    if (realRel === ".." || realRel.startsWith(`..${path.sep}`) || path.isAbsolute(realRel)) throw outside();
    return abs;
  }

  async function readFileState(address: string, state: Attrs): Promise<Attrs | null> {
    const abs = await inside(address, state.filename);
    let content: string;
    let st;
    try {
      st = await stat(abs);
      if (!st.isFile()) return null;
      content = await readFile(abs, "utf8");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw e;
    }
    return { ...state, content, file_permission: mode(st.mode), ...contentHashes(content) };
  }

  return {
    schema: () => SCHEMA,
    configure: async (config) => {
      root = typeof config.root === "string" && config.root !== "" ? path.resolve(config.root) : null;
    },
    read: async ({ address, type, state }) => {
      if (type === "local_file") return { state: await readFileState(address, state) };
      const abs = await inside(address, state.path);
      try {
        const st = await stat(abs);
        if (!st.isDirectory()) return { state: null };
        return { state: { ...state, permission: mode(st.mode) } };
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
          await rm(await inside(address, prior!.filename), { force: true });
          return { state: null };
        }
        const abs = await inside(address, planned.filename);
        const content = String(planned.content ?? "");
        await mkdir(path.dirname(abs), { recursive: true, mode: parseMode(planned.directory_permission, address, "directory_permission") });
        const fileMode = parseMode(planned.file_permission, address, "file_permission");
        await writeFile(abs, content, { mode: fileMode });
        await chmod(abs, fileMode);
        return { state: { ...planned, content, ...contentHashes(content) } };
      }
      if (!planned) {
        await rm(await inside(address, prior!.path), { recursive: true, force: true });
        return { state: null };
      }
      const abs = await inside(address, planned.path);
      const dirMode = parseMode(planned.permission, address, "permission");
      await mkdir(abs, { recursive: true, mode: dirMode });
      await chmod(abs, dirMode);
      return { state: { ...planned, id: planned.path } };
    },
    importState: async ({ address, type, id }) => {
      if (type === "local_file") {
        const base: Attrs = { filename: id, content: "", file_permission: "0644", directory_permission: "0755" };
        const state = await readFileState(address, base);
        if (!state) throw new Error(`${address}: cannot import: no file exists at ${id} under the connection root ${root}`);
        return { state };
      }
      const abs = await inside(address, id);
      const st = await stat(abs).catch(() => null);
      if (!st?.isDirectory()) throw new Error(`${address}: cannot import: no directory exists at ${id} under the connection root ${root}`);
      return { state: { path: id, permission: mode(st.mode), id } };
    },
  };
}
