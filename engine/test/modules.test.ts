import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { apply, destroy, importResource, plan, refresh, validate, type StateV4 } from "../index";
import { collector, tempDir, writeModule } from "./helpers";

const SHARED = `
variable "prefix" {
  type = string
}
resource "random_pet" "suffix" {
  prefix = var.prefix
}
output "name" {
  value = random_pet.suffix.id
}
`;

const SITE = `
variable "name" {
  type = string
}
variable "pages" {
  type = map(string)
}
module "naming" {
  source = "../shared"
  prefix = var.name
}
resource "local_file" "page" {
  for_each = var.pages
  filename = "\${var.name}/\${each.key}.html"
  content  = "<h1>\${each.value}</h1><p>\${module.naming.name}</p>"
}
output "url" {
  value = "file://\${var.name}/index.html"
}
output "pages" {
  value = local_file.page
}
`;

const ROOT = `
module "site" {
  source = "./modules/site"
  name   = "www"
  pages  = { about = "About", home = "Home" }
}
module "blog" {
  source   = "./modules/site"
  for_each = { en = "English", fr = "French" }
  name     = "blog-\${each.key}"
  pages    = { index = each.value }
}
module "mirror" {
  source     = "./modules/site"
  count      = 1
  name       = "mirror\${count.index}"
  pages      = {}
  depends_on = [module.site]
}
resource "terraform_data" "after" {
  input      = module.site.url
  depends_on = [module.blog]
}
output "url" {
  value = module.site.url
}
output "blog_fr" {
  value = module.blog["fr"].url
}
output "about_file" {
  value = module.site.pages["about"].filename
}
`;

const BUNDLE = { "main.tf": ROOT, "modules/site/main.tf": SITE, "modules/shared/main.tf": SHARED };

