import { readFile, rm, writeFile, mkdir, stat } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { apply, destroy, importResource, plan, refresh, planChecksum, decodePlan, StalePlanError, type StateV4 } from "../index";
import { CATALOG, collector, persisted, tempDir, writeModule } from "./helpers";

async function applied(opts: Parameters<typeof plan>[0]): Promise<StateV4> {
  const p = await plan(opts);
  const r = await apply(opts, p.plan);
  expect(r.status).toBe("applied");
  return r.state;
}

const FILES = `
variable "name" {
  type    = string
  default = "a"
}
resource "local_directory" "dir" {
  path = "out"
}
resource "local_file" "f" {
  filename   = "out/\${var.name}.txt"
  content    = "hello \${var.name}"
  depends_on = [local_directory.dir]
}
resource "terraform_data" "t" {
  input = local_file.f.id
}
`;

describe("plan and apply", () => {
  it("re-creates a file deleted by hand: refresh reports drift, the next plan creates it", async () => {
    const root = await tempDir();
    const moduleDir = await writeModule({ "main.tf": FILES });
    const opts = { moduleDir, state: null, providerConfig: { local: { root } } };
    const state = await applied(opts);
    await rm(path.join(root, "out/a.txt"));
    const ui = collector();
    const r = await refresh({ ...opts, state, emit: ui.emit });
    expect(r.drift.map((d) => [d.address, d.action])).toEqual([["local_file.f", "delete"]]);
    expect(r.changed).toBe(true);
    expect(r.state.serial).toBe(state.serial + 1);
    expect(ui.ofType("resource_drift")[0]).toMatchObject({ "@message": "local_file.f: Drift detected (delete)", change: { action: "delete" } });
    const p = await plan({ ...opts, state: r.state });
    expect(p.plan.resource_changes.filter((c) => c.action !== "noop").map((c) => [c.address, c.action])).toEqual([["local_file.f", "create"]]);
    const done = await apply({ ...opts, state: r.state }, p.plan);
    expect(done.status).toBe("applied");
    expect(await readFile(path.join(root, "out/a.txt"), "utf8")).toBe("hello a");
  });

  it("a file changed by hand is drift (update) and the plan rewrites it in place", async () => {
    const root = await tempDir();
    const moduleDir = await writeModule({ "main.tf": FILES });
    const opts = { moduleDir, state: null, providerConfig: { local: { root } } };
    const state = await applied(opts);
    await writeFile(path.join(root, "out/a.txt"), "tampered");
    const ui = collector();
    const p = await plan({ ...opts, state, emit: ui.emit });
    expect(p.plan.resource_drift.map((d) => [d.address, d.action])).toEqual([["local_file.f", "update"]]);
    expect(p.plan.resource_changes.find((c) => c.address === "local_file.f")!.action).toBe("update");
    expect(ui.ofType("planned_change").map((l) => l["@message"])).toEqual(["local_file.f: Plan to update"]);
    await apply({ ...opts, state }, p.plan);
    expect(await readFile(path.join(root, "out/a.txt"), "utf8")).toBe("hello a");
  });

  it("replaces when a force-new argument changes, and updates dependents", async () => {
    const root = await tempDir();
    const moduleDir = await writeModule({ "main.tf": FILES });
    const opts = { moduleDir, state: null, providerConfig: { local: { root } } };
    const state = await applied(opts);
    const next = { ...opts, state, variables: { name: "b" } };
    const ui = collector();
    const p = await plan({ ...next, emit: ui.emit });
    const byAddr = Object.fromEntries(p.plan.resource_changes.map((c) => [c.address, c]));
    expect(byAddr["local_file.f"]!.action).toBe("replace");
    expect(byAddr["local_file.f"]!.change.actions).toEqual(["delete", "create"]);
    expect(byAddr["local_file.f"]!.change.replace_paths).toEqual([["filename"]]);
    expect(byAddr["terraform_data.t"]!.action).toBe("update");
    expect(ui.ofType("planned_change").find((l) => l.change.resource.addr === "local_file.f")!.change).toMatchObject({ action: "replace", reason: "cannot_update" });
    expect(ui.ofType("change_summary")[0]!.changes).toEqual({ add: 1, change: 1, import: 0, remove: 1, forget: 0, replacements: ["local_file.f"], operation: "plan" });
    const ui2 = collector();
    const r = await apply({ ...next, emit: ui2.emit }, p.plan);
    expect(r.status).toBe("applied");
    await expect(stat(path.join(root, "out/a.txt"))).rejects.toThrow();
    expect(await readFile(path.join(root, "out/b.txt"), "utf8")).toBe("hello b");
    expect(ui2.ofType("change_summary")[0]!.changes).toMatchObject({ add: 1, change: 1, remove: 1, operation: "apply" });
    expect(ui2.ofType("change_summary")[0]!["@message"]).toBe("Apply complete! Resources: 1 added, 1 changed, 1 destroyed.");
  });

  it("destroys in reverse dependency order", async () => {
    const root = await tempDir();
    const moduleDir = path.join(CATALOG, "static-site");
    const opts = { moduleDir, state: null, variables: { site_name: "gone" }, providerConfig: { local: { root } } };
    const state = await applied(opts);
    const ui = collector();
    const store = persisted();
    const r = await destroy({ ...opts, state, emit: ui.emit, parallelism: 1, persistState: store.persistState });
    expect(r.status).toBe("applied");
    const order = ui.ofType("apply_complete").map((l) => l.hook.resource.addr);
    expect(order).toHaveLength(5);
    const pos = (a: string) => order.indexOf(a);
    expect(pos("terraform_data.manifest")).toBeLessThan(pos("local_file.index"));
    expect(pos("local_file.index")).toBeLessThan(pos("local_directory.site"));
    expect(pos("local_file.robots")).toBeLessThan(pos("local_directory.site"));
    expect(pos("local_directory.site")).toBeLessThan(pos("random_pet.suffix"));
    expect(ui.ofType("change_summary").at(-1)!["@message"]).toBe("Destroy complete! Resources: 5 destroyed.");
    expect(r.state.resources).toEqual([]);
    expect(r.state.outputs).toEqual({});
    expect(await stat(path.join(root, "sites")).then((s) => s.isDirectory())).toBe(true);
    expect(await (await import("node:fs/promises")).readdir(path.join(root, "sites"))).toEqual([]);
  });

  it("imports an existing file into state without changing it", async () => {
    const root = await tempDir();
    await mkdir(path.join(root, "out"), { recursive: true });
    await writeFile(path.join(root, "out/a.txt"), "hello a");
    const moduleDir = await writeModule({ "main.tf": `resource "local_file" "f" {\n  filename = "out/a.txt"\n  content  = "hello a"\n}\n` });
    const opts = { moduleDir, state: null, providerConfig: { local: { root } } };
    const ui = collector();
    const { state } = await importResource({ ...opts, emit: ui.emit }, "local_file.f", "out/a.txt");
    expect(state.serial).toBe(1);
    expect(state.resources[0]!.instances[0]!.attributes).toMatchObject({ filename: "out/a.txt", content: "hello a" });
    expect(ui.ofType("apply_complete")[0]!.hook).toMatchObject({ action: "import", id_key: "id" });
    const p = await plan({ ...opts, state });
    expect(p.plan.resource_changes.map((c) => c.action)).toEqual(["noop"]);
    await expect(importResource({ ...opts, state }, "local_file.f", "out/a.txt")).rejects.toThrow(/already in the state/);
    await expect(importResource(opts, "local_file.nope", "out/a.txt")).rejects.toThrow(/not declared in the module/);
  });

  it("plans import, move and forget from import, moved and removed blocks", async () => {
    const root = await tempDir();
    await writeFile(path.join(root, "existing.txt"), "old");
    const v1 = await writeModule({ "main.tf": `resource "random_pet" "old" {}\nresource "random_id" "keep" {\n  byte_length = 2\n}\n` });
    const state = await applied({ moduleDir: v1, state: null });
    const v2 = await writeModule({
      "main.tf": `
resource "random_pet" "new" {}
moved {
  from = random_pet.old
  to   = random_pet.new
}
removed {
  from = random_id.keep
}
resource "local_file" "existing" {
  filename = "existing.txt"
  content  = "new"
}
import {
  to = local_file.existing
  id = "existing.txt"
}
`,
    });
    const ui = collector();
    const opts = { moduleDir: v2, state, providerConfig: { local: { root } }, emit: ui.emit };
    const p = await plan(opts);
    const changes = Object.fromEntries(p.plan.resource_changes.map((c) => [c.address, c]));
    expect(changes["random_pet.new"]).toMatchObject({ action: "move", previous_address: "random_pet.old" });
    expect(changes["random_id.keep"]).toMatchObject({ action: "forget", change: { actions: ["forget"] } });
    expect(changes["local_file.existing"]).toMatchObject({ action: "update", change: { importing: { id: "existing.txt" } } });
    expect(ui.ofType("change_summary")[0]!["@message"]).toBe("Plan: 1 to import, 0 to add, 1 to change, 0 to destroy, 1 to forget.");
    const r = await apply(opts, p.plan);
    expect(r.status).toBe("applied");
    expect(r.state.resources.map((x) => `${x.type}.${x.name}`)).toEqual(["local_file.existing", "random_pet.new"]);
    expect(r.state.resources.find((x) => x.name === "new")!.instances[0]!.attributes.id).toBe(state.resources.find((x) => x.name === "old")!.instances[0]!.attributes.id);
    expect(await readFile(path.join(root, "existing.txt"), "utf8")).toBe("new");
  });

  it("count expands instances and shrinking it deletes the extra ones", async () => {
    const moduleDir = await writeModule({
      "main.tf": `variable "n" {\n  type = number\n}\nresource "random_id" "x" {\n  count       = var.n\n  byte_length = 2 + count.index\n}\noutput "hexes" {\n  value = random_id.x[*].hex\n}\n`,
    });
    const state = await applied({ moduleDir, state: null, variables: { n: 3 } });
    expect(state.resources[0]!.instances.map((i) => i.index_key)).toEqual([0, 1, 2]);
    expect((state.outputs.hexes!.value as string[]).map((h) => h.length)).toEqual([4, 6, 8]);
    const p = await plan({ moduleDir, state, variables: { n: 1 } });
    expect(p.plan.resource_changes.filter((c) => c.action === "delete").map((c) => [c.address, c.action_reason])).toEqual([
      ["random_id.x[2]", "delete_because_count_index"],
      ["random_id.x[1]", "delete_because_count_index"],
    ]);
  });
});

