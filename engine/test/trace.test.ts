// The tracer hook: each operation is one walk span, with a span per resource applied or refreshed and
// an event per planned change; without a tracer the operation runs as before.
import { describe, expect, it } from "vitest";
import { apply, plan, refresh, type EngineSpan, type EngineTracer } from "../index";
import { collector, writeModule } from "./helpers";

interface Recorded {
  name: string;
  parent?: string;
  events: string[];
  attributes: Record<string, unknown>;
  failed?: string;
  ended: boolean;
}

function recordingTracer(): { spans: Recorded[]; tracer: EngineTracer } {
  const spans: Recorded[] = [];
  const tracer: EngineTracer = {
    startSpan(name, attributes = {}, parent) {
      const r: Recorded = { name, parent: (parent as (EngineSpan & { record: Recorded }) | undefined)?.record.name, events: [], attributes: { ...attributes }, ended: false };
      spans.push(r);
      return {
        record: r,
        addEvent: (n, a) => void r.events.push(`${n} ${String(a?.["planton.resource.address"] ?? "")}`.trim()),
        setAttributes: (a) => void Object.assign(r.attributes, a),
        fail: (m) => void (r.failed = m),
        end: () => void (r.ended = true),
      } as EngineSpan;
    },
  };
  return { spans, tracer };
}

const MODULE = {
  "main.tf": `
resource "terraform_data" "a" {
  input = "a"
}
resource "terraform_data" "b" {
  input = terraform_data.a.output
}
`,
};

describe("the engine's tracer hook", () => {
  it("traces a plan as one walk with its planned changes, an apply with a span per resource, and a refresh per resource read", async () => {
    const moduleDir = await writeModule(MODULE);
    const { spans, tracer } = recordingTracer();
    const ui = collector();
    const planned = await plan({ moduleDir, state: null, emit: ui.emit, tracer });
    const applied = await apply({ state: null, emit: ui.emit, tracer }, planned.plan);
    await refresh({ moduleDir, state: applied.state, tracer });

    expect(spans.map((s) => `${s.name} < ${s.parent ?? "(caller)"}`)).toEqual([
      "engine plan < (caller)",
      "engine apply < (caller)",
      "create terraform_data.a < engine apply",
      "create terraform_data.b < engine apply",
      "engine refresh < (caller)",
      "refresh terraform_data.a < engine refresh",
      "refresh terraform_data.b < engine refresh",
    ]);
    expect(spans.every((s) => s.ended && !s.failed)).toBe(true);
    expect(spans[0]!.events).toEqual(["planned_change terraform_data.a", "planned_change terraform_data.b"]);
    expect(spans[1]!.attributes).toMatchObject({ "planton.changes.add": 2, "planton.changes.remove": 0 });
    // The caller's own emit still receives every line.
    expect(ui.ofType("apply_complete")).toHaveLength(2);
  });

  it("marks the walk failed when the operation fails", async () => {
    const moduleDir = await writeModule({ "main.tf": `resource "terraform_data" "a" {\n  input = var.missing\n}\n` });
    const { spans, tracer } = recordingTracer();
    await expect(plan({ moduleDir, state: null, tracer })).rejects.toThrow();
    expect(spans).toMatchObject([{ name: "engine plan", ended: true, failed: expect.any(String) }]);
  });
});
