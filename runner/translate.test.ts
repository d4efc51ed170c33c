import path from "node:path";
import { describe, expect, it } from "vitest";
import { apply, plan, refresh, type UiMessage } from "../engine/index";
import type { EventDraft } from "./events";
import { Redactor } from "./redact";
import { CATALOG, tempDir } from "./test/helpers";
import { translateJsonLine, translatePulumiEvent, translatePulumiPreview, translateUiLine } from "./translate";

const at = "2026-01-01T00:00:00.000Z";
const addr = (a: string) => {
  const [type, name] = a.split(".");
  return { addr: a, module: "", resource: a, implied_provider: type!.split("_")[0]!, resource_type: type!, resource_name: name!, resource_key: null };
};
const base = { "@level": "info" as const, "@module": "tofu.ui" as const, "@timestamp": at };

// Samples written by hand in the engine's OpenTofu-style UI format, one per line type.
const SAMPLES: UiMessage[] = [
  { ...base, "@message": "Planton builtin engine 1.8.0-planton.1", type: "version", tofu: "1.8.0-planton.1", ui: "1.2", engine: "planton-builtin" },
  { ...base, "@message": "No state yet: nothing to refresh.", type: "log" },
  { ...base, "@message": "local_file.index: Plan to create", type: "planned_change", change: { resource: addr("local_file.index"), action: "create" } },
  { ...base, "@message": "local_file.index: Drift detected (delete)", type: "resource_drift", change: { resource: addr("local_file.index"), action: "delete" } },
  { ...base, "@message": "Plan: 1 to add, 0 to change, 0 to destroy.", type: "change_summary", changes: { add: 1, change: 0, import: 0, remove: 0, forget: 0, operation: "plan" } },
  { ...base, "@message": "local_file.index: Creating...", type: "apply_start", hook: { resource: addr("local_file.index"), action: "create" } },
  { ...base, "@message": "local_file.index: Still creating... [10s elapsed]", type: "apply_progress", hook: { resource: addr("local_file.index"), action: "create", elapsed_seconds: 10 } },
  { ...base, "@message": "local_file.index: Creation complete after 0s [id=abc]", type: "apply_complete", hook: { resource: addr("local_file.index"), action: "create", id_key: "id", id_value: "abc", elapsed_seconds: 0 } },
  { ...base, "@level": "error", "@message": "local_file.index: Creation errored after 0s", type: "apply_errored", hook: { resource: addr("local_file.index"), action: "create", elapsed_seconds: 0 } },
  { ...base, "@message": "random_pet.suffix: Refreshing state... [id=a-b]", type: "refresh_start", hook: { resource: addr("random_pet.suffix"), id_key: "id", id_value: "a-b" } },
  { ...base, "@message": "random_pet.suffix: Refresh complete [id=a-b]", type: "refresh_complete", hook: { resource: addr("random_pet.suffix"), id_key: "id", id_value: "a-b" } },
  { ...base, "@message": "Outputs: 2", type: "outputs", outputs: { site_path: { sensitive: false, type: "string", value: "sites/docs" }, password: { sensitive: true, type: "string" } } },
  {
    ...base,
    "@level": "error",
    "@message": "Error: Cycle: a, b",
    type: "diagnostic",
    diagnostic: { severity: "error", summary: "Cycle: a, b", detail: "fix it", range: { filename: "main.tf", start: { line: 3, column: 1, byte: 0 }, end: { line: 3, column: 1, byte: 0 } } },
  },
];

const types = (evs: EventDraft[]) => evs.map((e) => e.type);

