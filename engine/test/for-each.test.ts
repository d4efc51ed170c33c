import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { apply, destroy, importResource, plan, refresh, type StateV4 } from "../index";
import { collector, tempDir, writeModule, applied } from "./helpers";


const PAGES = `
variable "pages" {
  type    = map(string)
  default = { about = "About us", home = "Welcome" }
}
variable "tags" {
  type    = set(string)
  default = ["a", "b"]
}
resource "local_file" "page" {
  for_each = var.pages
  filename = "site/\${each.key}.html"
  content  = "<h1>\${each.value}</h1>"
}
resource "terraform_data" "tag" {
  for_each = var.tags
  input    = "tag-\${each.key}-\${each.value}"
}
resource "random_pet" "n" {
  count = 2
}
resource "terraform_data" "index" {
  input = {
    home_file  = local_file.page["home"].filename
    all_files  = local_file.page
    pets       = random_pet.n[*].id
    first_tag  = terraform_data.tag["a"].input
  }
}
output "home" {
  value = local_file.page["home"].filename
}
output "pets" {
  value = random_pet.n[*].id
}
`;

describe("for_each on resources", () => {
  it("plans one instance per map key and set element, with OpenTofu's addresses, and writes the files", async () => {
    const root = await tempDir();
    const moduleDir = await writeModule({ "main.tf": PAGES });
    const ui = collector();
    const opts = { moduleDir, state: null, providerConfig: { local: { root } } };
    const p = await plan({ ...opts, emit: ui.emit });
    const creates = p.plan.resource_changes.map((c) => [c.address, c.action, c.index ?? null]);
    expect(creates).toEqual(
      expect.arrayContaining([
        ['local_file.page["about"]', "create", "about"],
        ['local_file.page["home"]', "create", "home"],
        ['terraform_data.tag["a"]', "create", "a"],
        ['terraform_data.tag["b"]', "create", "b"],
        ["random_pet.n[0]", "create", 0],
        ["random_pet.n[1]", "create", 1],
        ["terraform_data.index", "create", null],
      ]),
    );
    expect(p.plan.resource_changes).toHaveLength(7);
    const about = p.plan.resource_changes.find((c) => c.address === 'local_file.page["about"]')!;
    expect(about).toMatchObject({ mode: "managed", type: "local_file", name: "page", index: "about" });
    expect(about).not.toHaveProperty("module_address");
    expect(about.change.after).toMatchObject({ filename: "site/about.html", content: "<h1>About us</h1>" });
    // The index waits for everything it refers to.
    const order = p.plan.resource_changes.map((c) => c.address);
    expect(order.indexOf("terraform_data.index")).toBeGreaterThan(order.indexOf('local_file.page["home"]'));
    const line = ui.ofType("planned_change").find((l) => l.change.resource.addr === 'local_file.page["about"]')!;
    expect(line["@message"]).toBe('local_file.page["about"]: Plan to create');
    expect(line.change.resource).toMatchObject({ module: "", resource: 'local_file.page["about"]', resource_type: "local_file", resource_name: "page", resource_key: "about" });

    const r = await apply(opts, p.plan);
    expect(r.status).toBe("applied");
    expect(await readFile(path.join(root, "site/about.html"), "utf8")).toBe("<h1>About us</h1>");
    expect(await readFile(path.join(root, "site/home.html"), "utf8")).toBe("<h1>Welcome</h1>");
    const page = r.state.resources.find((x) => x.type === "local_file")!;
    expect(page.instances.map((i) => i.index_key)).toEqual(["about", "home"]);
    const index = r.state.resources.find((x) => x.name === "index")!.instances[0]!.attributes.input as Record<string, unknown>;
    expect(index.home_file).toBe("site/home.html");
    expect(Object.keys(index.all_files as object)).toEqual(["about", "home"]);
    expect((index.pets as string[]).length).toBe(2);
    expect(index.first_tag).toBe("tag-a-a");
    expect(r.state.outputs.home!.value).toBe("site/home.html");
    expect(r.state.resources.find((x) => x.name === "index")!.instances[0]!.dependencies).toEqual(
      expect.arrayContaining(["local_file.page", "random_pet.n", "terraform_data.tag"]),
    );

    // State written with string keys loads again: nothing to do, and a refresh finds no drift.
    const again = await plan({ ...opts, state: r.state });
    expect(again.plan.resource_changes.every((c) => c.action === "noop")).toBe(true);
    expect((await refresh({ ...opts, state: r.state })).changed).toBe(false);
  });

  it("a key leaving the map deletes that instance only (delete_because_each_key), and a new key creates one", async () => {
    const root = await tempDir();
    const moduleDir = await writeModule({ "main.tf": PAGES });
    const opts = { moduleDir, state: null, providerConfig: { local: { root } } };
    const state = await applied(opts);
    const ui = collector();
    const p = await plan({ ...opts, state, variables: { pages: { home: "Welcome", contact: "Write to us" } }, emit: ui.emit });
    const changed = p.plan.resource_changes.filter((c) => c.action !== "noop").map((c) => [c.address, c.action, c.action_reason ?? null]);
    expect(changed).toEqual(
      expect.arrayContaining([
        ['local_file.page["contact"]', "create", null],
        ['local_file.page["about"]', "delete", "delete_because_each_key"],
        ["terraform_data.index", "update", null],
      ]),
    );
    expect(ui.ofType("planned_change").find((l) => l.change.action === "delete")!.change).toMatchObject({ reason: "delete_because_each_key" });
    const r = await apply({ ...opts, state }, p.plan);
    expect(r.status).toBe("applied");
    await expect(stat(path.join(root, "site/about.html"))).rejects.toThrow(/ENOENT/);
    expect(await readFile(path.join(root, "site/contact.html"), "utf8")).toBe("<h1>Write to us</h1>");

    const gone = await destroy({ ...opts, state: r.state, variables: { pages: { home: "Welcome", contact: "Write to us" } } });
    expect(gone.status).toBe("applied");
    expect(gone.state.resources).toEqual([]);
  });

  it("imports into a for_each instance by its quoted key", async () => {
    const root = await tempDir();
    const moduleDir = await writeModule({
      "main.tf": `
variable "names" {
  type    = set(string)
  default = ["about"]
}
resource "local_file" "page" {
  for_each = var.names
  filename = "\${each.key}.txt"
  content  = "hi"
}
`,
    });
    const { writeFile } = await import("node:fs/promises");
    await writeFile(path.join(root, "about.txt"), "hi");
    const opts = { moduleDir, state: null, providerConfig: { local: { root } } };
    await expect(importResource(opts, 'local_file.page["other"]', "about.txt")).rejects.toThrow(/Invalid import address: local_file.page\["other"\] does not match the module; use local_file.page\["about"\]/);
    const { state } = await importResource(opts, 'local_file.page["about"]', "about.txt");
    expect(state.resources[0]).toMatchObject({ mode: "managed", type: "local_file", name: "page", instances: [{ index_key: "about" }] });
    const p = await plan({ ...opts, state });
    expect(p.plan.resource_changes.map((c) => [c.address, c.action])).toEqual([['local_file.page["about"]', "noop"]]);
  });

  it("loads a state written before for_each and modules existed (numeric index_key, no module) and plans no change", async () => {
    const moduleDir = await writeModule({ "main.tf": `resource "random_pet" "n" {\n  count = 2\n}\n` });
    const pet = (i: number) => ({ index_key: i, schema_version: 0, attributes: { length: 2, separator: "-", prefix: null, keepers: null, id: `pet-${i}` }, sensitive_attributes: [], dependencies: [] });
    const old = JSON.parse(
      JSON.stringify({
        version: 4,
        terraform_version: "0.1.0",
        serial: 3,
        lineage: "2d3e0c1a-0000-4000-8000-000000000000",
        outputs: {},
        resources: [{ mode: "managed", type: "random_pet", name: "n", provider: 'provider["registry.opentofu.org/hashicorp/random"]', instances: [pet(0), pet(1)] }],
        check_results: null,
      }),
    ) as StateV4;
    const p = await plan({ moduleDir, state: old });
    expect(p.plan.resource_changes.map((c) => [c.address, c.action, c.index])).toEqual([
      ["random_pet.n[0]", "noop", 0],
      ["random_pet.n[1]", "noop", 1],
    ]);
    const fewer = await writeModule({ "main.tf": `resource "random_pet" "n" {\n  count = 1\n}\n` });
    const p2 = await plan({ moduleDir: fewer, state: old });
    expect(p2.plan.resource_changes.find((c) => c.action === "delete")).toMatchObject({ address: "random_pet.n[1]", action_reason: "delete_because_count_index" });
  });

  it("refuses for_each values it cannot expand, with file:line", async () => {
    const bad = async (body: string) => {
      const moduleDir = await writeModule({ "main.tf": body });
      return plan({ moduleDir, state: null });
    };
    await expect(bad(`resource "terraform_data" "x" {\n  for_each = ["a", "b"]\n  count = 2\n}\n`)).rejects.toThrow(/main\.tf:2: Invalid combination of "count" and "for_each"/);
    await expect(bad(`resource "terraform_data" "x" {\n  for_each = "a"\n}\n`)).rejects.toThrow(/main\.tf:2: Invalid for_each argument: .*must be a map, or set of strings/);
    await expect(bad(`resource "terraform_data" "x" {\n  for_each = [1, 2]\n}\n`)).rejects.toThrow(/main\.tf:2: Invalid for_each argument: a set given to for_each must hold strings only/);
    await expect(bad(`resource "random_pet" "p" {}\nresource "terraform_data" "x" {\n  for_each = { (random_pet.p.id) = 1 }\n}\n`)).rejects.toThrow(
      /main\.tf:3: Invalid for_each argument: the keys of .* cannot be determined until apply/,
    );
    await expect(bad(`resource "terraform_data" "x" {\n  input = each.key\n}\n`)).rejects.toThrow(/main\.tf:2: Invalid reference: each.key and each.value are only available/);
  });
});
