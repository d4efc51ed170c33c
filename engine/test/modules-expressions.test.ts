import { readFile, readdir } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { apply, plan, reviewPlan } from "../index";
import { SENSITIVE_VALUE } from "../../lib/secrets";
import type { Value } from "../values";
import { collector, tempDir, writeModule, unzip } from "./helpers";

// engine-structure (module calls with for_each, toset(), dynamic blocks, data sources) and engine-expr
// (for expressions, templatefile(), variable validation, sensitivity) working together: a root
// module calls a child module once per site, the child renders its own template file.

const ROOT = {
  "main.tf": `
variable "sites" {
  type = list(object({
    name  = string
    pages = optional(list(string), ["index"])
  }))
}

variable "api_token" {
  type      = string
  sensitive = true
}

module "site" {
  source   = "./modules/site"
  for_each = {for s in var.sites : s.name => s}
  name     = each.value.name
  pages    = each.value.pages
  token    = var.api_token
}

output "indexes" {
  value = {for k, m in module.site : k => m.index_file}
}

output "envs" {
  value     = {for k, m in module.site : k => m.env}
  sensitive = true
}
`,
  // A decoy: file("templates/page.tpl") without path.module would read this one.
  "templates/page.tpl": "ROOT TEMPLATE\n",
  "modules/site/variables.tf": `
variable "name" {
  type = string
  validation {
    condition     = can(regex("^[a-z][a-z0-9-]*$", var.name))
    error_message = "The site name must start with a letter and use only lowercase letters, digits and dashes."
  }
}

variable "pages" {
  type = list(string)
}

variable "token" {
  type = string
}
`,
  "modules/site/main.tf": `
resource "local_file" "page" {
  for_each = toset(var.pages)
  filename = "\${var.name}/\${each.key}.html"
  content  = templatefile("\${path.module}/templates/page.tpl", { site = var.name, page = each.value, others = [for p in var.pages : p if p != each.value] })
}

resource "local_file" "env" {
  filename = "\${var.name}/app.env"
  content  = "TOKEN=\${var.token}\\n"
}

data "archive_file" "bundle" {
  type        = "zip"
  output_path = "\${var.name}/pages.zip"
  dynamic "source" {
    for_each = {for p in var.pages : p => upper(p)}
    iterator = page
    content {
      filename = "\${page.key}.txt"
      content  = page.value
    }
  }
}
`,
  "modules/site/outputs.tf": `
output "index_file" {
  value = local_file.page["index"].filename
}

output "env" {
  value     = local_file.env.content
  sensitive = true
}

output "archive" {
  value = data.archive_file.bundle.output_path
}
`,
  "modules/site/templates/page.tpl": "<h1>${site}: ${page}</h1>\n%{ for o in others ~}\n<a href=\"${o}.html\">${o}</a>\n%{ endfor ~}\n",
};

const TOKEN = "tok-9f2e-secret-7781";

const SITES: Value = [
  { name: "docs", pages: ["index", "about"] },
  { name: "blog" }, // pages: the optional attribute's default
];

