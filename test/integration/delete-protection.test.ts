// Delete protection for real: the built console on a real Postgres, a real runner process, the
// builtin engine writing real files. Under a component's policy with "Protect deletes" on, an update
// shows its deletes and replaces as not executed and leaves the files; a destroy deletes them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fs from "node:fs";
import { eq } from "drizzle-orm";
import { stateObjects } from "../../db/schema";
import type { InfraJob } from "../../lib/client";
import type { ProgressEvent } from "../../lib/runner-protocol";
import { reconfigure } from "../components";
import { setFlowControlPolicy } from "../../server/services/settings/flow-control";
import { startJobStack, type JobStack } from "./harness";

let stack: JobStack;
let t: JobStack["t"];
let org: JobStack["org"];
let trpc: JobStack["api"];
let rest: JobStack["rest"];
let componentId: string;
const runnerLog = () => stack.runners.map((r) => r.log()).join("");

const file = (name: string) => stack.file("protected", name);
const exists = (name: string) => fs.existsSync(file(name));

const finished = async (id: string): Promise<InfraJob> => rest.jobs.get((await stack.finished(id)).id);

async function update(spec: Record<string, unknown>): Promise<InfraJob> {
  await reconfigure(t.db, org.actor("engineer"), { id: componentId, spec });
  const job = await finished((await rest.jobs.create(componentId, { operation: "update" })).id);
  expect(job.result, `${job.reason}\n${runnerLog().slice(-2000)}`).toBe("succeeded");
  return job;
}

async function events(jobId: string): Promise<ProgressEvent[]> {
  return (await rest.jobs.events(jobId, 0, 5000)).events;
}
const summaryOf = (evs: ProgressEvent[], step: string) => evs.find((e) => e.type === "summary" && e.operation === step)!.payload;
const previewSummary = (job: InfraJob) => job.steps.find((s) => s.step === "preview")!.plan!.summary!;

async function stateAddresses(): Promise<string[]> {
  const [st] = await t.db.select().from(stateObjects).where(eq(stateObjects.componentId, componentId));
  const resources = (st.state as { resources: { type: string; name: string; instances: { index_key?: number }[] }[] }).resources;
  return resources.flatMap((r) => r.instances.map((i) => `${r.type}.${r.name}${i.index_key !== undefined ? `[${i.index_key}]` : ""}`)).sort();
}

beforeAll(async () => {
  stack = await startJobStack();
  ({ t, org, api: trpc, rest } = stack);
  await stack.registerKind("TestProtect", "protectable", [
    { name: "pages", type: "number", default: 2, description: "how many pages" },
    { name: "home", type: "string", default: "index", description: "the home page's name" },
    { name: "motto", type: "string", default: "first", description: "the motto" },
  ]);
  componentId = await stack.component("guarded", "dev", "TestProtect", {});
  await stack.startRunner("runner-protect", 1);

  // Before protection: the pages, the home page and the motto exist.
  await update({ pages: 2, home: "index", motto: "first" });
  expect(["page-0.txt", "page-1.txt", "index.html", "motto.txt"].every(exists)).toBe(true);
  const off = { manualStart: false, skipRefresh: false, previewBeforeApply: true, pauseBeforeApply: false };
  await setFlowControlPolicy(t.db, org.actor("admin"), { selector: "component", target: componentId, toggles: { ...off, protectDeletes: true } });
}, 240_000);

afterAll(async () => {
  await stack?.close();
});

