import { readFile, readdir } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { apply, plan, reviewPlan } from "../index";
import { loadModule } from "../config/module";
import { SENSITIVE_VALUE } from "../../lib/secrets";
import { collector, tempDir, writeModule } from "./helpers";

// An ordinary user-written module: for expressions, a template file, heredoc directives, functions,
// an object variable with optional attributes, a validation block, a sensitive variable and output.
const MODULE = {
  "variables.tf": `
variable "site" {
  type = object({
    name  = string
    pages = optional(list(string), ["index"])
  })
  validation {
    condition     = can(regex("^[a-z][a-z0-9-]*$", var.site.name))
    error_message = "The site name must start with a letter and use only lowercase letters, digits and dashes."
  }
}

variable "db_password" {
  type      = string
  sensitive = true
}

variable "owners" {
  type    = map(string)
  default = { bob = "dev", ann = "admin" }
}
`,
  "main.tf": `
locals {
  pages  = [for p in var.site.pages : { name = p, file = "site/\${var.site.name}/\${p}.html" }]
  admins = [for name, role in var.owners : upper(name) if role == "admin"]
  index  = templatefile("\${path.module}/templates/index.tpl", { title = title(var.site.name), pages = local.pages[*].name })
  conn   = "postgres://app:\${var.db_password}@db/app"
}

resource "local_file" "page" {
  count    = length(local.pages)
  filename = local.pages[count.index].file
  content  = format("<h1>%s</h1>", local.pages[count.index].name)
}

resource "local_file" "index" {
  filename = "site/\${var.site.name}/index.txt"
  content  = local.index
}

resource "local_file" "env" {
  filename = "site/\${var.site.name}/app.env"
  content  = <<-EOT
    %{ for k, v in var.owners ~}
    OWNER_\${upper(k)}=\${v}
    %{ endfor ~}
    DATABASE_URL=\${local.conn}
  EOT
}
`,
  "outputs.tf": `
output "admins" {
  value = join(",", local.admins)
}
output "files" {
  value = sort(concat(local_file.page[*].filename, [local_file.index.filename]))
}
output "connection" {
  value     = local.conn
  sensitive = true
}
output "password_sha" {
  value = nonsensitive(sha256(var.db_password))
}
`,
  "templates/index.tpl": "# ${title}\n%{ for p in pages ~}\n- ${p}\n%{ endfor ~}\n",
};

const PASSWORD = "s3cret-pass-0451";

describe("a user-written module on the builtin engine", () => {
  it("plans and applies for expressions, templates and functions, and keeps the sensitive variable and output masked", async () => {
    const root = await tempDir();
    const moduleDir = await writeModule(MODULE);
    const ui = collector();
    const opts = { moduleDir, state: null, providerConfig: { local: { root } }, variables: { site: { name: "docs", pages: ["index", "about"] }, db_password: PASSWORD }, emit: ui.emit };
    const p = await plan(opts);

    expect(p.plan.resource_changes.map((c) => [c.address, c.action])).toEqual([
      ["local_file.env", "create"],
      ["local_file.index", "create"],
      ["local_file.page[0]", "create"],
      ["local_file.page[1]", "create"],
    ]);
    expect(p.plan.output_changes.connection).toMatchObject({ sensitive: true });
    expect(p.plan.output_changes.admins).toMatchObject({ after: "ANN", sensitive: false });
    expect(p.plan.variables.db_password).toEqual({ value: PASSWORD, sensitive: true });
    // The env file's content derives from the password, so the plan marks it sensitive.
    expect(p.plan.resource_changes.find((c) => c.address === "local_file.env")!.change.after_sensitive).toMatchObject({ content: true });
    const review = JSON.stringify(reviewPlan(p.plan));
    expect(review).not.toContain(PASSWORD);
    expect(review).toContain(SENSITIVE_VALUE);
    expect(JSON.stringify(ui.lines)).not.toContain(PASSWORD);
    expect(ui.ofType("outputs").at(-1)!.outputs.connection).toEqual({ sensitive: true, action: "create" });

    const applyUi = collector();
    const done = await apply({ state: null, providerConfig: { local: { root } }, emit: applyUi.emit }, p.plan);
    expect(done.status).toBe("applied");
    expect(await readFile(path.join(root, "site/docs/index.txt"), "utf8")).toBe("# Docs\n- index\n- about\n");
    expect(await readFile(path.join(root, "site/docs/about.html"), "utf8")).toBe("<h1>about</h1>");
    expect(await readFile(path.join(root, "site/docs/app.env"), "utf8")).toBe(`OWNER_ANN=admin\nOWNER_BOB=dev\nDATABASE_URL=postgres://app:${PASSWORD}@db/app\n`);
    expect(done.state.outputs.files!.value).toEqual(["site/docs/about.html", "site/docs/index.html", "site/docs/index.txt"]);
    expect(done.state.outputs.connection).toMatchObject({ sensitive: true });
    expect(done.state.outputs.password_sha!.sensitive).toBeFalsy();
    const env = done.state.resources.find((r) => r.name === "env")!.instances[0]!;
    expect(env.sensitive_attributes).toContainEqual([{ type: "get_attr", value: "content" }]);
    expect(JSON.stringify(applyUi.lines)).not.toContain(PASSWORD);
    expect(applyUi.ofType("outputs").at(-1)!.outputs.connection).toEqual({ sensitive: true, type: "string" });
  });

  it("a value that fails a validation block is refused before anything runs, with file:line and the error_message", async () => {
    const root = await tempDir();
    const moduleDir = await writeModule(MODULE);
    const ui = collector();
    const opts = { moduleDir, state: null, providerConfig: { local: { root } }, variables: { site: { name: "My Site" }, db_password: PASSWORD }, emit: ui.emit };
    await expect(plan(opts)).rejects.toThrow(
      /^variables\.tf:8: Invalid value for variable\nThe site name must start with a letter and use only lowercase letters, digits and dashes\.\n\nThis was checked by the validation rule at variables\.tf:7 for var\.site\./,
    );
    expect(ui.ofType("diagnostic")[0]!.diagnostic).toMatchObject({ severity: "error", summary: "Invalid value for variable", range: { filename: "variables.tf", start: { line: 8 } } });
    expect(ui.ofType("planned_change")).toEqual([]);
    expect(await readdir(root)).toEqual([]);
  });

  it("an output that shows a value derived from a sensitive one must say sensitive = true", async () => {
    const moduleDir = await writeModule({ ...MODULE, "leak.tf": `output "leak" {\n  value = upper(local.conn)\n}\n` });
    await expect(plan({ moduleDir, state: null, providerConfig: { local: { root: await tempDir() } }, variables: { site: { name: "docs" }, db_password: PASSWORD } })).rejects.toThrow(
      /^leak\.tf:1: Output refers to sensitive values: output "leak" shows a value derived from a sensitive value/,
    );
  });

  it("loads the module's own files for file() and templatefile(), leaving out hidden folders and state files", async () => {
    const dir = await writeModule({ "main.tf": "", "data/a.json": "{}", ".terraform/x.tf": "", "terraform.tfstate": "{}", "sub/inner.tf": "not parsed here {" });
    const mod = await loadModule(dir);
    expect(Object.keys(mod.files).sort()).toEqual(["data/a.json", "main.tf", "sub/inner.tf"]);
  });
});
