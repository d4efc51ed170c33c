import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { apply, plan, validate } from "../index";
import { tempDir, writeModule, unzip } from "./helpers";

describe("dynamic blocks", () => {
  it("expands dynamic blocks (custom iterator, default iterator, mixed with written blocks) into a provider's nested blocks", async () => {
    const root = await tempDir();
    const moduleDir = await writeModule({
      "main.tf": `
variable "pages" {
  type    = map(string)
  default = { about = "About us", home = "Welcome" }
}
variable "notes" {
  type    = list(string)
  default = ["first", "second"]
}
data "archive_file" "site" {
  type        = "zip"
  output_path = "dist/site.zip"
  source {
    filename = "robots.txt"
    content  = "User-agent: *"
  }
  dynamic "source" {
    for_each = var.pages
    iterator = page
    content {
      filename = "\${page.key}.html"
      content  = "<h1>\${page.value}</h1>"
    }
  }
  dynamic "source" {
    for_each = var.notes
    content {
      filename = "note-\${source.key}.txt"
      content  = source.value
    }
  }
}
resource "local_file" "checksum" {
  filename = "dist/site.zip.sha256"
  content  = data.archive_file.site.output_sha256
}
`,
    });
    expect((await validate(moduleDir)).valid).toBe(true);
    const opts = { moduleDir, state: null, providerConfig: { local: { root } } };
    const p = await plan(opts);
    const archive = p.plan.prior_state.resources.find((r) => r.type === "archive_file")!;
    expect(archive).toMatchObject({ mode: "data", name: "site", provider: 'provider["registry.opentofu.org/hashicorp/archive"]' });
    expect(archive.instances[0]!.attributes.source).toEqual([
      { filename: "robots.txt", content: "User-agent: *" },
      { filename: "about.html", content: "<h1>About us</h1>" },
      { filename: "home.html", content: "<h1>Welcome</h1>" },
      { filename: "note-0.txt", content: "first" },
      { filename: "note-1.txt", content: "second" },
    ]);
    const r = await apply(opts, p.plan);
    expect(r.status).toBe("applied");
    const zipBytes = await readFile(path.join(root, "dist/site.zip"));
    expect(await unzip(zipBytes)).toEqual({
      "about.html": "<h1>About us</h1>",
      "home.html": "<h1>Welcome</h1>",
      "note-0.txt": "first",
      "note-1.txt": "second",
      "robots.txt": "User-agent: *",
    });
    expect(await readFile(path.join(root, "dist/site.zip.sha256"), "utf8")).toBe(createHash("sha256").update(zipBytes).digest("hex"));
    // The same input gives the same archive: nothing to do on the next plan.
    const again = await plan({ ...opts, state: r.state });
    expect(again.plan.resource_changes.map((c) => c.action)).toEqual(["noop"]);
  });

  it("refuses dynamic blocks a schema does not have, and malformed ones, with file:line", async () => {
    const refused = async (body: string) => {
      const moduleDir = await writeModule({ "main.tf": body });
      return plan({ moduleDir, state: null });
    };
    await expect(refused(`resource "local_file" "f" {\n  filename = "f"\n  dynamic "perm" {\n    for_each = [1]\n    content {}\n  }\n}\n`)).rejects.toThrow(
      /main\.tf:3: Unsupported block type: blocks of type "perm" are not expected in local_file\n.*takes no nested blocks/,
    );
    const archive = (inner: string) => `data "archive_file" "a" {\n  type = "zip"\n  output_path = "a.zip"\n${inner}}\n`;
    await expect(refused(archive(`  dynamic "source" {\n    for_each = [1]\n  }\n`))).rejects.toThrow(/main\.tf:4: Missing content block: a dynamic "source" block needs exactly one content/);
    await expect(refused(archive(`  dynamic "source" {\n    content {\n      filename = "x"\n      content = "y"\n    }\n  }\n`))).rejects.toThrow(/main\.tf:4: Missing required argument: a dynamic "source" block needs for_each/);
    await expect(refused(archive(`  dynamic "source" {\n    for_each = [1]\n    content {\n      filename = "x"\n      colour = "y"\n    }\n  }\n`))).rejects.toThrow(
      /main\.tf:8: Unsupported argument: an argument named "colour" is not expected in a source block/,
    );
    await expect(refused(archive(`  dynamic "source" {\n    for_each = "x"\n    content {\n      filename = "x"\n      content = "y"\n    }\n  }\n`))).rejects.toThrow(/main\.tf:5: Invalid dynamic for_each value/);
  });
});
