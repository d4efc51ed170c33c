import path from "node:path";
import { readFile, stat } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { LocalStateBackend, StateLockedError, formatLockError, apply, plan, ENGINE_VERSION } from "../index";
import { CATALOG, tempDir } from "../test/helpers";

describe("local state backend", () => {
  it("refuses a second locker with OpenTofu's lock error naming the holder", async () => {
    const dir = await tempDir();
    const backend = new LocalStateBackend(path.join(dir, "terraform.tfstate"));
    const held = await backend.lock({ Operation: "OperationTypeApply", Who: "ada@runner-1" });
    expect(held).toMatchObject({ Operation: "OperationTypeApply", Who: "ada@runner-1", Version: ENGINE_VERSION, Info: "", Path: path.join(dir, "terraform.tfstate") });
    expect(held.ID).toMatch(/^[0-9a-f-]{36}$/);

    const other = new LocalStateBackend(path.join(dir, "terraform.tfstate"));
    const err = await other.lock({ Operation: "OperationTypePlan" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StateLockedError);
    const message = (err as Error).message;
    expect(message.startsWith("Error acquiring the state lock\n\nError message: state is locked\nLock Info:\n")).toBe(true);
    expect(message).toContain(`  ID:        ${held.ID}\n`);
    expect(message).toContain(`  Path:      ${held.Path}\n`);
    expect(message).toContain("  Operation: OperationTypeApply\n");
    expect(message).toContain("  Who:       ada@runner-1\n");
    expect(message).toContain(`  Version:   ${ENGINE_VERSION}\n`);
    expect(message).toContain(`  Created:   ${held.Created}\n`);
    expect(message).toContain("  Info:      \n\nPlanton acquires a state lock to protect the state from being written by multiple users at the same time.");
    expect(message).toBe(formatLockError(held));
    expect((err as StateLockedError).holder).toEqual(held);

    await expect(other.unlock("not-the-id")).rejects.toThrow(/does not match the existing lock ID/);
    await backend.unlock(held.ID);
    const again = await other.lock({ Operation: "OperationTypePlan" });
    await other.unlock(again.ID);
  });

  it("stores state in OpenTofu's version-4 layout", async () => {
    const dir = await tempDir();
    const root = await tempDir();
    const backend = new LocalStateBackend(path.join(dir, "terraform.tfstate"));
    expect(await backend.get()).toBeNull();
    const opts = { moduleDir: path.join(CATALOG, "database-credentials"), variables: { database_name: "shop" }, state: null, providerConfig: { local: { root } } };
    const p = await plan(opts);
    const r = await apply({ ...opts, persistState: (s) => backend.put(s) }, p.plan);
    const onDisk = JSON.parse(await readFile(path.join(dir, "terraform.tfstate"), "utf8"));
    expect(onDisk).toEqual(r.state);
    expect(await backend.get()).toEqual(r.state);
    expect(Object.keys(onDisk).sort()).toEqual(["check_results", "lineage", "outputs", "resources", "serial", "terraform_version", "version"]);
    expect(onDisk).toMatchObject({ version: 4, terraform_version: ENGINE_VERSION, serial: expect.any(Number), lineage: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(onDisk.outputs.password).toEqual({ value: r.outputs.password!.value, type: "string", sensitive: true });
    // It holds that password: readable by its owner only.
    expect((await stat(path.join(dir, "terraform.tfstate"))).mode & 0o777).toBe(0o600);
    expect(onDisk.outputs.username).toEqual({ value: "app", type: "string" });
    const pw = onDisk.resources.find((x: { type: string }) => x.type === "random_password");
    expect(pw).toMatchObject({ mode: "managed", type: "random_password", name: "password", provider: 'provider["registry.opentofu.org/hashicorp/random"]' });
    expect(pw.instances[0]).toMatchObject({ schema_version: 3, sensitive_attributes: [[{ type: "get_attr", value: "result" }]], dependencies: [] });
    const file = onDisk.resources.find((x: { type: string }) => x.type === "local_file");
    expect(file.provider).toBe('provider["registry.opentofu.org/hashicorp/local"]');
    expect(file.instances[0].dependencies).toEqual(["random_id.db_suffix"]);
    const data = onDisk.resources.find((x: { type: string }) => x.type === "terraform_data");
    expect(data.provider).toBe('provider["terraform.io/builtin/terraform"]');
    expect(data.instances[0].dependencies).toEqual(["random_id.db_suffix", "random_password.password"]);
  });
});
