import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { apply, decodePlan, plan, type StateV4 } from "../index";
import { collector, tempDir, writeModule } from "./helpers";

const SITE = `
variable "pages" {
  type    = number
  default = 2
}
variable "home" {
  type    = string
  default = "index"
}
variable "note" {
  type    = string
  default = "first"
}
resource "local_file" "page" {
  count    = var.pages
  filename = "site/page-\${count.index}.txt"
  content  = "page \${count.index}"
}
resource "local_file" "home" {
  filename = "site/\${var.home}.html"
  content  = "home"
}
resource "local_file" "note" {
  filename = "site/note.txt"
  content  = var.note
}
`;

async function site() {
  const root = await tempDir();
  const moduleDir = await writeModule({ "main.tf": SITE });
  const opts = { moduleDir, state: null as StateV4 | null, providerConfig: { local: { root } } };
  const first = await apply(opts, (await plan(opts)).plan);
  expect(first.status).toBe("applied");
  return { root, opts: { ...opts, state: first.state }, exists: (f: string) => stat(path.join(root, "site", f)).then(() => true, () => false) };
}

const addresses = (state: StateV4) => state.resources.flatMap((r) => r.instances.map((i) => `${r.type}.${r.name}${i.index_key !== undefined ? `[${i.index_key}]` : ""}`)).sort();

describe("delete protection", () => {
  it("a protected update keeps a planned delete in the plan, marked not executed and counted as skipped, and apply leaves the file", async () => {
    const { opts, exists } = await site();
    const ui = collector();
    const p = await plan({ ...opts, variables: { pages: 1 }, emit: ui.emit }, { protectDeletes: true });
    const gone = p.plan.resource_changes.find((c) => c.address === "local_file.page[1]")!;
    expect(gone).toMatchObject({ action: "delete", change: { actions: ["delete"] }, not_executed: { reason: "delete_protection" } });
    expect(gone.not_executed!.message).toBe(
      'local_file.page[1] is not deleted: delete protection is on for this component, so an update leaves it in place. To delete it, run a destroy job for the component, or turn "Protect deletes" off for the component\'s flow-control policy (Settings → Flow Control) and run the update again.',
    );
    expect(p.plan.summary).toEqual({ add: 0, change: 0, import: 0, remove: 0, forget: 0, skipped_deletes: 1 });
    expect(p.plan.applyable).toBe(false);
    expect(decodePlan(p.bytes).resource_changes.find((c) => c.address === "local_file.page[1]")!.not_executed).toEqual(gone.not_executed);
    const planned = ui.ofType("planned_change");
    expect(planned.map((l) => l["@message"])).toEqual(["local_file.page[1]: Plan to delete (not executed)"]);
    expect(planned[0]!.change.not_executed).toEqual(gone.not_executed);
    expect(ui.ofType("change_summary")[0]).toMatchObject({ "@message": "Plan: 0 to add, 0 to change, 0 to destroy, 1 protected (not executed).", changes: { remove: 0, skipped_deletes: 1 } });

    const applied = collector();
    const r = await apply({ ...opts, emit: applied.emit }, p.plan);
    expect(r.status).toBe("applied");
    expect(await exists("page-1.txt")).toBe(true);
    expect(addresses(r.state)).toContain("local_file.page[1]");
    expect(applied.ofType("apply_start")).toEqual([]);
    expect(r.summary).toMatchObject({ remove: 0, skipped_deletes: 1 });
    expect(applied.ofType("change_summary")[0]!["@message"]).toBe("Apply complete! Resources: 0 added, 0 changed, 0 destroyed, 1 protected (not executed).");
  });

  it("a protected update keeps a replace whole and not executed, naming the resource and the fix, and applies the rest", async () => {
    const { root, opts, exists } = await site();
    const ui = collector();
    const p = await plan({ ...opts, variables: { home: "start", note: "second" }, emit: ui.emit }, { protectDeletes: true });
    const home = p.plan.resource_changes.find((c) => c.address === "local_file.home")!;
    expect(home).toMatchObject({ action: "replace", change: { actions: ["delete", "create"] }, not_executed: { reason: "delete_protection" } });
    expect(home.not_executed!.message).toMatch(/^local_file\.home is not replaced: delete protection is on for this component, and a replace would delete the object first/);
    expect(home.not_executed!.message).toContain('To replace it, run a destroy job for the component, or turn "Protect deletes" off');
    expect(p.plan.resource_changes.find((c) => c.address === "local_file.note")).toMatchObject({ action: "update" });
    expect(p.plan.resource_changes.find((c) => c.address === "local_file.note")!.not_executed).toBeUndefined();
    expect(p.plan.summary).toEqual({ add: 0, change: 1, import: 0, remove: 0, forget: 0, skipped_deletes: 1 });
    expect(ui.ofType("planned_change").map((l) => l["@message"])).toEqual(["local_file.home: Plan to replace (not executed)", "local_file.note: Plan to update"]);

    const r = await apply(opts, p.plan);
    expect(r.status).toBe("applied");
    expect(await exists("index.html")).toBe(true);
    expect(await exists("start.html")).toBe(false);
    expect(await readFile(path.join(root, "site", "note.txt"), "utf8")).toBe("second");
    expect(r.summary).toMatchObject({ add: 0, change: 1, remove: 0, skipped_deletes: 1 });
    expect(r.summary.replacements).toBeUndefined();
  });

  it("a destroy under protection deletes everything and marks nothing not executed", async () => {
    const { opts, exists } = await site();
    const ui = collector();
    const p = await plan({ ...opts, emit: ui.emit }, { destroy: true, protectDeletes: true });
    expect(p.plan.resource_changes.map((c) => [c.action, c.not_executed])).toEqual(Array(4).fill(["delete", undefined]));
    expect(p.plan.summary).toEqual({ add: 0, change: 0, import: 0, remove: 4, forget: 0 });
    expect(ui.lines.some((l) => l["@message"].includes("not executed"))).toBe(false);
    const r = await apply(opts, p.plan);
    expect(r.status).toBe("applied");
    expect(r.state.resources).toEqual([]);
    for (const f of ["page-0.txt", "page-1.txt", "index.html", "note.txt"]) expect(await exists(f)).toBe(false);
  });

  it("without protection a replace runs, and the summaries name it as the delete inside a replacement", async () => {
    const { opts, exists } = await site();
    const p = await plan({ ...opts, variables: { home: "start" } });
    expect(p.plan.summary).toEqual({ add: 1, change: 0, import: 0, remove: 1, forget: 0, replacements: ["local_file.home"] });
    const r = await apply(opts, p.plan);
    expect(r.summary).toMatchObject({ add: 1, remove: 1, replacements: ["local_file.home"] });
    expect(await exists("index.html")).toBe(false);
    expect(await exists("start.html")).toBe(true);
  });
});
