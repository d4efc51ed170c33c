import { createHash } from "node:crypto";
import { readFile, writeFile, mkdir } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { apply, destroy, plan, refresh, reviewPlan, type StateV4 } from "../index";
import { collector, tempDir, writeModule } from "./helpers";

const MODULE = `
data "local_file" "seed" {
  filename = "input/seed.txt"
}
data "local_sensitive_file" "key" {
  filename = "input/key.txt"
}
resource "local_file" "copy" {
  filename = "out/copy.txt"
  content  = upper(data.local_file.seed.content)
}
output "seed_sha" {
  value = data.local_file.seed.content_sha256
}
output "key" {
  value     = data.local_sensitive_file.key.content
  sensitive = true
}
`;

async function rootWithInputs(): Promise<string> {
  const root = await tempDir();
  await mkdir(path.join(root, "input"));
  await writeFile(path.join(root, "input/seed.txt"), "hello");
  await writeFile(path.join(root, "input/key.txt"), "s3cret-key");
  return root;
}

describe("data sources", () => {
  it("reads data.local_file during the plan, feeds resources, and keeps it in state with mode data", async () => {
    const root = await rootWithInputs();
    const moduleDir = await writeModule({ "main.tf": MODULE });
    const ui = collector();
    const opts = { moduleDir, state: null, providerConfig: { local: { root } } };
    const p = await plan({ ...opts, emit: ui.emit });
    // Read during the plan: no change for it, and the plan's prior state holds it.
    expect(p.plan.resource_changes.map((c) => [c.address, c.action])).toEqual([["local_file.copy", "create"]]);
    expect(p.plan.resource_changes[0]!.change.after).toMatchObject({ content: "HELLO" });
    const seed = p.plan.prior_state.resources.find((r) => r.name === "seed")!;
    expect(seed).toMatchObject({ mode: "data", type: "local_file", name: "seed", provider: 'provider["registry.opentofu.org/hashicorp/local"]' });
    expect(seed.instances[0]!.attributes).toMatchObject({
      filename: "input/seed.txt",
      content: "hello",
      content_base64: Buffer.from("hello").toString("base64"),
      id: createHash("sha1").update("hello").digest("hex"),
    });
    const key = p.plan.prior_state.resources.find((r) => r.name === "key")!;
    expect(key.instances[0]!.sensitive_attributes).toEqual(expect.arrayContaining([[{ type: "get_attr", value: "content" }]]));
    expect(JSON.stringify(reviewPlan(p.plan))).not.toContain("s3cret-key");
    const reads = ui.ofType("apply_start").filter((l) => l.hook.action === "read").map((l) => l["@message"]);
    expect(reads.sort()).toEqual(["data.local_file.seed: Reading...", "data.local_sensitive_file.key: Reading..."]);
    expect(ui.ofType("apply_complete").find((l) => l.hook.resource.addr === "data.local_file.seed")!.hook.resource).toMatchObject({ resource: "data.local_file.seed", resource_type: "local_file" });

    const r = await apply(opts, p.plan);
    expect(r.status).toBe("applied");
    expect(await readFile(path.join(root, "out/copy.txt"), "utf8")).toBe("HELLO");
    expect(r.state.resources.map((x) => `${x.mode}:${x.type}.${x.name}`)).toEqual(["data:local_file.seed", "data:local_sensitive_file.key", "managed:local_file.copy"]);
    expect(r.state.outputs.seed_sha!.value).toBe(createHash("sha256").update("hello").digest("hex"));
    expect(r.state.outputs.key).toMatchObject({ value: "s3cret-key", sensitive: true });
  });

  it("a changed input file is read again by refresh and plan, and the resource that uses it is updated", async () => {
    const root = await rootWithInputs();
    const moduleDir = await writeModule({ "main.tf": MODULE });
    const opts = { moduleDir, state: null as StateV4 | null, providerConfig: { local: { root } } };
    const first = await plan(opts);
    const state = (await apply(opts, first.plan)).state;
    await writeFile(path.join(root, "input/seed.txt"), "bye");
    const refreshed = await refresh({ ...opts, state });
    expect(refreshed.changed).toBe(true);
    expect(refreshed.state.resources.find((r) => r.name === "seed")!.instances[0]!.attributes.content).toBe("bye");
    const p = await plan({ ...opts, state: refreshed.state });
    expect(p.plan.resource_changes.map((c) => [c.address, c.action])).toEqual([["local_file.copy", "update"]]);
    const r = await apply({ ...opts, state: refreshed.state }, p.plan);
    expect(await readFile(path.join(root, "out/copy.txt"), "utf8")).toBe("BYE");
    // destroy removes managed objects and leaves no data source behind in state
    const gone = await destroy({ ...opts, state: r.state });
    expect(gone.status).toBe("applied");
    expect(gone.state.resources).toEqual([]);
    expect(await readFile(path.join(root, "input/seed.txt"), "utf8")).toBe("bye");
  });

  it("a data source that depends on a resource with changes is planned as a read and read during apply", async () => {
    const root = await tempDir();
    const moduleDir = await writeModule({
      "main.tf": `
resource "local_file" "made" {
  filename = "made.txt"
  content  = "made here"
}
data "local_file" "back" {
  filename = local_file.made.filename
}
resource "terraform_data" "echo" {
  input = data.local_file.back.content
}
`,
    });
    const opts = { moduleDir, state: null, providerConfig: { local: { root } } };
    const ui = collector();
    const p = await plan({ ...opts, emit: ui.emit });
    const read = p.plan.resource_changes.find((c) => c.address === "data.local_file.back")!;
    expect(read).toMatchObject({ mode: "data", action: "read", action_reason: "read_because_dependency_pending", change: { actions: ["read"] } });
    expect(ui.ofType("planned_change").map((l) => l["@message"])).toContain("data.local_file.back: Plan to read");
    const r = await apply(opts, p.plan);
    expect(r.status).toBe("applied");
    expect(r.state.resources.find((x) => x.name === "echo")!.instances[0]!.attributes.output).toBe("made here");
    expect(r.state.resources.find((x) => x.mode === "data")!.instances[0]!.attributes.content).toBe("made here");
    // Nothing pending any more: the next plan reads it at once and has nothing to do.
    const again = await plan({ ...opts, state: r.state });
    expect(again.plan.resource_changes.every((c) => c.action === "noop")).toBe(true);
  });

  it("data sources take count and for_each: data.local_file.inputs[\"seed\"] reads input/seed.txt", async () => {
    const root = await rootWithInputs();
    const moduleDir = await writeModule({
      "main.tf": `
variable "names" {
  type    = set(string)
  default = ["key", "seed"]
}
data "local_file" "inputs" {
  for_each = var.names
  filename = "input/\${each.key}.txt"
}
resource "terraform_data" "both" {
  input = "\${data.local_file.inputs["seed"].content}+\${data.local_file.inputs["key"].content}"
}
`,
    });
    const opts = { moduleDir, state: null, providerConfig: { local: { root } } };
    const p = await plan(opts);
    const data = p.plan.prior_state.resources.find((r) => r.mode === "data")!;
    expect(data.instances.map((i) => i.index_key)).toEqual(["key", "seed"]);
    const r = await apply(opts, p.plan);
    expect(r.state.resources.find((x) => x.type === "terraform_data")!.instances[0]!.attributes.output).toBe("hello+s3cret-key");
  });

  it("confines data.local_file to the connection root and refuses unknown data sources with file:line", async () => {
    const root = await tempDir();
    const outside = await writeModule({ "main.tf": `data "local_file" "x" {\n  filename = "../../etc/passwd"\n}\n` });
    await expect(plan({ moduleDir: outside, state: null, providerConfig: { local: { root } } })).rejects.toThrow(/data\.local_file\.x: path \.\.\/\.\.\/etc\/passwd is outside the connection root/);
    const missing = await writeModule({ "main.tf": `data "local_file" "x" {\n  filename = "nope.txt"\n}\n` });
    await expect(plan({ moduleDir: missing, state: null, providerConfig: { local: { root } } })).rejects.toThrow(/data\.local_file\.x: no file exists at nope\.txt/);
    const unknown = await writeModule({ "main.tf": `\ndata "aws_ami" "x" {}\n` });
    await expect(plan({ moduleDir: unknown, state: null })).rejects.toThrow(/main\.tf:2: Unsupported data source: the builtin engine has no provider for data source "aws_ami"/);
    const undeclared = await writeModule({ "main.tf": `resource "terraform_data" "x" {\n  input = data.local_file.nope.content\n}\n` });
    await expect(plan({ moduleDir: undeclared, state: null })).rejects.toThrow(/main\.tf:2: Reference to undeclared data source/);
  });
});
