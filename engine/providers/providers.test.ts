import { readFile, stat, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createLocalProvider } from "./local";
import { createRandomProvider } from "./random";
import { createTerraformDataProvider } from "./terraform-data";
import { tempDir } from "../test/helpers";
import { isUnknown, type Attrs } from "../values";

/** Plans and applies a create through the provider's JSON interface, as the core does. */
async function create(p: ReturnType<typeof createRandomProvider>, type: string, config: Attrs): Promise<Attrs> {
  const full: Attrs = {};
  for (const [k, a] of Object.entries(p.schema().resources[type]!.attributes)) if (a.required || a.optional) full[k] = config[k] ?? a.default ?? null;
  const { planned } = await p.plan({ address: `${type}.t`, type, prior: null, config: full });
  const wire = JSON.parse(JSON.stringify(planned)) as Attrs; // crosses a process boundary intact
  return (await p.apply({ address: `${type}.t`, type, prior: null, planned: wire })).state!;
}

describe("random provider", () => {
  const p = createRandomProvider();

  it("random_id derives hex, b64_url and dec from byte_length, unknown until apply", async () => {
    const { planned } = await p.plan({ address: "random_id.t", type: "random_id", prior: null, config: { byte_length: 4, keepers: null, prefix: null } });
    expect(isUnknown(planned.hex)).toBe(true);
    const s = await create(p, "random_id", { byte_length: 4 });
    expect(s.hex).toMatch(/^[0-9a-f]{8}$/);
    expect(Buffer.from(s.b64_url as string, "base64url").toString("hex")).toBe(s.hex);
    expect(BigInt(`0x${s.hex}`).toString()).toBe(s.dec);
    expect(s.id).toBe(s.b64_url);
  });

  it("random_id keepers force replacement", async () => {
    const prior = await create(p, "random_id", { byte_length: 2, keepers: { v: "1" } });
    const same = await p.plan({ address: "random_id.t", type: "random_id", prior, config: { byte_length: 2, keepers: { v: "1" }, prefix: null } });
    expect(same.requiresReplace).toEqual([]);
    const changed = await p.plan({ address: "random_id.t", type: "random_id", prior, config: { byte_length: 2, keepers: { v: "2" }, prefix: null } });
    expect(changed.requiresReplace).toEqual(["keepers"]);
    expect(isUnknown(changed.planned.hex)).toBe(true);
  });

  it("random_pet honours length, separator and prefix", async () => {
    const s = await create(p, "random_pet", { length: 3, separator: "_", prefix: "app" });
    expect((s.id as string).split("_")).toHaveLength(4);
    expect(s.id).toMatch(/^app_[a-z]+_[a-z]+_[a-z]+$/);
  });

  it("random_password follows its character rules and marks result sensitive", async () => {
    expect(p.schema().resources.random_password!.attributes.result!.sensitive).toBe(true);
    const s = await create(p, "random_password", { length: 32, special: false, min_numeric: 5 });
    expect(s.result).toMatch(/^[A-Za-z0-9]{32}$/);
    expect((s.result as string).replace(/[^0-9]/g, "").length).toBeGreaterThanOrEqual(5);
    const read = await p.read({ address: "random_password.t", type: "random_password", state: s });
    expect(read.state).toEqual(s);
  });

  it("imports random_id by its b64_url id", async () => {
    const { state } = await p.importState({ address: "random_id.t", type: "random_id", id: Buffer.from([1, 2]).toString("base64url") });
    expect(state).toMatchObject({ hex: "0102", byte_length: 2, dec: "258" });
  });
});

describe("local provider", () => {
  it("writes, reads and detects drift of a file under the root", async () => {
    const root = await tempDir();
    const p = createLocalProvider();
    await p.configure({ root });
    const s = await create(p, "local_file", { filename: "a/b.txt", content: "hello" });
    expect(await readFile(path.join(root, "a/b.txt"), "utf8")).toBe("hello");
    expect(s.id).toBe("aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d"); // sha1("hello")
    expect(s.content_sha256).toBe("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
    expect((await stat(path.join(root, "a/b.txt"))).mode & 0o777).toBe(0o644);
    await writeFile(path.join(root, "a/b.txt"), "changed by hand");
    const drift = await p.read({ address: "local_file.t", type: "local_file", state: s });
    expect(drift.state).toMatchObject({ content: "changed by hand" });
    const { planned, requiresReplace } = await p.plan({ address: "local_file.t", type: "local_file", prior: drift.state, config: { ...s } });
    expect(requiresReplace).toEqual([]);
    expect(planned.content).toBe("hello");
  });

  it("refuses a path outside the connection root, including through a symlink", async () => {
    const root = await tempDir();
    const p = createLocalProvider();
    await p.configure({ root });
    const cfg = { content: "x", file_permission: "0644", directory_permission: "0755" };
    await expect(p.plan({ address: "local_file.x", type: "local_file", prior: null, config: { ...cfg, filename: "../../etc" } })).rejects.toThrow(
      `local_file.x: path ../../etc is outside the connection root ${root}; use a path inside it`,
    );
    await expect(p.plan({ address: "local_file.x", type: "local_file", prior: null, config: { ...cfg, filename: "/etc/passwd" } })).rejects.toThrow(/is outside the connection root/);
    const elsewhere = await tempDir();
    await symlink(elsewhere, path.join(root, "link"));
    await expect(p.plan({ address: "local_file.x", type: "local_file", prior: null, config: { ...cfg, filename: "link/f.txt" } })).rejects.toThrow(/is outside the connection root/);
  });

  it("creates and deletes a directory, and imports an existing file", async () => {
    const root = await tempDir();
    const p = createLocalProvider();
    await p.configure({ root });
    const d = await create(p, "local_directory", { path: "site" });
    expect((await stat(path.join(root, "site"))).isDirectory()).toBe(true);
    expect(d.id).toBe("site");
    await writeFile(path.join(root, "site/existing.txt"), "kept");
    const imp = await p.importState({ address: "local_file.e", type: "local_file", id: "site/existing.txt" });
    expect(imp.state).toMatchObject({ filename: "site/existing.txt", content: "kept" });
    await p.apply({ address: "local_directory.t", type: "local_directory", prior: d, planned: null });
    expect((await p.read({ address: "local_directory.t", type: "local_directory", state: d })).state).toBeNull();
  });

  it("explains a missing root", async () => {
    const p = createLocalProvider();
    await p.configure({});
    await expect(p.plan({ address: "local_file.x", type: "local_file", prior: null, config: { filename: "a", content: "", file_permission: "0644", directory_permission: "0755" } })).rejects.toThrow(
      /has no root directory; set one on the component's connection/,
    );
  });
});

describe("terraform_data provider", () => {
  it("mirrors input as output and replaces on triggers_replace", async () => {
    const p = createTerraformDataProvider();
    const s = await create(p, "terraform_data", { input: { a: 1 }, triggers_replace: "v1" });
    expect(s.output).toEqual({ a: 1 });
    expect(s.id).toMatch(/^[0-9a-f-]{36}$/);
    const upd = await p.plan({ address: "terraform_data.t", type: "terraform_data", prior: s, config: { input: { a: 2 }, triggers_replace: "v1" } });
    expect(upd.requiresReplace).toEqual([]);
    expect(upd.planned.output).toEqual({ a: 2 });
    expect(upd.planned.id).toBe(s.id);
    const rep = await p.plan({ address: "terraform_data.t", type: "terraform_data", prior: s, config: { input: { a: 1 }, triggers_replace: "v2" } });
    expect(rep.requiresReplace).toEqual(["triggers_replace"]);
  });
});