describe("saved plans", () => {
  it("carries a checksum of its canonical bytes and round-trips", async () => {
    const moduleDir = await writeModule({ "main.tf": `resource "random_pet" "p" {}\n` });
    const p = await plan({ moduleDir, state: null });
    expect(p.checksum).toBe(planChecksum(p.bytes));
    expect(p.checksum).toMatch(/^[0-9a-f]{64}$/);
    expect(decodePlan(p.bytes)).toEqual(p.plan);
    expect(p.plan).toMatchObject({ format_version: "1.0", state_lineage: null, state_serial: null, delete_operations_computed: true, operation: "plan" });
    expect(p.plan.resource_changes[0]!.change).toMatchObject({ actions: ["create"], before: null, after_unknown: { id: true } });
  });

  it("says delete operations were not computed when refresh is skipped", async () => {
    const moduleDir = await writeModule({ "main.tf": `resource "random_pet" "p" {}\n` });
    const state = await applied({ moduleDir, state: null });
    const p = await plan({ moduleDir, state }, { refresh: false });
    expect(p.plan.delete_operations_computed).toBe(false);
    expect(p.plan).toMatchObject({ state_lineage: state.lineage, state_serial: state.serial });
  });

  it("refuses a stale plan, naming both serials", async () => {
    const moduleDir = await writeModule({ "main.tf": `variable "l" {\n  default = 2\n}\nresource "random_pet" "p" {\n  length = var.l\n}\n` });
    const first = await applied({ moduleDir, state: null });
    const stale = await plan({ moduleDir, state: first, variables: { l: 3 } });
    let current = first;
    for (const l of [4, 5]) current = await applied({ moduleDir, state: current, variables: { l } });
    expect(current.serial).toBe(first.serial + 2);
    const ui = collector();
    const err = await apply({ state: current, emit: ui.emit }, stale.plan).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StalePlanError);
    expect((err as Error).message).toBe(
      `Saved plan is stale: the state was changed by another operation after the plan was created (plan made against serial ${first.serial}, state is now serial ${current.serial}). Run a new preview, then apply it.`,
    );
    expect(ui.ofType("diagnostic")[0]!.diagnostic.severity).toBe("error");
    await expect(apply({ state: first }, (await plan({ moduleDir, state: null })).plan)).rejects.toThrow(/Saved plan is stale: .*plan made against no state/);
  });

  it("records the schema hash of the providers a plan uses, and refuses to apply a plan made against other schemas", async () => {
    const moduleDir = await writeModule({ "main.tf": `resource "random_pet" "p" {}
resource "terraform_data" "d" {
  input = random_pet.p.id
}
` });
    const p = await plan({ moduleDir, state: null });
    expect(p.plan.provider_schema_hash).toMatch(/^[0-9a-f]{64}$/);
    // Only the providers the plan uses count: a runner with another provider configured (the test gate) agrees.
    expect((await plan({ moduleDir, state: null, providerConfig: { testGates: { dir: await tempDir() } } })).plan.provider_schema_hash).toBe(p.plan.provider_schema_hash);
    // Another module, other providers: another hash.
    const other = await writeModule({ "main.tf": `resource "random_pet" "p" {}
` });
    expect((await plan({ moduleDir: other, state: null })).plan.provider_schema_hash).not.toBe(p.plan.provider_schema_hash);
    // A plan whose recorded schemas are not this engine's (as after a runner upgrade) is refused before anything runs.
    const ui = collector();
    const elsewhere = { ...p.plan, provider_schema_hash: "0".repeat(64) };
    const err = await apply({ state: null, emit: ui.emit }, elsewhere).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StalePlanError);
    expect((err as Error).message).toMatch(/^Saved plan was made with other provider schemas \(sha256 0{64}\) than this engine has \(sha256 [0-9a-f]{64}\): .* Run a new preview, then apply it\.$/);
    expect(ui.ofType("apply_start")).toEqual([]);
    // The plan as made applies; one made before the hash was kept is not checked.
    expect((await apply({ state: null }, p.plan)).status).toBe("applied");
    const { provider_schema_hash: _, ...older } = (await plan({ moduleDir, state: null })).plan;
    expect((await apply({ state: null }, older)).status).toBe("applied");
  });
});

