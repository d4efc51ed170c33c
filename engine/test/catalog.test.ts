import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { apply, plan, refresh } from "../index";
import { CATALOG, collector, persisted, tempDir } from "./helpers";

describe("catalog module static-site", () => {
  it("plans, applies and then refreshes with no drift", async () => {
    const root = await tempDir();
    const ui = collector();
    const opts = { moduleDir: path.join(CATALOG, "static-site"), variables: { site_name: "docs" }, state: null, providerConfig: { local: { root } }, emit: ui.emit };
    const p = await plan(opts);
    expect(p.plan.resource_changes.map((c) => [c.address, c.action])).toEqual([
      ["random_pet.suffix", "create"],
      ["local_directory.site", "create"],
      ["local_file.index", "create"],
      ["local_file.robots", "create"],
      ["terraform_data.manifest", "create"],
    ]);
    expect(p.plan.summary).toMatchObject({ add: 5, change: 0, remove: 0 });
    const store = persisted();
    const result = await apply({ ...opts, persistState: store.persistState }, p.plan);
    expect(result.status).toBe("applied");
    expect(result.diagnostics).toEqual([]);
    const sitePath = result.outputs.site_path!.value as string;
    expect(sitePath).toMatch(/^sites\/docs-[a-z]+-[a-z]+$/);
    const html = await readFile(path.join(root, sitePath, "index.html"), "utf8");
    expect(html).toContain("<title>Hello from Planton</title>");
    expect(html).toContain("DOCS has 2 pages.");
    expect(await readFile(path.join(root, sitePath, "robots.txt"), "utf8")).toBe("User-agent: *\nAllow: /\n");
    expect(result.outputs.index_sha256!.value).toMatch(/^[0-9a-f]{64}$/);

    const ui2 = collector();
    const r = await refresh({ ...opts, state: result.state, emit: ui2.emit });
    expect(r.drift).toEqual([]);
    expect(r.changed).toBe(false);
    expect(r.state.serial).toBe(result.state.serial);
    const again = await plan({ ...opts, state: result.state });
    expect(again.plan.resource_changes.every((c) => c.action === "noop")).toBe(true);
  });
});

describe("catalog module database-credentials", () => {
  it("writes the env file without the password and keeps the password sensitive", async () => {
    const root = await tempDir();
    const ui = collector();
    const opts = { moduleDir: path.join(CATALOG, "database-credentials"), variables: { database_name: "orders" }, state: null, providerConfig: { local: { root } }, emit: ui.emit };
    const p = await plan(opts);
    const result = await apply(opts, p.plan);
    expect(result.status).toBe("applied");
    const password = result.outputs.password!.value as string;
    expect(password).toHaveLength(24);
    expect(result.outputs.password!.sensitive).toBe(true);
    const env = await readFile(path.join(root, "credentials/orders.env"), "utf8");
    expect(env).toMatch(/^DB_NAME=orders_[0-9a-f]{8}\nDB_USER=app\n$/);
    expect(env).not.toContain(password);
    const outputsLine = ui.ofType("outputs").at(-1)!;
    expect(outputsLine.outputs.password).toEqual({ sensitive: true, type: "string" });
    expect(JSON.stringify(ui.lines)).not.toContain(password);
    expect(outputsLine.outputs.username).toMatchObject({ sensitive: false, value: "app" });
    const pw = result.state.resources.find((r) => r.type === "random_password")!;
    expect(pw.instances[0]!.sensitive_attributes).toEqual([[{ type: "get_attr", value: "result" }]]);
    const r = await refresh({ ...opts, state: result.state });
    expect(r.changed).toBe(false);
  });
});
