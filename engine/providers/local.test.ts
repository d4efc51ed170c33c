// The local provider's confinement with real files and real symbolic links: nothing is read, written
// or deleted outside the connection root, whatever links lie inside it.
import { execFileSync } from "node:child_process";
import { closeSync, constants, openSync } from "node:fs";
import { chmod, mkdir, readFile, readdir, stat, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createLocalProvider } from "./local";
import { tempDir } from "../test/helpers";
import type { Attrs } from "../values";

const FILE: Attrs = { content: "x", file_permission: "0644", directory_permission: "0755" };

async function providerIn(root: string, opts: { ownerOnly?: boolean } = {}) {
  const p = createLocalProvider();
  await p.configure({ root, ...opts });
  return p;
}

/** Plans then applies a create of `type`, as the engine core does. */
async function create(p: ReturnType<typeof createLocalProvider>, type: "local_file" | "local_directory", config: Attrs): Promise<Attrs> {
  const { planned } = await p.plan({ address: `${type}.t`, type, prior: null, config });
  return (await p.apply({ address: `${type}.t`, type, prior: null, planned })).state!;
}

describe("local provider: symbolic links never lead out of the root", () => {
  it("a dangling link inside the root that points outside cannot be used to create a file there", async () => {
    const root = await tempDir();
    const outside = await tempDir();
    const target = path.join(outside, "planted.txt");
    await symlink(target, path.join(root, "site.txt"));
    const p = await providerIn(root);
    const config = { ...FILE, filename: "site.txt" };
    await expect(p.plan({ address: "local_file.site", type: "local_file", prior: null, config })).rejects.toThrow(
      `local_file.site: path site.txt goes through the symbolic link ${path.join(root, "site.txt")}, whose target does not exist; the local provider creates nothing through a link. Remove the link or use another path under the connection root ${root}`,
    );
    // Apply checks again, whatever plan said: a plan made before the link appeared is refused too.
    await expect(p.apply({ address: "local_file.site", type: "local_file", prior: null, planned: { ...config, id: "x" } })).rejects.toThrow(/goes through the symbolic link/);
    expect(await readdir(outside)).toEqual([]);
  });

  it("a dangling link as a parent folder cannot be used to create folders or files outside", async () => {
    const root = await tempDir();
    const outside = await tempDir();
    await symlink(path.join(outside, "made", "here"), path.join(root, "pages"));
    const p = await providerIn(root);
    await expect(create(p, "local_file", { ...FILE, filename: "pages/index.html" })).rejects.toThrow(/goes through the symbolic link .*pages, whose target does not exist/);
    await expect(create(p, "local_directory", { path: "pages/assets", permission: "0755" })).rejects.toThrow(/goes through the symbolic link/);
    expect(await readdir(outside)).toEqual([]);
  });

  it("a link to an existing file outside is neither read, overwritten, imported nor deleted", async () => {
    const root = await tempDir();
    const outside = await tempDir();
    const secret = path.join(outside, "secret.txt");
    await writeFile(secret, "outside");
    await symlink(secret, path.join(root, "notes.txt"));
    const p = await providerIn(root);
    const state = { ...FILE, filename: "notes.txt", id: "x" };
    const refused = `local_file.notes: path notes.txt is outside the connection root ${root}; use a path inside it`;
    await expect(p.read({ address: "local_file.notes", type: "local_file", state })).rejects.toThrow(refused);
    await expect(p.apply({ address: "local_file.notes", type: "local_file", prior: null, planned: state })).rejects.toThrow(refused);
    await expect(p.importState({ address: "local_file.notes", type: "local_file", id: "notes.txt" })).rejects.toThrow(refused);
    await expect(p.apply({ address: "local_file.notes", type: "local_file", prior: state, planned: null })).rejects.toThrow(refused);
    expect(await readFile(secret, "utf8")).toBe("outside");
  });

  it("a link to a folder outside is not followed for a directory either", async () => {
    const root = await tempDir();
    const outside = await tempDir();
    await symlink(outside, path.join(root, "out"));
    const p = await providerIn(root);
    await expect(create(p, "local_directory", { path: "out/made", permission: "0755" })).rejects.toThrow(`local_directory.t: path out/made is outside the connection root ${root}; use a path inside it`);
    await expect(p.apply({ address: "local_directory.t", type: "local_directory", prior: { path: "out", permission: "0755", id: "out" }, planned: null })).rejects.toThrow(/is outside the connection root/);
    expect(await readdir(outside)).toEqual([]);
  });

  it("a link that stays inside the root is followed to its target", async () => {
    const root = await tempDir();
    await mkdir(path.join(root, "real"));
    await symlink(path.join(root, "real"), path.join(root, "alias"));
    const p = await providerIn(root);
    const s = await create(p, "local_file", { ...FILE, filename: "alias/page.txt", content: "inside" });
    expect(await readFile(path.join(root, "real", "page.txt"), "utf8")).toBe("inside");
    expect((await p.read({ address: "local_file.t", type: "local_file", state: s })).state).toMatchObject({ content: "inside", file_permission: "0644" });
  });
});