describe("module calls with for expressions, templates, validation and sensitive values", () => {
  it("plans and applies a for_each module call over a for expression, with the child's own template, toset(), a dynamic block, and the sensitive value masked", async () => {
    const root = await tempDir();
    const moduleDir = await writeModule(ROOT);
    const ui = collector();
    const opts = { moduleDir, state: null, providerConfig: { local: { root } }, variables: { sites: SITES, api_token: TOKEN }, emit: ui.emit };
    const p = await plan(opts);

    expect(p.plan.resource_changes.map((c) => [c.address, c.action]).sort()).toEqual([
      ['module.site["blog"].local_file.env', "create"],
      ['module.site["blog"].local_file.page["index"]', "create"],
      ['module.site["docs"].local_file.env', "create"],
      ['module.site["docs"].local_file.page["about"]', "create"],
      ['module.site["docs"].local_file.page["index"]', "create"],
    ]);
    const change = (a: string) => p.plan.resource_changes.find((c) => c.address === a)!;
    expect(change('module.site["docs"].local_file.page["about"]')).toMatchObject({ module_address: 'module.site["docs"]', index: "about" });
    // The child's template, not the root's decoy; the for expression inside the vars argument.
    expect(change('module.site["docs"].local_file.page["index"]').change.after).toMatchObject({ content: '<h1>docs: index</h1>\n<a href="about.html">about</a>\n' });
    expect(change('module.site["blog"].local_file.page["index"]').change.after).toMatchObject({ content: "<h1>blog: index</h1>\n" });

    // The token reaches the child's non-sensitive variable with its mark: the env file's content is sensitive.
    expect(change('module.site["docs"].local_file.env').change.after_sensitive).toMatchObject({ content: true });
    expect(change('module.site["docs"].local_file.page["index"]').change.after_sensitive).not.toMatchObject({ content: true });
    expect(p.plan.variables.api_token).toEqual({ value: TOKEN, sensitive: true });
    const review = JSON.stringify(reviewPlan(p.plan));
    expect(review).not.toContain(TOKEN);
    expect(review).toContain(SENSITIVE_VALUE);
    expect(JSON.stringify(ui.lines)).not.toContain(TOKEN);
    expect(ui.ofType("planned_change").map((l) => l.change.resource.addr)).toContain('module.site["docs"].local_file.env');
    expect(p.plan.output_changes.indexes).toMatchObject({ after: { blog: "blog/index.html", docs: "docs/index.html" }, sensitive: false });
    expect(p.plan.output_changes.envs).toMatchObject({ sensitive: true });
    expect(ui.ofType("outputs").at(-1)!.outputs.envs).toEqual({ sensitive: true, action: "create" });
    // The saved plan keeps the child's template, so apply renders the same page.
    expect(p.plan.configuration.files["modules/site/templates/page.tpl"]).toBe(ROOT["modules/site/templates/page.tpl"]);

    // The data source with a dynamic block was read during the plan, once per module instance.
    const archives = p.plan.prior_state.resources.filter((r) => r.type === "archive_file");
    expect(archives.map((r) => r.module).sort()).toEqual(['module.site["blog"]', 'module.site["docs"]']);
    const zip = await readFile(path.join(root, "docs/pages.zip"));
    const files = await unzip(zip);
    expect(Object.keys(files).sort()).toEqual(["about.txt", "index.txt"]);
    expect(files["about.txt"]).toBe("ABOUT");

    const applyUi = collector();
    const done = await apply({ state: null, providerConfig: { local: { root } }, emit: applyUi.emit }, p.plan);
    expect(done.status).toBe("applied");
    expect(await readFile(path.join(root, "docs/about.html"), "utf8")).toBe('<h1>docs: about</h1>\n<a href="index.html">index</a>\n');
    expect(await readFile(path.join(root, "blog/index.html"), "utf8")).toBe("<h1>blog: index</h1>\n");
    expect(await readFile(path.join(root, "docs/app.env"), "utf8")).toBe(`TOKEN=${TOKEN}\n`);
    expect((await readdir(root)).sort()).toEqual(["blog", "docs"]);
    const env = done.state.resources.find((r) => r.module === 'module.site["docs"]' && r.name === "env")!.instances[0]!;
    expect(env.sensitive_attributes).toContainEqual([{ type: "get_attr", value: "content" }]);
    expect(done.state.outputs.indexes!.value).toEqual({ blog: "blog/index.html", docs: "docs/index.html" });
    expect(done.state.outputs.envs).toMatchObject({ sensitive: true, value: { blog: `TOKEN=${TOKEN}\n`, docs: `TOKEN=${TOKEN}\n` } });
    expect(JSON.stringify(applyUi.lines)).not.toContain(TOKEN);

    // Nothing to do the second time.
    const again = await plan({ ...opts, state: done.state, emit: undefined });
    expect(again.plan.resource_changes.filter((c) => c.mode === "managed").map((c) => c.action)).toEqual(["noop", "noop", "noop", "noop", "noop"]);
  });

  it("a site name the child's validation block refuses stops the plan with its error_message and the child's file:line", async () => {
    const root = await tempDir();
    const moduleDir = await writeModule(ROOT);
    const ui = collector();
    const opts = { moduleDir, state: null, providerConfig: { local: { root } }, variables: { sites: [{ name: "docs" }, { name: "My Site" }], api_token: TOKEN }, emit: ui.emit };
    await expect(plan(opts)).rejects.toThrow(
      /^modules\/site\/variables\.tf:5: Invalid value for variable\nThe site name must start with a letter and use only lowercase letters, digits and dashes\.\n\nThis was checked by the validation rule at modules\/site\/variables\.tf:4 for var\.name\.\nGiven by module module\.site\["My Site"\] \(argument name at main\.tf:17\): give the module block a value the variable accepts\.$/,
    );
    expect(ui.ofType("diagnostic")[0]!.diagnostic).toMatchObject({ severity: "error", summary: "Invalid value for variable", range: { filename: "modules/site/variables.tf", start: { line: 5 } } });
    expect(JSON.stringify(ui.lines)).not.toContain(TOKEN);
    expect(await readdir(root)).toEqual([]);
  });

  it("a child's variable of the wrong type is refused, naming the module instance", async () => {
    const moduleDir = await writeModule({ ...ROOT, "main.tf": ROOT["main.tf"].replace("pages    = each.value.pages", 'pages    = "index"') });
    await expect(plan({ moduleDir, state: null, providerConfig: { local: { root: await tempDir() } }, variables: { sites: SITES, api_token: TOKEN } })).rejects.toThrow(
      /^modules\/site\/variables\.tf:10: Invalid value for input variable\nThe given value is not suitable for var\.pages declared at modules\/site\/variables\.tf:10: list of string required\.\nGiven by module module\.site\["blog"\]/,
    );
  });

  it("a child's output that shows the sensitive value must say sensitive = true, even where nothing uses it", async () => {
    const moduleDir = await writeModule({ ...ROOT, "modules/site/leak.tf": `output "leak" {\n  value = upper(var.token)\n}\n` });
    const ui = collector();
    await expect(plan({ moduleDir, state: null, providerConfig: { local: { root: await tempDir() } }, variables: { sites: SITES, api_token: TOKEN }, emit: ui.emit })).rejects.toThrow(
      /^modules\/site\/leak\.tf:1: Output refers to sensitive values: output "leak" shows a value derived from a sensitive value/,
    );
    expect(JSON.stringify(ui.lines)).not.toContain(TOKEN);
    // Marked, it is masked where the root uses it.
    const marked = await writeModule({
      ...ROOT,
      "modules/site/leak.tf": `output "leak" {\n  value     = upper(var.token)\n  sensitive = true\n}\n`,
      "leak.tf": `output "leaks" {\n  value = [for m in module.site : m.leak]\n}\n`,
    });
    await expect(plan({ moduleDir: marked, state: null, providerConfig: { local: { root: await tempDir() } }, variables: { sites: SITES, api_token: TOKEN } })).rejects.toThrow(
      /^leak\.tf:1: Output refers to sensitive values: output "leaks"/,
    );
  });

  it("refuses a sensitive for_each, whose keys would show the secret", async () => {
    const moduleDir = await writeModule({
      ...ROOT,
      "extra.tf": `module "by_token" {\n  source   = "./modules/site"\n  for_each = toset([var.api_token])\n  name     = "x"\n  pages    = ["index"]\n  token    = each.key\n}\n`,
    });
    await expect(plan({ moduleDir, state: null, providerConfig: { local: { root: await tempDir() } }, variables: { sites: SITES, api_token: TOKEN } })).rejects.toThrow(
      /^extra\.tf:3: Invalid for_each argument: module "by_token"'s for_each is sensitive/,
    );
  });

  it("each.value carries the marks of its element: a for_each map with a sensitive value marks what derives from it", async () => {
    const moduleDir = await writeModule({
      "main.tf": `resource "local_file" "f" {\n  for_each = { a = sensitive("${TOKEN}"), b = "plain" }\n  filename = "\${each.key}.txt"\n  content  = each.value\n}\n`,
    });
    const p = await plan({ moduleDir, state: null, providerConfig: { local: { root: await tempDir() } } });
    const marks = Object.fromEntries(p.plan.resource_changes.map((c) => [c.address, c.change.after_sensitive]));
    expect(marks['local_file.f["a"]']).toMatchObject({ content: true });
    expect(marks['local_file.f["b"]']).not.toMatchObject({ content: true });
    expect(JSON.stringify(reviewPlan(p.plan))).not.toContain(TOKEN);
  });
});
