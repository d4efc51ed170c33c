import { readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { apply, destroy, plan, type StateV4 } from "../index";
import { collector, tempDir, writeModule, applied } from "./helpers";


describe("lifecycle meta-arguments", () => {
  it("create_before_destroy: the replacement is created before the old object is destroyed", async () => {
    const root = await tempDir();
    const moduleDir = await writeModule({
      "main.tf": `
variable "name" {
  type = string
}
resource "local_file" "f" {
  filename = "\${var.name}.txt"
  content  = "hello"
  lifecycle {
    create_before_destroy = true
  }
}
`,
    });
    const opts = { moduleDir, state: null, providerConfig: { local: { root } } };
    const state = await applied({ ...opts, variables: { name: "old" } });
    const p = await plan({ ...opts, state, variables: { name: "new" } });
    const c = p.plan.resource_changes[0]!;
    expect(c).toMatchObject({ address: "local_file.f", action: "replace", action_reason: "replace_because_cannot_update", change: { actions: ["create", "delete"], replace_paths: [["filename"]] } });
    const ui = collector();
    const r = await apply({ ...opts, state, emit: ui.emit }, p.plan);
    expect(r.status).toBe("applied");
    expect(r.summary).toMatchObject({ add: 1, remove: 1, replacements: ["local_file.f"] });
    const hooks = ui.lines.filter((l) => l.type === "apply_start").map((l) => (l as { hook: { action: string } }).hook.action);
    expect(hooks).toEqual(["create", "delete"]);
    expect(await readFile(path.join(root, "new.txt"), "utf8")).toBe("hello");
    await expect(stat(path.join(root, "old.txt"))).rejects.toThrow(/ENOENT/);
    expect(r.state.resources[0]!.instances[0]!.attributes.filename).toBe("new.txt");
  });

  it("prevent_destroy: a plan that would destroy the object is refused with OpenTofu's words and file:line", async () => {
    const root = await tempDir();
    const files = (extra: string) => ({
      "main.tf": `variable "name" {\n  type = string\n}\n${extra}`,
    });
    const guarded = `resource "local_file" "keep" {\n  filename = "\${var.name}.txt"\n  content  = "precious"\n  lifecycle {\n    prevent_destroy = true\n  }\n}\n`;
    const moduleDir = await writeModule(files(guarded));
    const opts = { moduleDir, state: null, providerConfig: { local: { root } } };
    const state = await applied({ ...opts, variables: { name: "a" } });
    const ui = collector();
    const refused = plan({ ...opts, state, variables: { name: "b" }, emit: ui.emit });
    await expect(refused).rejects.toThrow(
      /^main\.tf:4: Instance cannot be destroyed\nResource local_file\.keep has lifecycle\.prevent_destroy set, but the plan calls for this resource to be destroyed\. To avoid this error and continue with the plan, either disable lifecycle\.prevent_destroy or reduce the scope of the plan using the -target option\./,
    );
    expect(ui.ofType("diagnostic")[0]!.diagnostic).toMatchObject({ severity: "error", summary: "Instance cannot be destroyed", range: { filename: "main.tf", start: { line: 4 } } });
    await expect(destroy({ ...opts, state, variables: { name: "a" } })).rejects.toThrow(/Instance cannot be destroyed/);
    expect(await readFile(path.join(root, "a.txt"), "utf8")).toBe("precious");
    // An unchanged plan is fine, and once the block is gone the resource may be destroyed.
    expect((await plan({ ...opts, state, variables: { name: "a" } })).plan.resource_changes[0]!.action).toBe("noop");
    const without = await writeModule(files(""));
    const p = await plan({ ...opts, moduleDir: without, state, variables: { name: "a" } });
    expect(p.plan.resource_changes.map((c) => [c.address, c.action])).toEqual([["local_file.keep", "delete"]]);
  });

  it("ignore_changes: listed attributes (or all) keep the values the object has", async () => {
    const root = await tempDir();
    const module = (content: string, perm: string, ignore: string) =>
      writeModule({
        "main.tf": `resource "local_file" "f" {\n  filename        = "f.txt"\n  content         = "${content}"\n  file_permission = "${perm}"\n  lifecycle {\n    ignore_changes = ${ignore}\n  }\n}\n`,
      });
    const opts = { state: null, providerConfig: { local: { root } } };
    const state = await applied({ ...opts, moduleDir: await module("one", "0644", "[content]") });
    const quiet = await plan({ ...opts, moduleDir: await module("two", "0644", "[content]"), state });
    expect(quiet.plan.resource_changes.map((c) => c.action)).toEqual(["noop"]);
    const perm = await plan({ ...opts, moduleDir: await module("two", "0600", "[content]"), state });
    expect(perm.plan.resource_changes[0]!.action).toBe("update");
    expect(perm.plan.resource_changes[0]!.change.after).toMatchObject({ content: "one", file_permission: "0600" });
    const r = await apply({ ...opts, state }, perm.plan);
    expect(r.status).toBe("applied");
    expect(await readFile(path.join(root, "f.txt"), "utf8")).toBe("one");
    const all = await plan({ ...opts, moduleDir: await module("three", "0644", "all"), state: r.state });
    expect(all.plan.resource_changes.map((c) => c.action)).toEqual(["noop"]);
    // A change made by hand is still reported as drift (and, content being ignored, kept).
    await writeFile(path.join(root, "f.txt"), "tampered");
    const drifted = await plan({ ...opts, moduleDir: await module("three", "0600", "[content]"), state: r.state });
    expect(drifted.plan.resource_drift.map((d) => d.address)).toEqual(["local_file.f"]);
    const bad = await writeModule({ "main.tf": `resource "local_file" "f" {\n  filename = "f.txt"\n  lifecycle {\n    ignore_changes = "content"\n  }\n}\n` });
    await expect(plan({ ...opts, moduleDir: bad })).rejects.toThrow(/main\.tf:4: Invalid ignore_changes/);
    const unknownAttr = await writeModule({ "main.tf": `resource "local_file" "f" {\n  filename = "f.txt"\n  lifecycle {\n    ignore_changes = [colour]\n  }\n}\n` });
    await expect(plan({ ...opts, moduleDir: unknownAttr })).rejects.toThrow(/main\.tf:1: Unsupported attribute: ignore_changes names "colour", which local_file does not have/);
  });

  it("replace_triggered_by: a change to the referenced resource (or attribute) replaces this one", async () => {
    const root = await tempDir();
    const moduleDir = await writeModule({
      "main.tf": `
variable "release" {
  type = string
}
variable "note" {
  type    = string
  default = "n"
}
resource "terraform_data" "release" {
  input = var.release
}
resource "terraform_data" "note" {
  input = var.note
}
resource "local_file" "marker" {
  filename = "marker.txt"
  content  = "static"
  lifecycle {
    replace_triggered_by = [terraform_data.release]
  }
}
resource "random_pet" "name" {
  lifecycle {
    replace_triggered_by = [terraform_data.note.input]
  }
}
`,
    });
    const opts = { moduleDir, state: null, providerConfig: { local: { root } } };
    const state = await applied({ ...opts, variables: { release: "1" } });
    const same = await plan({ ...opts, state, variables: { release: "1" } });
    expect(same.plan.resource_changes.every((c) => c.action === "noop")).toBe(true);
    const ui = collector();
    const p = await plan({ ...opts, state, variables: { release: "2", note: "m" }, emit: ui.emit });
    const by = Object.fromEntries(p.plan.resource_changes.map((c) => [c.address, c]));
    expect(by["terraform_data.release"]!.action).toBe("update");
    expect(by["local_file.marker"]).toMatchObject({ action: "replace", action_reason: "replace_by_triggers", change: { actions: ["delete", "create"] } });
    expect(by["random_pet.name"]).toMatchObject({ action: "replace", action_reason: "replace_by_triggers" });
    expect(ui.ofType("planned_change").find((l) => l.change.resource.addr === "local_file.marker")!.change).toMatchObject({ action: "replace", reason: "replace_by_triggers" });
    const before = state.resources.find((r) => r.type === "random_pet")!.instances[0]!.attributes.id;
    const r = await apply({ ...opts, state }, p.plan);
    expect(r.status).toBe("applied");
    expect(r.state.resources.find((x) => x.type === "random_pet")!.instances[0]!.attributes.id).not.toBe(before);
    expect(await readFile(path.join(root, "marker.txt"), "utf8")).toBe("static");
    const bad = await writeModule({ "main.tf": `resource "random_pet" "p" {\n  lifecycle {\n    replace_triggered_by = [var.x]\n  }\n}\n` });
    await expect(plan({ moduleDir: bad, state: null })).rejects.toThrow(/main\.tf:3: Invalid replace_triggered_by expression/);
  });

  it("refuses lifecycle conditions and provisioners with file:line", async () => {
    const pre = await writeModule({ "main.tf": `resource "random_pet" "p" {\n  lifecycle {\n    precondition {\n      condition = true\n      error_message = "x"\n    }\n  }\n}\n` });
    await expect(plan({ moduleDir: pre, state: null })).rejects.toThrow(/main\.tf:3: Unsupported block type: "precondition" blocks in lifecycle are not supported by the builtin engine/);
    const prov = await writeModule({ "main.tf": `resource "random_pet" "p" {\n  provisioner "local-exec" {\n    command = "echo"\n  }\n}\n` });
    await expect(plan({ moduleDir: prov, state: null })).rejects.toThrow(/main\.tf:2: Unsupported block type: "provisioner" blocks are not supported/);
  });
});
