// The `local` kind on real files in a temporary folder: the conformance suite, then what only a
// folder has (key escaping, file modes, OpenTofu's lock file, a second process seeing the lock).
import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { mkdir, readFile, readdir, stat, writeFile } from "node:fs/promises";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { promisify } from "node:util";
import os from "node:os";
import path from "node:path";
import { conformance } from "./test/conformance";
import { LocalStateStore, StateKeyRefused } from "./local";
import { StateBackend, StateLockedError } from "./rules";

const root = mkdtempSync(path.join(os.tmpdir(), "planton-local-backend-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const state = (serial: number, lineage: string) => new TextEncoder().encode(JSON.stringify({ version: 4, serial, lineage, resources: [] }));

conformance("local", async () => new LocalStateStore(root));

describe("local state backend", () => {
  it("refuses keys that leave the folder, with what to use instead", async () => {
    const b = new StateBackend(new LocalStateStore(path.join(root, "escape")));
    for (const key of ["../outside.tfstate", "a/../../outside.tfstate", "/etc/passwd", "a\0b", "", "a//b", "./a", "x.tfstate.lock.info"]) {
      const refused = await b.read(key).catch((e) => e);
      expect(refused, key).toBeInstanceOf(StateKeyRefused);
      expect(refused.message).toMatch(/^Nothing was done under .*: a local state key is a relative path inside the backend's folder, and this one .*\. Use a key like "component\/environment\/terraform.tfstate"\.$/);
      await expect(b.lock(key, { Operation: "OperationTypeApply" })).rejects.toBeInstanceOf(StateKeyRefused);
      await expect(b.delete(key)).rejects.toBeInstanceOf(StateKeyRefused);
    }
    await expect(b.list("../")).rejects.toBeInstanceOf(StateKeyRefused);
    expect(await readdir(root)).not.toContain("outside.tfstate");
  });

  it("writes the state whole, readable by its owner only, in folders only its owner can enter, and keeps OpenTofu's lock file", async () => {
    const store = new LocalStateStore(path.join(root, "modes"));
    const b = new StateBackend(store);
    const lock = await b.lock("prod/web/terraform.tfstate", { Operation: "OperationTypeApply", Who: "alice@ci" });
    const lockFile = path.join(root, "modes/prod/web/terraform.tfstate.lock.info");
    expect(JSON.parse(await readFile(lockFile, "utf8"))).toEqual(lock);
    expect((await stat(lockFile)).mode & 0o777).toBe(0o600);
    expect(Object.keys(lock).sort()).toEqual(["Created", "ID", "Info", "Operation", "Path", "Version", "Who"]);
    await b.write("prod/web/terraform.tfstate", state(1, "L"), lock.ID);
    const file = path.join(root, "modes/prod/web/terraform.tfstate");
    expect(await readFile(file)).toEqual(Buffer.from(state(1, "L")));
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.join(root, "modes/prod/web"))).mode & 0o777).toBe(0o700);
    expect((await stat(path.join(root, "modes/prod"))).mode & 0o777).toBe(0o700);
    // No temporary file is left beside the state, and the lock file is not listed as a state.
    expect((await readdir(path.join(root, "modes/prod/web"))).sort()).toEqual(["terraform.tfstate", "terraform.tfstate.lock.info"]);
    expect((await b.list()).map((o) => o.key)).toEqual(["prod/web/terraform.tfstate"]);
    await b.delete("prod/web/terraform.tfstate");
    expect(await readdir(path.join(root, "modes/prod/web"))).toEqual([]);
    expect(await store.lockHolder("prod/web/terraform.tfstate")).toBeNull();
  });

  it("honours a lock file another program wrote (OpenTofu's lock info JSON)", async () => {
    const b = new StateBackend(new LocalStateStore(path.join(root, "foreign")));
    await mkdir(path.join(root, "foreign"), { recursive: true });
    const holder = { ID: "tofu-lock-1", Path: "s.tfstate", Operation: "OperationTypePlan", Who: "bob@laptop", Version: "1.8.0", Created: "2026-01-01T00:00:00Z", Info: "" };
    await writeFile(path.join(root, "foreign/s.tfstate.lock.info"), JSON.stringify(holder));
    const refused = await b.lock("s.tfstate", { Operation: "OperationTypeApply" }).catch((e) => e);
    expect(refused).toBeInstanceOf(StateLockedError);
    expect(refused.holder).toEqual(holder);
    await expect(b.unlock("s.tfstate", "not-it")).rejects.toBeInstanceOf(StateLockedError);
    await b.unlock("s.tfstate", "tofu-lock-1");
    await expect(b.unlock("s.tfstate", "tofu-lock-1")).rejects.toThrow(/^The lock on s.tfstate was not released: the state is not locked/);
  });

  it("a file that is not a state is reported as such on read", async () => {
    const b = new StateBackend(new LocalStateStore(path.join(root, "corrupt")));
    await mkdir(path.join(root, "corrupt"), { recursive: true });
    await writeFile(path.join(root, "corrupt/s.tfstate"), "{ not json");
    await expect(b.read("s.tfstate")).rejects.toThrow(/^The state under s.tfstate was not read: what is stored there is not an OpenTofu state \(JSON with a serial and a lineage\)\. Roll back/);
  });

  it("the checksum is of the whole file, whether it is read on the calling thread (a small state) or through the thread pool (a large one)", async () => {
    const store = new LocalStateStore(path.join(root, "checksums"));
    const big = { version: 4, serial: 1, lineage: "big", resources: [{ type: "t", name: "n", instances: [{ attributes: { blob: "x".repeat(300_000) } }] }] };
    for (const [key, doc] of [["small/terraform.tfstate", { version: 4, serial: 1, lineage: "small", resources: [] }], ["big/terraform.tfstate", big]] as const) {
      const bytes = new TextEncoder().encode(JSON.stringify(doc));
      await store.write(key, { bytes, serial: doc.serial, lineage: doc.lineage, checksum: "" });
      expect(await store.checksum(key), key).toBe(createHash("sha256").update(bytes).digest("hex"));
    }
    expect(await store.checksum("missing/terraform.tfstate")).toBeNull();
  });

  it("a FIFO planted at a state's or a lock's name is read as not a state, without waiting for a writer", async () => {
    const dir = path.join(root, "fifo");
    await mkdir(dir, { recursive: true });
    await promisify(execFile)("mkfifo", [path.join(dir, "s.tfstate"), path.join(dir, "t.tfstate.lock.info")]);
    const b = new StateBackend(new LocalStateStore(dir));
    await expect(b.read("s.tfstate")).rejects.toThrow(/is not an OpenTofu state/);
    expect(await new LocalStateStore(dir).checksum("s.tfstate")).toBe(createHash("sha256").update("").digest("hex"));
    await expect(new LocalStateStore(dir).lockHolder("t.tfstate")).rejects.toThrow();
  });

  it("a second process on the same folder sees the lock and its holder", async () => {
    const dir = path.join(root, "two-processes");
    const b = new StateBackend(new LocalStateStore(dir));
    const held = await b.lock("shared/terraform.tfstate", { Operation: "OperationTypeApply", Who: "first@process" });
    // Another Node process opens its own store on the folder and tries the same lock.
    const script = `
      import { LocalStateStore } from ${JSON.stringify(path.resolve(import.meta.dirname, "local.ts"))};
      const store = new LocalStateStore(${JSON.stringify(dir)});
      const result = await store.lock("shared/terraform.tfstate", { Operation: "OperationTypeApply" }).then(() => ({ locked: true }), (e) => ({ name: e.name, holder: e.holder }));
      process.stdout.write(JSON.stringify(result));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: path.resolve(import.meta.dirname, "..") });
    expect(JSON.parse(stdout)).toEqual({ name: "StateLockedError", holder: held });
    await b.unlock("shared/terraform.tfstate", held.ID);
  });
});