describe("local provider: what is not a regular file", () => {
  it("a FIFO at a file's name is refused, read or written, and never waited on — whether or not something reads it", async () => {
    const root = await tempDir();
    execFileSync("mkfifo", [path.join(root, "pipe")]);
    const p = await providerIn(root);
    const refused = `local_file.t: pipe is not a regular file; the local provider reads and writes regular files only. Remove what is there or use another path under the connection root ${root}`;
    // Nothing reads it: a blocking open for writing would wait forever (and these calls block the whole process).
    await expect(create(p, "local_file", { ...FILE, filename: "pipe" })).rejects.toThrow(refused);
    // Something reads it: the open succeeds, and what it opened is still refused, nothing written.
    const reader = openSync(path.join(root, "pipe"), constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      await expect(create(p, "local_file", { ...FILE, filename: "pipe" })).rejects.toThrow(refused);
    } finally {
      closeSync(reader);
    }
    expect((await stat(path.join(root, "pipe"))).isFIFO()).toBe(true);
    expect((await p.read({ address: "local_file.t", type: "local_file", state: { ...FILE, filename: "pipe", id: "x" } })).state).toBeNull();
    await expect(p.files.readBytes("data.local_file.t", "pipe")).rejects.toThrow("data.local_file.t: pipe is not a regular file");
  });
});

describe("local provider: owner-only files (a hosted runner's data folder)", () => {
  it("writes files 0600 and folders 0700 whatever permission is asked for, and records what was asked so nothing drifts", async () => {
    const root = await tempDir();
    const p = await providerIn(root, { ownerOnly: true });
    const s = await create(p, "local_file", { ...FILE, filename: "site/www/index.html", content: "hi" });
    expect((await stat(path.join(root, "site/www/index.html"))).mode & 0o777).toBe(0o600);
    expect((await stat(path.join(root, "site/www"))).mode & 0o777).toBe(0o700);
    expect((await stat(path.join(root, "site"))).mode & 0o777).toBe(0o700);
    expect((await p.read({ address: "local_file.t", type: "local_file", state: s })).state).toMatchObject({ file_permission: "0644" });
    const d = await create(p, "local_directory", { path: "assets", permission: "0755" });
    expect((await stat(path.join(root, "assets"))).mode & 0o777).toBe(0o700);
    expect((await p.read({ address: "local_directory.t", type: "local_directory", state: d })).state).toMatchObject({ permission: "0755" });
    // A mode changed by hand is drift, as without the cap.
    await chmod(path.join(root, "site/www/index.html"), 0o640);
    expect((await p.read({ address: "local_file.t", type: "local_file", state: s })).state).toMatchObject({ file_permission: "0640" });
  });
});