describe("delete protection, end to end", () => {
  it("an update that deletes under protection lists the delete as not executed, counts agree everywhere, and the file stays on disk", async () => {
    const job = await update({ pages: 1, home: "index", motto: "first" });
    const review = await rest.jobs.getPlan(job.id);
    expect(await trpc.jobs.plan.query({ org: org.slug, id: job.id })).toEqual(review);
    expect(review.destroy).toBe(false);
    expect(review.operations).toEqual([
      {
        address: "local_file.page[1]",
        type: "local_file",
        action: "delete",
        executes: false,
        notExecuted: { reason: "delete_protection", message: expect.stringMatching(/^local_file\.page\[1\] is not deleted: delete protection is on for this component.*run a destroy job for the component/) },
      },
    ]);
    expect(review.counts).toEqual({ byAction: { delete: 1 }, byKind: { local_file: { delete: 1 } }, notExecuted: { delete: 1 } });
    expect(review.deletesNotExecuted).toBe(1);

    const evs = await events(job.id);
    expect(summaryOf(evs, "preview")).toMatchObject({ command: "builtin plan", add: 0, change: 0, remove: 0, skippedDeletes: review.deletesNotExecuted });
    expect(summaryOf(evs, "apply")).toMatchObject({ command: "builtin apply", remove: 0, skippedDeletes: review.deletesNotExecuted });
    expect(previewSummary(job)).toMatchObject({ remove: 0, skippedDeletes: review.deletesNotExecuted, applyable: false });
    expect(review.summary).toEqual(previewSummary(job));
    const planned = evs.find((e) => e.type === "resource" && e.payload.address === "local_file.page[1]" && e.payload.phase === "planned")!;
    expect(planned).toMatchObject({ operation: "preview", payload: { action: "delete", phase: "planned", message: "local_file.page[1]: Plan to delete (not executed)", notExecuted: review.operations[0]!.notExecuted } });
    expect(evs.filter((e) => e.operation === "apply" && e.type === "resource")).toEqual([]);

    expect(exists("page-1.txt")).toBe(true);
    expect(await stateAddresses()).toContain("local_file.page[1]");
  });

  it("an update that replaces under protection holds the replace back whole, naming the resource and the fix, and applies the rest", async () => {
    const job = await update({ pages: 1, home: "start", motto: "second" });
    const review = await rest.jobs.getPlan(job.id);
    const byAddress = Object.fromEntries(review.operations.map((o) => [o.address, o]));
    expect(byAddress["local_file.home"]).toMatchObject({ action: "replace", executes: false, notExecuted: { reason: "delete_protection" } });
    expect(byAddress["local_file.home"]!.notExecuted!.message).toMatch(/^local_file\.home is not replaced: delete protection is on for this component, and a replace would delete the object first/);
    expect(byAddress["local_file.home"]!.notExecuted!.message).toContain('To replace it, run a destroy job for the component, or turn "Protect deletes" off for the component\'s flow-control policy (Settings → Flow Control) and run the update again.');
    expect(byAddress["local_file.page[1]"]).toMatchObject({ action: "delete", executes: false });
    expect(byAddress["local_file.motto"]).toMatchObject({ action: "update", executes: true, notExecuted: null });
    expect(review.deletesInsideReplacements).toEqual([{ address: "local_file.home", executes: false }]);
    expect(review.counts.notExecuted).toEqual({ delete: 1, replace: 1 });
    expect(review.deletesNotExecuted).toBe(2);

    const evs = await events(job.id);
    expect(summaryOf(evs, "preview")).toMatchObject({ add: 0, change: 1, remove: 0, skippedDeletes: 2 });
    expect(summaryOf(evs, "apply")).toMatchObject({ add: 0, change: 1, remove: 0, skippedDeletes: 2 });
    expect(previewSummary(job)).toMatchObject({ add: 0, change: 1, remove: 0, skippedDeletes: 2 });

    expect(exists("index.html")).toBe(true);
    expect(exists("start.html")).toBe(false);
    expect(exists("page-1.txt")).toBe(true);
    expect(fs.readFileSync(file("motto.txt"), "utf8")).toBe("second");
  });

  it("a destroy under the same policy says it deletes everything, holds nothing back, and deletes the files", async () => {
    const job = await finished((await rest.jobs.create(componentId, { operation: "destroy" })).id);
    expect(job.result, job.reason ?? "").toBe("succeeded");
    const review = await rest.jobs.getPlan(job.id);
    expect(review.destroy).toBe(true);
    expect(review.deletesNotExecuted).toBe(0);
    expect(review.counts.byAction).toEqual({ delete: 4 });
    expect(review.counts.notExecuted).toEqual({});
    expect(review.operations.every((o) => o.executes && o.notExecuted === null)).toBe(true);
    const evs = await events(job.id);
    expect(summaryOf(evs, "preview")).toMatchObject({ remove: 4 });
    expect(summaryOf(evs, "preview").skippedDeletes).toBeUndefined();
    expect(summaryOf(evs, "destroy")).toMatchObject({ command: "builtin destroy", remove: 4 });
    expect(JSON.stringify(evs)).not.toContain("not executed");
    for (const f of ["page-0.txt", "page-1.txt", "index.html", "motto.txt"]) expect(exists(f)).toBe(false);
    expect(await stateAddresses()).toEqual([]);
  });
});