describe("apply persistence and cancellation", () => {
  const CHAIN = `
resource "random_id" "a" {
  byte_length = 2
}
resource "random_id" "b" {
  byte_length = 2
  keepers     = { a = random_id.a.hex }
}
resource "random_id" "c" {
  byte_length = 2
  keepers     = { b = random_id.b.hex }
}
`;

  it("persists state after each resource and once at the end, bumping serial only on change", async () => {
    const moduleDir = await writeModule({ "main.tf": CHAIN });
    const p = await plan({ moduleDir, state: null });
    const store = persisted();
    const r = await apply({ state: null, persistState: store.persistState }, p.plan);
    expect(store.states.map((s) => s.resources.length)).toEqual([1, 2, 3, 3]);
    expect(store.states.map((s) => s.serial)).toEqual([1, 2, 3, 3]);
    expect(new Set(store.states.map((s) => s.lineage)).size).toBe(1);
    expect(r.state).toEqual(store.states.at(-1));
    expect(r.state.resources.find((x) => x.name === "c")!.instances[0]!.dependencies).toEqual(["random_id.a", "random_id.b"]);
  });

  it("stops scheduling when aborted, finishes in-flight work and saves what was done", async () => {
    const moduleDir = await writeModule({ "main.tf": CHAIN });
    const p = await plan({ moduleDir, state: null });
    const ac = new AbortController();
    const store = persisted();
    const ui = collector();
    const r = await apply(
      {
        state: null,
        signal: ac.signal,
        emit: (l) => {
          ui.emit(l);
          if (l.type === "apply_complete") ac.abort(); // abort as soon as the first resource is done
        },
        persistState: store.persistState,
      },
      p.plan,
    );
    expect(r.status).toBe("cancelled");
    expect(r.state.resources.map((x) => x.name)).toEqual(["a"]);
    expect(r.not_applied).toEqual(["random_id.b", "random_id.c"]);
    expect(store.states.at(-1)!.resources.map((x) => x.name)).toEqual(["a"]);
    expect(ui.ofType("apply_start").map((l) => l.hook.resource.addr)).toEqual(["random_id.a"]);
  });

  it("an errored resource stops its dependents, keeps the rest, and reports it", async () => {
    const root = await tempDir();
    const moduleDir = await writeModule({
      "main.tf": `resource "random_pet" "ok" {}\nresource "local_file" "bad" {\n  filename = "../../etc/\${random_pet.ok.id}"\n}\nresource "terraform_data" "after" {\n  input = local_file.bad.id\n}\n`,
    });
    const ui = collector();
    const err = await plan({ moduleDir, state: null, providerConfig: { local: { root } }, emit: ui.emit }).catch((e: unknown) => e);
    // The filename is unknown at plan time, so the root check happens at apply.
    expect(err).not.toBeInstanceOf(Error);
    const p = err as Awaited<ReturnType<typeof plan>>;
    const r = await apply({ state: null, providerConfig: { local: { root } }, emit: ui.emit }, p.plan);
    expect(r.status).toBe("errored");
    expect(r.diagnostics[0]!.summary).toMatch(new RegExp(`^local_file\\.bad: path \\.\\./\\.\\./etc/[a-z-]+ is outside the connection root ${root}; use a path inside it$`));
    expect(r.not_applied).toEqual(["terraform_data.after"]);
    expect(r.state.resources.map((x) => x.type)).toEqual(["random_pet"]);
    expect(ui.ofType("apply_errored")[0]!.hook.resource.addr).toBe("local_file.bad");
  });

  it("refuses a known path outside the root at plan time", async () => {
    const root = await tempDir();
    const moduleDir = await writeModule({ "main.tf": `resource "local_file" "x" {\n  filename = "../../etc"\n}\n` });
    await expect(plan({ moduleDir, state: null, providerConfig: { local: { root } } })).rejects.toThrow(
      `local_file.x: path ../../etc is outside the connection root ${root}; use a path inside it`,
    );
  });
});
