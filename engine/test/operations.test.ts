import path from "node:path";
import { describe, expect, it } from "vitest";
import { plan, apply, refresh, validate, renderUiLine, ConfigError } from "../index";
import { CATALOG, collector, tempDir, writeModule } from "./helpers";

describe("variables and validation", () => {
  it("a missing required variable is refused with its name and how to fix it", async () => {
    const ui = collector();
    const err = await plan({ moduleDir: path.join(CATALOG, "static-site"), state: null, emit: ui.emit }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/^variables\.tf:1: No value for required variable: the module's input variable "site_name" is not set and has no default/);
    expect((err as Error).message).toContain("Set spec.site_name on the component");
    const d = ui.ofType("diagnostic")[0]!;
    expect(d.diagnostic).toMatchObject({ severity: "error", range: { filename: "variables.tf", start: { line: 1 } } });
  });

  it("converts variable values to their declared type and refuses impossible ones", async () => {
    const root = await tempDir();
    const base = { moduleDir: path.join(CATALOG, "static-site"), state: null, providerConfig: { local: { root } } };
    const p = await plan({ ...base, variables: { site_name: "s", page_count: "5" } });
    expect(p.plan.variables.page_count).toEqual({ value: 5 });
    await expect(plan({ ...base, variables: { site_name: "s", page_count: "many" } })).rejects.toThrow(/Invalid value for input variable\nThe given value is not suitable for var\.page_count declared at [\w.]+:\d+: a number is required/);
  });

  it("warns about values for undeclared variables", async () => {
    const moduleDir = await writeModule({ "main.tf": `resource "random_pet" "p" {}\n` });
    const ui = collector();
    await plan({ moduleDir, state: null, variables: { extra: 1 }, emit: ui.emit });
    expect(ui.ofType("diagnostic")[0]!.diagnostic).toMatchObject({ severity: "warning", summary: "Value for undeclared variable" });
  });

  it("validate reports unsupported types, arguments and undeclared references with file:line", async () => {
    const cases: [string, RegExp][] = [
      [`resource "aws_s3_bucket" "b" {}\n`, /^main\.tf:1: Unsupported resource type: the builtin engine has no provider for "aws_s3_bucket"/],
      [`resource "random_pet" "p" {\n  colour = "red"\n}\n`, /^main\.tf:2: Unsupported argument: an argument named "colour"/],
      [`resource "random_pet" "p" {\n  id = "x"\n}\n`, /^main\.tf:2: Invalid argument: "id" is computed/],
      [`resource "random_id" "p" {}\n`, /^main\.tf:1: Missing required argument: the argument "byte_length" is required in random_id\.p/],
      [`output "o" {\n  value = var.missing\n}\n`, /^main\.tf:2: Reference to undeclared input variable: no variable named "missing"/],
      [`output "o" {\n  value = random_pet.nope.id\n}\n`, /^main\.tf:2: Reference to undeclared resource/],
      [`resource "random_password" "p" {\n  length = 8\n}\n\noutput "pw" {\n  value = "pw: \${random_password.p.result}"\n}\n`, /^main\.tf:5: Output refers to sensitive values: output "pw" shows random_password\.p\.result/],
    ];
    for (const [text, expected] of cases) {
      const r = await validate(await writeModule({ "main.tf": text }));
      expect(r.valid).toBe(false);
      const d = r.diagnostics[0]!;
      expect(`${d.range!.filename}:${d.range!.start.line}: ${d.summary}`).toMatch(expected);
    }
    expect(await validate(path.join(CATALOG, "static-site"))).toEqual({ valid: true, diagnostics: [] });
    expect(await validate(path.join(CATALOG, "database-credentials"))).toEqual({ valid: true, diagnostics: [] });
  });

  it("validate takes every variable as unknown, as tofu validate does: a validation block that needs the value is left to the plan", async () => {
    const dir = await writeModule({
      "main.tf": `variable "file_name" {\n  type = string\n  validation {\n    condition     = length(var.file_name) <= 10\n    error_message = "file_name must be at most 10 characters."\n  }\n}\n\nvariable "n" {\n  type    = number\n  default = 2\n}\n\nresource "random_id" "p" {\n  count       = var.n\n  byte_length = 4\n  prefix      = var.file_name\n}\n`,
    });
    expect(await validate(dir)).toEqual({ valid: true, diagnostics: [] });
  });
});

describe("machine-readable UI lines", () => {
  it("follow OpenTofu's shapes and never carry sensitive values", async () => {
    const root = await tempDir();
    const ui = collector();
    const opts = { moduleDir: path.join(CATALOG, "database-credentials"), variables: { database_name: "billing" }, state: null, providerConfig: { local: { root } }, emit: ui.emit };
    const p = await plan(opts);
    const r = await apply(opts, p.plan);
    await refresh({ ...opts, state: r.state });
    for (const l of ui.lines) {
      expect(l["@module"]).toBe("tofu.ui");
      expect(["info", "warn", "error"]).toContain(l["@level"]);
      expect(new Date(l["@timestamp"]).toISOString()).toBe(l["@timestamp"]);
    }
    expect(ui.lines[0]).toMatchObject({ type: "version", ui: expect.any(String) });
    expect(ui.ofType("planned_change")[0]).toMatchObject({
      "@message": "random_id.db_suffix: Plan to create",
      change: {
        action: "create",
        resource: { addr: "random_id.db_suffix", module: "", resource: "random_id.db_suffix", implied_provider: "random", resource_type: "random_id", resource_name: "db_suffix", resource_key: null },
      },
    });
    expect(ui.ofType("change_summary")[0]).toMatchObject({ "@message": "Plan: 4 to add, 0 to change, 0 to destroy.", changes: { add: 4, change: 0, import: 0, remove: 0, operation: "plan" } });
    const planOutputs = ui.ofType("outputs")[0]!;
    expect(planOutputs.outputs.password).toEqual({ sensitive: true, action: "create" });
    const complete = ui.ofType("apply_complete").find((l) => l.hook.resource.addr === "random_id.db_suffix")!;
    expect(complete.hook).toMatchObject({ action: "create", id_key: "id", id_value: expect.any(String), elapsed_seconds: expect.any(Number) });
    expect(complete["@message"]).toMatch(/^random_id\.db_suffix: Creation complete after \d+s \[id=.+\]$/);
    expect(ui.ofType("apply_start")[0]!["@message"]).toMatch(/: Creating\.\.\.$/);
    expect(ui.ofType("refresh_start")[0]!["@message"]).toMatch(/: Refreshing state\.\.\. \[id=/);
    expect(ui.ofType("refresh_complete").length).toBe(4);
    const applied = ui.ofType("outputs")[1]!;
    expect(applied.outputs.password).toEqual({ sensitive: true, type: "string" });
    expect(applied.outputs.database!.value).toBe(r.outputs.database!.value);
    expect(JSON.stringify(ui.lines)).not.toContain(r.outputs.password!.value as string);
  });

  it("render as readable, coloured log lines", async () => {
    const moduleDir = await writeModule({ "main.tf": `resource "random_pet" "p" {}\nresource "random_password" "pw" {\n  length = 16\n}\noutput "secret" {\n  value     = random_password.pw.result\n  sensitive = true\n}\n` });
    const ui = collector();
    const p = await plan({ moduleDir, state: null, emit: ui.emit });
    const r = await apply({ state: null, emit: ui.emit }, p.plan);
    const text = ui.lines.map(renderUiLine).join("\n");
    expect(text).toContain("\x1b[32m+\x1b[0m random_pet.p: Plan to create");
    expect(text).toContain("\x1b[1mPlan: 2 to add, 0 to change, 0 to destroy.\x1b[0m");
    expect(text).toContain("secret = (sensitive value)");
    expect(text).not.toContain(r.outputs.secret!.value as string);
    const replace = renderUiLine({ ...ui.ofType("planned_change")[0]!, change: { ...ui.ofType("planned_change")[0]!.change, action: "replace" } });
    expect(replace).toContain("\x1b[35m±\x1b[0m");
    const del = renderUiLine({ ...ui.ofType("planned_change")[0]!, change: { ...ui.ofType("planned_change")[0]!.change, action: "delete" } });
    expect(del).toContain("\x1b[31m-\x1b[0m");
    const upd = renderUiLine({ ...ui.ofType("planned_change")[0]!, change: { ...ui.ofType("planned_change")[0]!.change, action: "update" } });
    expect(upd).toContain("\x1b[33m~\x1b[0m");
    const diag = renderUiLine({ "@level": "error", "@message": "Error: x", "@module": "tofu.ui", "@timestamp": new Date().toISOString(), type: "diagnostic", diagnostic: { severity: "error", summary: "Bad thing", detail: "Fix it", range: { filename: "main.tf", start: { line: 3, column: 1, byte: 0 }, end: { line: 3, column: 1, byte: 0 } } } });
    expect(diag).toContain("on main.tf line 3");
  });
});