describe("translate: engine UI lines → progress events", () => {
  it("turns every UI line into a log line with the rendered human text (ANSI kept)", () => {
    for (const line of SAMPLES) {
      const evs = translateUiLine(line, { command: "builtin apply" });
      expect(evs[0]!.type).toBe("log");
      expect(typeof evs[0]!.payload.line).toBe("string");
    }
    const created = translateUiLine(SAMPLES[7]!, { command: "builtin apply" })[0]!;
    expect(created.payload.line).toContain("\x1b[32m");
    expect(created.payload.line).toContain("local_file.index: Creation complete after 0s [id=abc]");
  });

  it("maps resource lines to address, type, action and phase", () => {
    const res = (i: number) => translateUiLine(SAMPLES[i]!, { command: "builtin apply" }).find((e) => e.type === "resource")!.payload;
    expect(res(2)).toMatchObject({ address: "local_file.index", type: "local_file", action: "create", phase: "planned" });
    expect(res(3)).toMatchObject({ action: "delete", phase: "drift" });
    expect(res(5)).toMatchObject({ action: "create", phase: "start" });
    expect(res(6)).toMatchObject({ action: "create", phase: "progress", elapsedSeconds: 10 });
    expect(res(7)).toMatchObject({ action: "create", phase: "complete" });
    expect(res(8)).toMatchObject({ action: "create", phase: "errored" });
    expect(res(9)).toMatchObject({ address: "random_pet.suffix", action: "read", phase: "start" });
    expect(res(10)).toMatchObject({ action: "read", phase: "complete" });
  });

  it("makes a summary naming the engine command, with counts", () => {
    const evs = translateUiLine(SAMPLES[4]!, { command: "builtin plan" });
    expect(types(evs)).toEqual(["log", "summary"]);
    expect(evs[1]!.payload).toEqual({ command: "builtin plan", operation: "plan", add: 1, change: 0, remove: 0 });
  });

  it("carries delete protection's not-executed mark into the resource event and the skipped deletes and replacements into the summary", () => {
    const notExecuted = { reason: "delete_protection" as const, message: "local_file.robots is not deleted: …" };
    const planned: UiMessage = { ...base, "@level": "warn", "@message": "local_file.robots: Plan to delete (not executed)", type: "planned_change", change: { resource: addr("local_file.robots"), action: "delete", not_executed: notExecuted } };
    const [log, res] = translateUiLine(planned, { command: "builtin plan" });
    expect(log!.payload.line).toContain("local_file.robots: Plan to delete (not executed)");
    expect(res!.payload).toEqual({ address: "local_file.robots", type: "local_file", action: "delete", phase: "planned", message: "local_file.robots: Plan to delete (not executed)", notExecuted });
    const summary: UiMessage = {
      ...base,
      "@message": "Plan: 1 to add, 0 to change, 1 to destroy, 2 protected (not executed).",
      type: "change_summary",
      changes: { add: 1, change: 0, import: 0, remove: 1, forget: 0, skipped_deletes: 2, replacements: ["local_file.page"], operation: "plan" },
    };
    expect(translateUiLine(summary, { command: "builtin plan" })[1]!.payload).toEqual({ command: "builtin plan", operation: "plan", add: 1, change: 0, remove: 1, skippedDeletes: 2, replacements: ["local_file.page"] });
  });

  it("makes a diagnostic event with severity, summary, detail and range", () => {
    const evs = translateUiLine(SAMPLES[12]!, { command: "builtin plan" });
    expect(types(evs)).toEqual(["log", "diagnostic"]);
    expect(evs[1]!.payload).toMatchObject({ severity: "error", summary: "Cycle: a, b", detail: "fix it", range: { filename: "main.tf" } });
    expect(evs[0]!.payload.stream).toBe("stderr");
  });

  it("leaves version, plain messages and outputs as log lines only (outputs events come from the server's outputs answer)", () => {
    for (const i of [0, 1, 11]) expect(types(translateUiLine(SAMPLES[i]!, { command: "builtin apply" }))).toEqual(["log"]);
    const outputs = translateUiLine(SAMPLES[11]!, { command: "builtin apply" })[0]!.payload.line as string;
    expect(outputs).toContain("password = (sensitive value)");
    expect(outputs).toContain('site_path = "sites/docs"');
  });

  it("reads OpenTofu -json lines from text, and keeps non-JSON text as plain log lines", () => {
    // Sample lines written by hand from OpenTofu's documented machine-readable UI format.
    const tofuSample = `{"@level":"info","@message":"aws_s3_bucket.site: Plan to create","@module":"tofu.ui","@timestamp":"2026-01-01T00:00:00Z","change":{"resource":{"addr":"aws_s3_bucket.site","module":"","resource":"aws_s3_bucket.site","implied_provider":"aws","resource_type":"aws_s3_bucket","resource_name":"site","resource_key":null},"action":"create"},"type":"planned_change"}`;
    const evs = translateJsonLine(tofuSample, { command: "tofu plan" });
    expect(evs[1]!.payload).toMatchObject({ address: "aws_s3_bucket.site", type: "aws_s3_bucket", action: "create", phase: "planned" });
    expect(translateJsonLine("Initializing the backend...", { command: "tofu init" })).toEqual([{ type: "log", payload: { line: "Initializing the backend..." } }]);
    expect(translateJsonLine("   ", { command: "tofu init" })).toEqual([]);
  });

  it("never puts a sensitive value in an event when the database-credentials module runs for real", async () => {
    const root = await tempDir();
    const lines: UiMessage[] = [];
    const opts = { moduleDir: path.join(CATALOG, "database-credentials"), variables: { database_name: "orders" }, state: null, providerConfig: { local: { root } }, emit: (l: UiMessage) => lines.push(l) };
    const p = await plan(opts);
    const result = await apply(opts, p.plan);
    await refresh({ ...opts, state: result.state });
    const password = result.outputs.password!.value as string;
    expect(password).toHaveLength(24);
    const events = lines.flatMap((l) => translateUiLine(l, { command: "builtin apply" }));
    expect(new Set(events.map((e) => e.type))).toEqual(new Set(["log", "resource", "summary"]));
    expect(JSON.stringify(events)).not.toContain(password);
    // And the redactor masks it even if some engine printed it.
    const r = new Redactor();
    r.add(password);
    expect(r.value({ line: `leaked ${password}` })).toEqual({ line: "leaked (sensitive value)" });
  });
});

