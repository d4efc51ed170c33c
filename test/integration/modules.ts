// Small modules for the end-to-end job tests, written to a temp folder and registered in the org's registry.
import fs from "node:fs";
import path from "node:path";

export const MODULES = {
  /** A file, then a test gate (which holds the apply while the test has it armed), then a file that depends on the gate. */
  slow: `
variable "name" {
  type = string
}
resource "local_file" "first" {
  filename = "slow/\${var.name}/first.txt"
  content  = "first"
}
resource "plantontest_gate" "wait" {
  name       = var.name
  depends_on = [local_file.first]
}
resource "local_file" "after" {
  filename   = "slow/\${var.name}/after.txt"
  content    = "after \${plantontest_gate.wait.id}"
}
`,
  cyclic: `
resource "terraform_data" "a" {
  input = terraform_data.b.output
}
resource "terraform_data" "b" {
  input = terraform_data.a.output
}
`,
  /** One file named after the component: what an update makes and a destroy removes. */
  marker: `
variable "name" {
  type = string
}
resource "local_file" "marker" {
  filename = "markers/\${var.name}.txt"
  content  = "made by \${var.name}"
}
`,
  /** A folder of pages (count) and a home page whose name forces a replace: deletes and replaces on demand. */
  protectable: `
variable "pages" {
  type    = number
  default = 2
}
variable "home" {
  type    = string
  default = "index"
}
variable "motto" {
  type    = string
  default = "first"
}
resource "local_file" "page" {
  count    = var.pages
  filename = "protected/page-\${count.index}.txt"
  content  = "page \${count.index}"
}
resource "local_file" "home" {
  filename = "protected/\${var.home}.html"
  content  = "home"
}
resource "local_file" "motto" {
  filename = "protected/motto.txt"
  content  = var.motto
}
`,
  importable: `
resource "local_file" "existing" {
  filename = "imported/readme.txt"
  content  = "made by hand\\n"
}
`,
};

export function writeModule(root: string, name: keyof typeof MODULES): string {
  const dir = path.join(root, "modules", name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "main.tf"), MODULES[name]);
  return dir;
}
