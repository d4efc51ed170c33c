import { describe, expect, it } from "vitest";
import { Graph, walk } from "./graph";
import { CycleError } from "../errors";
import { validate, plan } from "../index";
import { writeModule } from "../test/helpers";

describe("graph", () => {
  it("orders dependencies first and refuses a cycle with OpenTofu's message", () => {
    const g = new Graph();
    g.connect("b", "a");
    g.connect("c", "b");
    expect(g.topologicalOrder()).toEqual(["a", "b", "c"]);
    g.connect("a", "c");
    expect(() => g.assertAcyclic()).toThrow(CycleError);
    expect(() => g.assertAcyclic()).toThrow(/^Cycle: a, c, b$/);
  });

  it("refuses a module whose references form a cycle before anything runs", async () => {
    const dir = await writeModule({
      "main.tf": `
locals {
  a = local.b
  b = random_pet.p.id
}
resource "random_pet" "p" {
  prefix = local.a
}
resource "random_id" "ok" {
  byte_length = 2
}
`,
    });
    const v = await validate(dir);
    expect(v.valid).toBe(false);
    expect(v.diagnostics[0]!.summary).toMatch(/^Cycle: /);
    expect(v.diagnostics[0]!.summary.slice(7).split(", ").sort()).toEqual(["local.a", "local.b", "random_pet.p"]);
    const lines: string[] = [];
    await expect(plan({ moduleDir: dir, state: null, emit: (l) => lines.push(l.type) })).rejects.toThrow(/^Cycle: (local\.a|local\.b|random_pet\.p)(, (local\.a|local\.b|random_pet\.p)){2}$/);
    expect(lines).toEqual(["version", "diagnostic"]);
  });

  it("walks independent nodes in parallel up to the limit, never before their dependencies", async () => {
    const g = new Graph();
    for (let i = 0; i < 8; i++) g.connect(`leaf${i}`, "root");
    g.connect("last", "leaf3");
    const finished = new Set<string>();
    let running = 0;
    let peak = 0;
    const gates: (() => void)[] = [];
    const visits: string[] = [];
    const walking = walk(
      g,
      async (n) => {
        for (const d of g.dependenciesOf(n)) expect(finished.has(d)).toBe(true);
        visits.push(n);
        running++;
        peak = Math.max(peak, running);
        // Hold each node until released, so concurrency is observed rather than timed.
        await new Promise<void>((resolve) => gates.push(resolve));
        running--;
        finished.add(n);
      },
      { parallelism: 3 },
    );
    while (finished.size < 10) {
      await new Promise((r) => setImmediate(r));
      gates.splice(0).forEach((release) => release());
    }
    const result = await walking;
    expect(result.completed).toHaveLength(10);
    expect(peak).toBe(3);
    expect(visits[0]).toBe("root");
    expect(visits.indexOf("last")).toBeGreaterThan(visits.indexOf("leaf3"));
  });

  it("skips the dependents of a failed node and still runs the rest", async () => {
    const g = new Graph();
    g.connect("b", "a");
    g.connect("c", "b");
    g.add("x");
    const result = await walk(g, async (n) => {
      if (n === "a") throw new Error("boom");
    });
    expect([...result.failed.keys()]).toEqual(["a"]);
    expect(result.skipped.sort()).toEqual(["b", "c"]);
    expect(result.completed).toEqual(["x"]);
  });

  it("stops scheduling when aborted and lets in-flight nodes finish", async () => {
    const g = new Graph();
    for (const n of ["a", "b", "c", "d"]) g.add(n);
    const ac = new AbortController();
    let inFlightFinished = false;
    const result = await walk(
      g,
      async (n) => {
        if (n === "a") ac.abort();
        await new Promise((r) => setImmediate(r));
        if (n === "a") inFlightFinished = true;
      },
      { parallelism: 1, signal: ac.signal },
    );
    expect(inFlightFinished).toBe(true);
    expect(result.aborted).toBe(true);
    expect(result.completed).toEqual(["a"]);
    expect(result.notStarted.sort()).toEqual(["b", "c", "d"]);
  });

  it("lets the rest of the process in during a walk whose nodes never wait (timers and I/O run between them)", async () => {
    const g = new Graph();
    for (let i = 0; i < 100; i++) g.add(`n${String(i).padStart(3, "0")}`);
    let completed = 0;
    let completedWhenTimerRan: number | undefined;
    setTimeout(() => (completedWhenTimerRan = completed), 0);
    // Each node works a millisecond of CPU and returns without awaiting anything, as a local provider's node does.
    await walk(g, async () => {
      const until = performance.now() + 1;
      while (performance.now() < until);
      completed++;
    });
    expect(completed).toBe(100);
    // Before, the walk was one chain of microtasks: the timer ran only after the last node.
    expect(completedWhenTimerRan).toBeDefined();
    expect(completedWhenTimerRan!).toBeLessThan(100);
  });

  it("reverses edges for destroy order", () => {
    const g = new Graph();
    g.connect("file", "dir");
    expect(g.reversed().topologicalOrder()).toEqual(["file", "dir"]);
  });
});