describe("translate: Pulumi engine events → progress events", () => {
  // Samples written by hand from Pulumi's documented engine event shapes (pulumi up --json / --event-log).
  const urn = "urn:pulumi:dev::site::aws:s3/bucket:Bucket::site-bucket";
  it("maps resource pre/outputs/failed events, diagnostics and the summary", () => {
    const ctx = { command: "pulumi up" };
    const pre = translatePulumiEvent({ sequence: 1, timestamp: 1, resourcePreEvent: { metadata: { op: "create", urn, type: "aws:s3/bucket:Bucket" } } }, ctx);
    expect(pre[1]!.payload).toEqual({ address: urn, type: "aws:s3/bucket:Bucket", action: "create", phase: "start" });
    const done = translatePulumiEvent({ sequence: 2, timestamp: 2, resOutputsEvent: { metadata: { op: "create", urn, type: "aws:s3/bucket:Bucket" } } }, ctx);
    expect(done[1]!.payload).toMatchObject({ action: "create", phase: "complete" });
    const failed = translatePulumiEvent({ sequence: 3, timestamp: 3, resOpFailedEvent: { metadata: { op: "update", urn, type: "aws:s3/bucket:Bucket" }, status: 1 } }, ctx);
    expect(failed[1]!.payload).toMatchObject({ action: "update", phase: "errored" });
    const diag = translatePulumiEvent({ sequence: 4, timestamp: 4, diagnosticEvent: { message: "error: access denied\n", severity: "error", urn } }, ctx);
    expect(diag[1]).toEqual({ type: "diagnostic", payload: { severity: "error", summary: "error: access denied", detail: "error: access denied", address: urn } });
    const sum = translatePulumiEvent({ sequence: 5, timestamp: 5, summaryEvent: { resourceChanges: { create: 2, update: 1, delete: 1, replace: 1, same: 4 } } }, ctx);
    expect(sum[1]).toEqual({ type: "summary", payload: { command: "pulumi up", operation: "apply", add: 3, change: 1, remove: 2 } });
  });

  it("reads a pulumi preview --json document", () => {
    const doc = { steps: [{ op: "create", urn }, { op: "same", urn: urn + "2" }], changeSummary: { create: 1, same: 1 }, diagnostics: [] };
    const evs = translatePulumiPreview(doc, { command: "pulumi preview" });
    expect(evs.filter((e) => e.type === "resource").map((e) => [e.payload.action, e.payload.phase])).toEqual([
      ["create", "planned"],
      ["noop", "planned"],
    ]);
    expect(evs.at(-1)).toEqual({ type: "summary", payload: { command: "pulumi preview", operation: "plan", add: 1, change: 0, remove: 0 } });
  });
});
