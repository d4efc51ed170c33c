import { describe, expect, it } from "vitest";
import { parseExpression, parseFile } from "./parser";
import { parseModule } from "./module";
import { ConfigError } from "../errors";

describe("HCL subset parser", () => {
  it("reads blocks with labels, attributes, nested blocks and comments", () => {
    const body = parseFile(
      `# comment
terraform {
  required_version = ">= 1.6" // trailing
}
/* block
   comment */
resource "random_pet" "name" {
  length = 3
  lifecycle {
    prevent_destroy = false
  }
}
`,
      "main.tf",
    );
    expect(body.blocks.map((b) => [b.type, b.labels])).toEqual([
      ["terraform", []],
      ["resource", ["random_pet", "name"]],
    ]);
    const res = body.blocks[1]!;
    expect(res.range).toMatchObject({ file: "main.tf", line: 7 });
    expect(res.body.attributes[0]).toMatchObject({ name: "length", expr: { kind: "literal", value: 3 } });
    expect(res.body.blocks[0]!.type).toBe("lifecycle");
  });

  it("reads heredocs, stripping indentation with <<-", () => {
    const body = parseFile(`locals {\n  a = <<-EOT\n    one\n      two ${"${"}x}\n    EOT\n  b = 1\n}\n`, "x.tf");
    const a = body.blocks[0]!.body.attributes[0]!.expr;
    expect(a.kind).toBe("template");
    if (a.kind === "template") expect(a.parts[0]).toBe("one\n  two ");
    expect(body.blocks[0]!.body.attributes[1]!.name).toBe("b");
  });

  it("reads multi-line lists, objects and calls", () => {
    const e = parseExpression(`{\n  a = [\n    1,\n    2,\n  ]\n  "b" : f(\n    1,\n    2\n  )\n  c = { x = 1, y = 2 }\n}`);
    expect(e.kind).toBe("object");
    if (e.kind === "object") expect(e.items).toHaveLength(3);
  });

  it("names the file and line of a syntax error", () => {
    expect(() => parseFile(`resource "a" "b" {\n  x = 1\n  y = = 2\n}\n`, "broken.tf")).toThrow(/^broken\.tf:3: Invalid expression/);
    expect(() => parseFile(`resource "a" "b" {\n  x = "unterminated\n}\n`, "s.tf")).toThrow(/^s\.tf:2: Unterminated string/);
    expect(() => parseFile(`variable "a" {\n`, "v.tf")).toThrow(/^v\.tf:2: Unclosed block/);
    expect(() => parseFile(`locals {\n  a = 1\n  a = 2\n}\n`, "d.tf")).toThrow(/^d\.tf:3: Duplicate argument "a"/);
    expect(() => parseFile(`locals {\n  a = 1 2\n}\n`, "n.tf")).toThrow(/^n\.tf:2: Unexpected number 2/);
  });

  it("refuses unsupported constructs with file:line and a reason", () => {
    expect(() => parseModule({ "main.tf": `check "x" {}\n` })).toThrow(/^main\.tf:1: Unsupported block type: "check" blocks/);
    expect(() => parseModule({ "main.tf": `locals {\n  a = [for x in y : x]\n}\n` })).toThrow(/^main\.tf:2: "for" expressions are not supported/);
    expect(() => parseModule({ "main.tf": `locals {\n  a = "%{ if true }x%{ endif }"\n}\n` })).toThrow(/^main\.tf:2: Template directives/);
    expect(() => parseModule({ "main.tf": `variable "x" {\n  colour = 1\n}\n` })).toThrow(/^main\.tf:2: Unsupported argument: an argument named "colour"/);
    const err = (() => {
      try {
        parseModule({ "a.tf": `resource "random_pet" "p" {}\n`, "b.tf": `\n\nresource "random_pet" "p" {}\n` });
      } catch (e) {
        return e as ConfigError;
      }
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect(err!.message).toMatch(/^b\.tf:3: Duplicate resource/);
    expect(err!.diagnostics[0]!.range).toMatchObject({ filename: "b.tf", start: { line: 3 } });
  });

  it("decodes variables, outputs, locals, moved, import and removed blocks", () => {
    const mod = parseModule({
      "main.tf": `
variable "n" {
  type      = number
  default   = 2
  sensitive = true
}
variable "tags" {
  type = map(string)
}
locals {
  a = var.n
}
output "o" {
  value     = local.a
  sensitive = true
}
resource "random_pet" "p" {
  count      = var.n
  depends_on = [random_id.i]
}
resource "random_id" "i" {
  byte_length = 2
}
moved {
  from = random_pet.old
  to   = random_pet.p
}
import {
  to = random_id.i
  id = "abcd"
}
removed {
  from = random_id.gone
}
`,
    });
    expect(mod.variables.get("n")).toMatchObject({ type: "number", default: 2, hasDefault: true, sensitive: true });
    expect(mod.variables.get("tags")).toMatchObject({ type: { map: "string" }, hasDefault: false });
    expect(mod.outputs.get("o")!.sensitive).toBe(true);
    expect(mod.resources.get("random_pet.p")!.dependsOn.map((d) => d.addr)).toEqual(["random_id.i"]);
    expect(mod.resources.get("random_pet.p")!.count).toBeDefined();
    expect(mod.moved).toMatchObject([{ from: "random_pet.old", to: "random_pet.p" }]);
    expect(mod.imports[0]!.to).toBe("random_id.i");
    expect(mod.removed).toMatchObject([{ from: "random_id.gone", destroy: false }]);
  });
});