describe("modules with local sources", () => {
  it("plans and applies called modules (nested, count, for_each) with OpenTofu's addresses in the plan, UI lines and state", async () => {
    const root = await tempDir();
    const moduleDir = await writeModule(BUNDLE);
    const ui = collector();
    const opts = { moduleDir, state: null as StateV4 | null, providerConfig: { local: { root } } };
    const p = await plan({ ...opts, emit: ui.emit });
    const addrs = p.plan.resource_changes.map((c) => c.address);
    expect([...addrs].sort()).toEqual(
      [
        'module.blog["en"].local_file.page["index"]',
        'module.blog["en"].module.naming.random_pet.suffix',
        'module.blog["fr"].local_file.page["index"]',
        'module.blog["fr"].module.naming.random_pet.suffix',
        "module.mirror[0].module.naming.random_pet.suffix",
        'module.site.local_file.page["about"]',
        'module.site.local_file.page["home"]',
        "module.site.module.naming.random_pet.suffix",
        "terraform_data.after",
      ].sort(),
    );
    expect(p.plan.resource_changes.every((c) => c.action === "create")).toBe(true);
    const about = p.plan.resource_changes.find((c) => c.address === 'module.site.local_file.page["about"]')!;
    expect(about).toMatchObject({ module_address: "module.site", mode: "managed", type: "local_file", name: "page", index: "about" });
    expect(about.change.after).toMatchObject({ filename: "www/about.html" });
    expect(p.plan.resource_changes.find((c) => c.address.startsWith("module.mirror"))!.module_address).toBe("module.mirror[0].module.naming");
    // depends_on on a module waits for everything in it; so does a resource that depends on a module.
    const pos = (a: string) => addrs.indexOf(a);
    expect(pos("terraform_data.after")).toBeGreaterThan(pos('module.blog["fr"].local_file.page["index"]'));
    expect(pos("module.mirror[0].module.naming.random_pet.suffix")).toBeGreaterThan(pos('module.site.local_file.page["home"]'));
    expect(about.depends_on).toContain("module.site.module.naming.random_pet.suffix");
    const line = ui.ofType("planned_change").find((l) => l.change.resource.addr === 'module.site.local_file.page["about"]')!;
    expect(line["@message"]).toBe('module.site.local_file.page["about"]: Plan to create');
    expect(line.change.resource).toMatchObject({ module: "module.site", resource: 'local_file.page["about"]', resource_type: "local_file", resource_name: "page", resource_key: "about" });
    expect(p.plan.output_changes.url).toMatchObject({ actions: ["create"], after: "file://www/index.html" });
    expect(Object.keys(p.plan.configuration.files).sort()).toEqual(["main.tf", "modules/shared/main.tf", "modules/site/main.tf"]);

    const applyUi = collector();
    const r = await apply({ ...opts, emit: applyUi.emit }, p.plan);
    expect(r.diagnostics).toEqual([]);
    expect(r.status).toBe("applied");
    const pet = r.state.resources.find((x) => x.module === "module.site.module.naming")!.instances[0]!.attributes.id as string;
    expect(pet).toMatch(/^www-/);
    expect(await readFile(path.join(root, "www/about.html"), "utf8")).toBe(`<h1>About</h1><p>${pet}</p>`);
    expect(await readFile(path.join(root, "blog-fr/index.html"), "utf8")).toMatch(/^<h1>French<\/h1><p>blog-fr-/);
    const sitePages = r.state.resources.find((x) => x.module === "module.site" && x.type === "local_file")!;
    expect(sitePages).toMatchObject({ mode: "managed", name: "page", provider: 'provider["registry.opentofu.org/hashicorp/local"]' });
    expect(sitePages.instances.map((i) => i.index_key)).toEqual(["about", "home"]);
    expect(r.state.resources.map((x) => x.module ?? "")).toEqual(expect.arrayContaining(['module.blog["en"]', 'module.blog["fr"].module.naming', "module.mirror[0].module.naming"]));
    expect(r.state.outputs).toMatchObject({ url: { value: "file://www/index.html" }, blog_fr: { value: "file://blog-fr/index.html" }, about_file: { value: "www/about.html" } });
    expect(applyUi.ofType("apply_complete").map((l) => l["@message"])).toContain('module.site.local_file.page["about"]: Creation complete after 0s [id=' + r.state.resources.find((x) => x.module === "module.site" && x.type === "local_file")!.instances[0]!.attributes.id + "]");

    // The state loads again: nothing to change, refresh finds no drift.
    const again = await plan({ ...opts, state: r.state });
    expect(again.plan.resource_changes.filter((c) => c.action !== "noop")).toEqual([]);
    expect((await refresh({ ...opts, state: r.state })).changed).toBe(false);

    // A module instance leaving for_each deletes what it held (delete_because_no_module); a page deleted by hand is drift.
    const { rm } = await import("node:fs/promises");
    await rm(path.join(root, "www/home.html"));
    const fewer = { ...BUNDLE, "main.tf": ROOT.replace(`{ en = "English", fr = "French" }`, `{ en = "English" }`).replace(/output "blog_fr" \{[^}]*\}/, "") };
    const moduleDir2 = await writeModule(fewer);
    const p2 = await plan({ ...opts, moduleDir: moduleDir2, state: r.state });
    expect(p2.plan.resource_drift.map((d) => [d.address, d.action, d.module_address])).toEqual([['module.site.local_file.page["home"]', "delete", "module.site"]]);
    const changed = p2.plan.resource_changes.filter((c) => c.action !== "noop").map((c) => [c.address, c.action, c.action_reason ?? null]);
    expect(changed).toEqual(
      expect.arrayContaining([
        ['module.site.local_file.page["home"]', "create", null],
        ['module.blog["fr"].local_file.page["index"]', "delete", "delete_because_no_module"],
        ['module.blog["fr"].module.naming.random_pet.suffix', "delete", "delete_because_no_module"],
      ]),
    );
    expect(changed).toHaveLength(3);
    const order = p2.plan.resource_changes.map((c) => c.address);
    // Deletes in reverse dependency order: the page (which used the name) before the name.
    expect(order.indexOf('module.blog["fr"].local_file.page["index"]')).toBeLessThan(order.indexOf('module.blog["fr"].module.naming.random_pet.suffix'));
    const r2 = await apply({ ...opts, state: r.state }, p2.plan);
    expect(r2.status).toBe("applied");
    await expect(stat(path.join(root, "blog-fr/index.html"))).rejects.toThrow(/ENOENT/);
    expect(await readFile(path.join(root, "www/home.html"), "utf8")).toContain("<h1>Home</h1>");

    const gone = await destroy({ ...opts, moduleDir: moduleDir2, state: r2.state });
    expect(gone.status).toBe("applied");
    expect(gone.state.resources).toEqual([]);
    await expect(stat(path.join(root, "www/about.html"))).rejects.toThrow(/ENOENT/);
  });

  it("imports into a resource inside a module instance", async () => {
    const root = await tempDir();
    const { writeFile, mkdir } = await import("node:fs/promises");
    await mkdir(path.join(root, "www"));
    await writeFile(path.join(root, "www/about.html"), "<h1>About</h1><p>x</p>");
    const moduleDir = await writeModule({
      "main.tf": `module "site" {\n  source = "./modules/page"\n  name   = "www"\n}\n`,
      "modules/page/main.tf": `variable "name" {\n  type = string\n}\nresource "local_file" "page" {\n  for_each = { about = "About" }\n  filename = "\${var.name}/\${each.key}.html"\n  content  = "<h1>\${each.value}</h1><p>x</p>"\n}\n`,
    });
    const opts = { moduleDir, state: null, providerConfig: { local: { root } } };
    const { state } = await importResource(opts, 'module.site.local_file.page["about"]', "www/about.html");
    expect(state.resources[0]).toMatchObject({ module: "module.site", mode: "managed", type: "local_file", name: "page", instances: [{ index_key: "about" }] });
    const p = await plan({ ...opts, state });
    expect(p.plan.resource_changes.map((c) => [c.address, c.action])).toEqual([['module.site.local_file.page["about"]', "noop"]]);
    await expect(importResource(opts, "module.other.local_file.page", "www/about.html")).rejects.toThrow(/Import to non-existent resource/);
  });

  it("refuses remote sources, sources outside the bundle and wrong arguments with file:line and what to do", async () => {
    const refused = async (files: Record<string, string>) => {
      const moduleDir = await writeModule(files);
      const v = await validate(moduleDir);
      expect(v.valid).toBe(false);
      return plan({ moduleDir, state: null });
    };
    await expect(refused({ "main.tf": `\nmodule "vpc" {\n  source = "terraform-aws-modules/vpc/aws"\n}\n` })).rejects.toThrow(
      /main\.tf:3: Unsupported module source: module "vpc" has source "terraform-aws-modules\/vpc\/aws", a registry, git or remote address[\s\S]*Copy the module into the bundle/,
    );
    await expect(refused({ "main.tf": `module "x" {\n  source = "git::https://example.com/x.git"\n}\n` })).rejects.toThrow(/main\.tf:2: Unsupported module source/);
    await expect(refused({ "main.tf": `module "x" {\n  source = "../outside"\n}\n` })).rejects.toThrow(/main\.tf:2: Module source outside the bundle: module "x" has source "\.\.\/outside"/);
    await expect(
      refused({ "main.tf": `module "x" {\n  source = "./modules/x"\n}\n`, "modules/x/main.tf": `module "y" {\n  source = "../../../y"\n}\n` }),
    ).rejects.toThrow(/modules\/x\/main\.tf:2: Module source outside the bundle/);
    await expect(refused({ "main.tf": `module "x" {\n  source = "./nothing"\n}\n` })).rejects.toThrow(/main\.tf:2: Module not found: module "x" has source "\.\/nothing"/);
    const child = `variable "name" {\n  type = string\n}\n`;
    await expect(refused({ "main.tf": `module "x" {\n  source = "./m"\n  name = "a"\n  colour = "red"\n}\n`, "m/main.tf": child })).rejects.toThrow(
      /main\.tf:4: Unsupported argument: an argument named "colour" is not expected in module "x"/,
    );
    await expect(refused({ "main.tf": `module "x" {\n  source = "./m"\n}\n`, "m/main.tf": child })).rejects.toThrow(/main\.tf:1: Missing required argument: module "x" needs the argument "name"/);
    await expect(refused({ "main.tf": `module "x" {\n  source = "./m"\n  name = "a"\n}\noutput "o" {\n  value = module.x.nope\n}\n`, "m/main.tf": child })).rejects.toThrow(
      /main\.tf:6: Unsupported attribute: module "x" has no output named "nope"/,
    );
    await expect(refused({ "main.tf": `module "x" {\n  source = "./m"\n}\n`, "m/main.tf": `module "back" {\n  source = "../"\n}\n` })).rejects.toThrow(/m\/main\.tf:2: Module call cycle/);
  });
});

