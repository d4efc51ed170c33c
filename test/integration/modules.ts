// Small modules for the end-to-end job tests, written to a temp folder and registered in the org's registry.
import fs from "node:fs";
import path from "node:path";

export const MODULES = {
  /** Holds the apply open: a file, then a test gate (opened by the test), then a file that depends on the gate. */
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