describe("modules: moves and sensitive outputs", () => {
  it("moved blocks move a resource into a module and rename a module call without replacing anything", async () => {
    const root = await tempDir();
    const child = `resource "local_file" "f" {\n  filename = "f.txt"\n  content  = "x"\n}\n`;
    const first = await writeModule({ "main.tf": child });
    const opts = { state: null, providerConfig: { local: { root } } };
    const p1 = await plan({ ...opts, moduleDir: first });
    const s1 = (await apply(opts, p1.plan)).state;

    const intoModule = await writeModule({
      "main.tf": `module "files" {\n  source = "./files"\n}\nmoved {\n  from = local_file.f\n  to   = module.files.local_file.f\n}\n`,
      "files/main.tf": child,
    });
    const p2 = await plan({ ...opts, moduleDir: intoModule, state: s1 });
    expect(p2.plan.resource_changes.map((c) => [c.address, c.action, c.previous_address])).toEqual([["module.files.local_file.f", "move", "local_file.f"]]);
    const s2 = (await apply({ ...opts, state: s1 }, p2.plan)).state;
    expect(s2.resources.map((r) => [r.module, r.type, r.name])).toEqual([["module.files", "local_file", "f"]]);

    const renamed = await writeModule({
      "main.tf": `module "assets" {\n  source = "./files"\n}\nmoved {\n  from = module.files\n  to   = module.assets\n}\n`,
      "files/main.tf": child,
    });
    const p3 = await plan({ ...opts, moduleDir: renamed, state: s2 });
    expect(p3.plan.resource_changes.map((c) => [c.address, c.action, c.previous_address])).toEqual([["module.assets.local_file.f", "move", "module.files.local_file.f"]]);
  });

  it("a root output that shows a sensitive module output must be sensitive too", async () => {
    const moduleDir = await writeModule({
      "main.tf": `module "secrets" {\n  source = "./s"\n}\noutput "pw" {\n  value = module.secrets.pw\n}\n`,
      "s/main.tf": `resource "random_password" "p" {\n  length = 8\n}\noutput "pw" {\n  value     = random_password.p.result\n  sensitive = true\n}\n`,
    });
    await expect(plan({ moduleDir, state: null })).rejects.toThrow(/main\.tf:4: Output refers to sensitive values: output "pw" shows module\.secrets\.pw/);
    const leaky = await writeModule({ "main.tf": `module "secrets" {\n  source = "./s"\n}\n`, "s/main.tf": `resource "random_password" "p" {\n  length = 8\n}\noutput "pw" {\n  value = random_password.p.result\n}\n` });
    await expect(plan({ moduleDir: leaky, state: null })).rejects.toThrow(/s\/main\.tf:4: Output refers to sensitive values/);
  });
});

describe("modules: links", () => {
  it("a module folder that is a link out of the bundle is not read", async () => {
    const { symlink } = await import("node:fs/promises");
    const elsewhere = await writeModule({ "main.tf": `resource "random_pet" "p" {}\n` });
    const moduleDir = await writeModule({ "main.tf": `module "x" {\n  source = "./linked"\n}\n` });
    await symlink(elsewhere, path.join(moduleDir, "linked"));
    await expect(plan({ moduleDir, state: null })).rejects.toThrow(/main\.tf:2: Module not found: module "x" has source "\.\/linked"/);
  });
});
