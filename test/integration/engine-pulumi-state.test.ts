// A Pulumi component keeps its state on the component's state backend, from one job to the next: the built console on
// a real Postgres and a real runner process, with a STAND-IN `pulumi` on the runner's PATH — a small Node script,
// because Pulumi itself cannot be installed here. It keeps a stack's deployment as Pulumi's file backend does (a
// file under PULUMI_BACKEND_URL), answers `stack import` / `stack export` with that deployment (the shape Pulumi
// documents: {version: 3, deployment: {manifest: {time, version}, resources}}), and `up` adds one resource to what is
// there, stamping a new deployment time — so a job that did not get the previous job's state would start from none.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { eq } from "drizzle-orm";
import { stateBackends, stateObjects } from "../../db/schema";
import { newId } from "../../lib/ids";
import { createPlantonClient } from "../../lib/client";
import { PlantonManagedStore, plantonManagedKey } from "../../server/services/state-backends/planton-managed-store";
import { storedStateOf } from "../../state-backends/rules";
import { startJobStack, stepsOf, type JobStack } from "./harness";

let stack: JobStack;
const bin = fs.mkdtempSync(path.join(os.tmpdir(), "planton-standin-pulumi-"));
/** Every command the stand-in ran, one JSON line each ({args, imported?: resource count}). */
const calls = path.join(bin, "calls.log");

const standIn = `#!/usr/bin/env node
const fs = require("node:fs");
const path = require("node:path");
const args = process.argv.slice(2);
const flag = (name) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : undefined; };
const root = () => new URL(process.env.PULUMI_BACKEND_URL).pathname;
const stackFile = () => path.join(root(), (flag("--stack") || "dev") + ".json");
const read = () => (fs.existsSync(stackFile()) ? JSON.parse(fs.readFileSync(stackFile(), "utf8")) : null);
// Pulumi stamps every deployment with RFC 3339 nanoseconds.
const now = () => new Date().toISOString().replace("Z", "123456Z");
const write = (resources) => { fs.mkdirSync(root(), { recursive: true }); fs.writeFileSync(stackFile(), JSON.stringify({ version: 3, deployment: { manifest: { time: now(), magic: "", version: "v3.150.0" }, resources } })); };
const log = (extra) => fs.appendFileSync(${JSON.stringify(calls)}, JSON.stringify({ args, ...extra }) + "\\n");
const stackResource = (outputs) => ({ urn: "urn:pulumi:s::pets::pulumi:pulumi:Stack::pets-s", custom: false, type: "pulumi:pulumi:Stack", outputs });
const custom = (r) => r.custom;
const cmd = args[0] === "stack" ? "stack " + args[1] : args[0];
switch (cmd) {
  case "version": console.log("v3.150.0"); break;
  case "stack select": case "config": log({}); break;
  case "stack import": { const d = JSON.parse(fs.readFileSync(flag("--file"), "utf8")); fs.mkdirSync(root(), { recursive: true }); fs.writeFileSync(stackFile(), JSON.stringify(d)); log({ imported: d.deployment.resources.filter(custom).length }); break; }
  case "stack export": if (fs.existsSync(path.join(__dirname, "export-fails"))) { console.error("error: could not export"); process.exit(1); }
    fs.writeFileSync(flag("--file"), JSON.stringify(read() ?? { version: 3, deployment: { manifest: { time: "0001-01-01T00:00:00Z", magic: "", version: "" } } })); log({}); break;
  case "stack output": { const d = read(); const s = d && d.deployment.resources.find((r) => r.type === "pulumi:pulumi:Stack"); console.log(JSON.stringify(s ? s.outputs : {})); break; }
  case "preview": { const have = (read()?.deployment.resources ?? []).filter(custom).length; const pet = (i) => "urn:pulumi:s::pets::random:index/randomPet:RandomPet::pet-" + i;
    const type = "random:index/randomPet:RandomPet";
    // As Pulumi prints a preview: every step, a replacement as its replace step and its two halves; inputs may hold secrets.
    const steps = [...Array.from({ length: have }, (_, i) => ({ op: "same", urn: pet(i), oldState: { type }, newState: { type } })).slice(1),
      ...(have ? [{ op: "replace", urn: pet(0), oldState: { type }, newState: { type, inputs: { password: "hunter2-in-preview" } } }, { op: "create-replacement", urn: pet(0), newState: { type } }, { op: "delete-replaced", urn: pet(0), oldState: { type } }] : []),
      { op: "create", urn: pet(have), newState: { type, inputs: { password: "hunter2-in-preview" } } }];
    // The saved plan, as \`--save-plan\` writes one: each resource's planned steps by URN.
    const resourcePlans = {};
    for (const st of steps) (resourcePlans[st.urn] ??= { steps: [] }).steps.push(st.op);
    fs.writeFileSync(flag("--save-plan"), JSON.stringify({ manifest: { time: now(), magic: "", version: "v3.150.0" }, resourcePlans }));
    console.log(JSON.stringify({ steps, changeSummary: { create: 1, same: have } }, null, 2)); log({ saw: have }); break; }
  case "up": {
    const pets = (read()?.deployment.resources ?? []).filter(custom);
    const n = pets.length;
    const pet = { urn: "urn:pulumi:s::pets::random:index/randomPet:RandomPet::pet-" + n, custom: true, type: "random:index/randomPet:RandomPet", id: "pet-" + n + "-id",
      outputs: { length: 2, password: { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", ciphertext: "v1:secret-" + n } } };
    write([stackResource({ count: n + 1, token: { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", ciphertext: "v1:t" } }), ...pets, pet]);
    console.log(JSON.stringify({ sequence: 1, timestamp: 1, summaryEvent: { resourceChanges: { create: 1, same: n } } }));
    log({ saw: n, plan: flag("--plan") ? Object.keys(JSON.parse(fs.readFileSync(flag("--plan"), "utf8")).resourcePlans) : null });
    break;
  }
  case "destroy": {
    const all = read()?.deployment.resources ?? [];
    if (args.includes("--preview-only")) {
      const steps = all.filter(custom).map((r) => ({ op: "delete", urn: r.urn, oldState: { type: r.type } }));
      console.log(JSON.stringify({ steps, changeSummary: { delete: steps.length } }, null, 2));
      log({ saw: steps.length });
    } else {
      write([]);
      log({ saw: all.filter(custom).length });
    }
    break;
  }
  case "refresh": write(read()?.deployment.resources ?? []); log({}); break;
  default: log({ unknown: true });
}
`;

beforeAll(async () => {
  fs.writeFileSync(path.join(bin, "pulumi"), standIn, { mode: 0o755 });
  stack = await startJobStack({ runnerEnv: { PATH: `${bin}${path.delimiter}${process.env.PATH}` } });
  await stack.registerKind("PulumiPets", "marker", [], "pulumi");
  await stack.startRunner("runner-pulumi", 1);
}, 240_000);
afterAll(async () => {
  await stack?.close();
  fs.rmSync(bin, { recursive: true, force: true });
});

const ran = () => fs.readFileSync(calls, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { args: string[]; imported?: number; saw?: number; plan?: string[] | null });
async function succeeded(component: string, operation: string) {
  const { id } = await stack.run(component, operation);
  const job = await stack.finished(id).catch(async (e) => {
    throw new Error(`${(e as Error).message}\n${JSON.stringify(await stack.api.jobs.get.query({ org: stack.org.slug, id }))}\n${stack.runners.map((r) => r.log()).join("").slice(-3000)}`);
  });
  expect(job.result, `${stepsOf(job).join(" ")}\n${stack.runners.map((r) => r.log()).join("").slice(-3000)}`).toBe("succeeded");
  return job;
}

describe("Pulumi state on the component's state backend (stand-in pulumi)", () => {
  it("an export that fails after the update keeps Pulumi's backend folder on the runner host and says where", async () => {
    await stack.component("pets-kept", "dev", "PulumiPets", {});
    await succeeded("pets-kept", "preview");
    fs.writeFileSync(path.join(bin, "export-fails"), "");
    try {
      const { id } = await stack.run("pets-kept", "update");
      const job = await stack.finished(id);
      expect(job.result).toBe("failed");
      const m = /The stack's state could not be exported after the refresh \(pulumi stack export exited with code 1; .*\), so it was not saved to the component's state backend\. Pulumi's backend folder is kept on runner host \S+ at (\S+), readable by the runner's user only/.exec(job.reason ?? "");
      expect(m, job.reason ?? "").not.toBeNull();
      expect(fs.existsSync(path.join(m![1]!, "dev-pets-kept.json"))).toBe(true);
      expect(fs.statSync(path.dirname(m![1]!)).mode & 0o777).toBe(0o700);
    } finally {
      fs.rmSync(path.join(bin, "export-fails"), { force: true });
    }
  });

  it("an approver sees what a Pulumi preview changes (URN, type and action, from the preview's steps, bound to the plan), never its inputs", async () => {
    await stack.component("pets-reviewed", "dev", "PulumiPets", {});
    await succeeded("pets-reviewed", "update");
    await stack.componentPolicy("pets-reviewed", { pauseBeforeApply: true });
    const { id } = await stack.run("pets-reviewed", "update");
    const paused = await stack.waitFor(id, (j) => j.status !== "queued" && j.status !== "running");
    expect(paused.status).toBe("awaiting_approval");
    const review = await stack.rest.jobs.getPlan(id);
    expect(review).toMatchObject({ verification: "verified", changesListed: true, notes: [] });
    expect(review.operations.map((o) => `${o.action} ${o.address}`)).toEqual([
      "replace urn:pulumi:s::pets::random:index/randomPet:RandomPet::pet-0",
      "create urn:pulumi:s::pets::random:index/randomPet:RandomPet::pet-1",
    ]);
    expect(review.counts.byKind).toEqual({ "random:index/randomPet:RandomPet": { replace: 1, create: 1 } });
    const rendition = (await stack.rest.jobs.listArtifacts(id)).find((a) => a.kind === "plan_review")!;
    expect(new TextDecoder().decode(await stack.rest.jobs.getArtifact(id, rendition.id))).not.toContain("hunter2-in-preview");
    await stack.rest.jobs.resume(id, { expectedChecksum: review.checksum });
    expect((await stack.finished(id)).result).toBe("succeeded");
  });

  it("under delete protection, runs an update held to a saved plan that deletes nothing (up --plan), and refuses one whose plan replaces, naming it", async () => {
    await stack.component("pets-protected", "dev", "PulumiPets", {});
    await stack.componentPolicy("pets-protected", { protectDeletes: true });
    const mark = ran().length;
    await succeeded("pets-protected", "update");
    const up = ran().slice(mark).find((c) => c.args[0] === "up")!;
    expect(up.plan).toEqual(["urn:pulumi:s::pets::random:index/randomPet:RandomPet::pet-0"]);

    // The next preview plans to replace pet-0: nothing is applied.
    const next = ran().length;
    const { id } = await stack.run("pets-protected", "update");
    const job = await stack.finished(id);
    expect(job.result).toBe("failed");
    expect(job.reason).toMatch(/^apply failed: Nothing was applied: delete protection is on for this component, and the plan deletes or replaces 1 resource\(s\) \(urn:pulumi:s::pets::random:index\/randomPet:RandomPet::pet-0\); Pulumi cannot leave them out of an apply/);
    expect(ran().slice(next).some((c) => c.args[0] === "up")).toBe(false);
  });

  it("a destroy under a pause binds its approval to the URNs its preview deletes, and runs only while the stack still holds exactly those", async () => {
    const cid = await stack.component("pets-doomed", "dev", "PulumiPets", {});
    await succeeded("pets-doomed", "update");
    await stack.componentPolicy("pets-doomed", { pauseBeforeApply: true });
    const paused = async () => {
      const { id } = await stack.run("pets-doomed", "destroy");
      const job = await stack.waitFor(id, (j) => j.status !== "queued" && j.status !== "running");
      expect(job.status, job.reason ?? "").toBe("awaiting_approval");
      return { id, review: await stack.rest.jobs.getPlan(id) };
    };
    const pet = (i: number) => `urn:pulumi:s::pets::random:index/randomPet:RandomPet::pet-${i}`;

    // The stack changes after the review (another pet appears, written as a job's stack export would be): nothing is destroyed.
    const first = await paused();
    expect(first.review).toMatchObject({ destroy: true, changesListed: true });
    expect(first.review.operations.map((o) => `${o.action} ${o.address}`)).toEqual([`delete ${pet(0)}`]);
    const [row] = await stack.t.db.select().from(stateObjects).where(eq(stateObjects.componentId, cid));
    const grown = structuredClone(row!.state) as { checkpoint: { latest: { manifest: { time: string }; resources: { urn: string }[] } } };
    grown.checkpoint.latest.resources.push({ ...grown.checkpoint.latest.resources.at(-1)!, urn: pet(7) });
    grown.checkpoint.latest.manifest.time = new Date(Date.parse(grown.checkpoint.latest.manifest.time.replace(/(\.\d{3})\d+/, "$1")) + 1).toISOString();
    await new PlantonManagedStore(stack.t.db, stack.org.orgId, "test").write(plantonManagedKey(stack.org.orgId, cid), storedStateOf(new TextEncoder().encode(JSON.stringify(grown))));
    await stack.rest.jobs.resume(first.id, { expectedChecksum: first.review.checksum });
    const refused = await stack.finished(first.id);
    expect(refused.result).toBe("failed");
    expect(refused.reason).toBe(`destroy failed: Nothing was destroyed: the stack changed since its destroy was reviewed (it would now also delete ${pet(7)}). Run the destroy again and review its new plan.`);
    expect((await stack.api.components.state.query({ id: cid }))?.resources).toHaveLength(2);

    // Reviewed again and approved, it deletes exactly what was reviewed.
    const second = await paused();
    expect(second.review.operations.map((o) => o.address)).toEqual([pet(0), pet(7)]);
    await stack.rest.jobs.resume(second.id, { expectedChecksum: second.review.checksum });
    expect((await stack.finished(second.id)).result).toBe("succeeded");
    expect((await stack.api.components.state.query({ id: cid }))?.resources).toEqual([]);
  });

  it("a Pulumi component's checkpoint moves off Planton-managed storage (pulumi state migrate-backend), and its next job runs against the new backend", async () => {
    const cid = await stack.component("pets-moved", "dev", "PulumiPets", {});
    await succeeded("pets-moved", "update");
    const before = await stack.api.components.state.query({ id: cid });
    const dir = path.join(stack.infraRoot, "backends", "pulumi-files");
    await stack.t.db.insert(stateBackends).values({ id: newId("stateBackend"), orgId: stack.org.orgId, name: "pulumi-files", kind: "local", config: { path: dir } });
    const admin = createPlantonClient({ url: stack.server.url, token: await stack.tokenFor("admin") });
    const started = await admin.stateMoves.migrateBackend(cid, { to: "pulumi-files" });
    const moved = await vi.waitFor(async () => {
      const m = await admin.stateMoves.get(started.move!.id);
      if (m.status === "running") throw new Error("the move still runs");
      return m;
    }, { timeout: 60_000, interval: 100 });
    expect(moved).toMatchObject({ status: "succeeded", progress: { done: 1, failed: 0 } });
    // The same bytes' identity at the destination: the checkpoint with its deployment-time serial (a bigint's worth).
    const file = JSON.parse(fs.readFileSync(path.join(dir, "dev", "pets-moved", "terraform.tfstate"), "utf8"));
    expect(file).toMatchObject({ version: 3, checkpoint: { stack: "dev-pets-moved" } });
    expect(moved.items[0]).toMatchObject({ serial: before!.serial, checksum: before!.checksum });

    const mark = ran().length;
    await succeeded("pets-moved", "update");
    expect(ran().slice(mark).filter((c) => c.args[1] === "import").map((c) => c.imported)).toEqual([1, 1, 1]);
    const after = await stack.api.components.state.query({ id: cid });
    expect(after).toMatchObject({ backend: { name: "pulumi-files", kind: "local" } });
    expect(after?.resources).toHaveLength(2);
    const rewritten = JSON.parse(fs.readFileSync(path.join(dir, "dev", "pets-moved", "terraform.tfstate"), "utf8"));
    expect(rewritten.checkpoint.latest.resources.filter((r: { custom: boolean }) => r.custom)).toHaveLength(2);
    // The State tab reads it from there (its serial is the new file's), and the versions kept on Planton-managed storage
    // from before the move cannot be rolled back to while the state lives elsewhere.
    expect(after).toMatchObject({ planton: false, unreadable: null, format: "pulumi" });
    expect(after!.serial).toBeGreaterThan(before!.serial!);
    const [kept] = await stack.api.components.stateVersions.query({ id: cid });
    const adminApi = await stack.as("admin");
    const refused = await adminApi.components.stateRollback.mutate({ id: cid, versionId: kept!.id }).catch((e: Error) => e);
    expect((refused as Error).message).toBe(
      "Nothing was rolled back: the state of pets-moved was moved to pulumi-files, and lives there now; the versions kept on Planton-managed storage are for the move's rollback. Roll the move back first (Settings → State Backends, the move's result), then roll back to this version.",
    );
  });

  it("keeps each job's checkpoint, imports it into the next job, lists versions and diffs them by URN with secrets masked, and rolls back", async () => {
    const cid = await stack.component("pets", "dev", "PulumiPets", {});
    const start = ran().length;
    await succeeded("pets", "update");
    // The first job's refresh had no state to import, and recorded an empty deployment; its preview and update imported
    // that; each export with a new deployment time was written as a Pulumi checkpoint (serial: that time).
    expect(ran().slice(start).filter((c) => c.args[1] === "import" || c.args[0] === "refresh").map((c) => c.imported ?? c.args[0])).toEqual(["refresh", 0, 0]);
    const first = await stack.api.components.state.query({ id: cid });
    expect(first?.resources.map((r) => r.address)).toEqual(["urn:pulumi:s::pets::random:index/randomPet:RandomPet::pet-0"]);
    expect(first?.resources[0]).toMatchObject({ type: "random:index/randomPet:RandomPet", provider: "random", id: "pet-0-id", instances: 1 });
    expect(first?.engineVersion).toBe("pulumi v3.150.0");
    expect(first?.outputs).toEqual([{ name: "count", sensitive: false, value: 1 }, { name: "token", sensitive: true, value: null }]);
    expect(first!.serial!).toBeGreaterThan(Date.parse("2026-01-01"));
    const [row] = await stack.t.db.select().from(stateObjects).where(eq(stateObjects.componentId, cid));
    expect(row!.state).toMatchObject({ version: 3, checkpoint: { stack: "dev-pets", latest: { resources: expect.any(Array) } } });

    // The next job's steps start from it: the preview saw one pet, the update added the second.
    const before = ran().length;
    await succeeded("pets", "update");
    const second = ran().slice(before);
    expect(second.filter((c) => c.args[1] === "import").map((c) => c.imported)).toEqual([1, 1, 1]);
    expect(second.filter((c) => c.args[0] === "up" || c.args[0] === "preview").map((c) => `${c.args[0]} saw ${c.saw}`)).toEqual(["preview saw 1", "up saw 1"]);
    const now = await stack.api.components.state.query({ id: cid });
    expect(now?.resources).toHaveLength(2);
    expect(now!.serial!).toBeGreaterThan(first!.serial!);

    // Each refresh and update recorded a deployment, and each is a version; a preview step exports and writes nothing.
    await succeeded("pets", "preview");
    const versions = await stack.api.components.stateVersions.query({ id: cid });
    const mine = ran().slice(start).filter((c) => c.args.includes("dev-pets"));
    expect(versions).toHaveLength(mine.filter((c) => c.args[0] === "refresh" || c.args[0] === "up").length);
    expect(mine.filter((c) => c.args[1] === "export")).toHaveLength(versions.length);
    const newest = versions[0]!;
    const oldest = versions.find((v) => v.serial === first!.serial)!;
    const diff = await stack.api.components.stateDiff.query({ id: cid, fromId: oldest!.id, toId: newest!.id });
    expect(diff.added).toEqual(["urn:pulumi:s::pets::random:index/randomPet:RandomPet::pet-1"]);
    expect(diff.removed).toEqual([]);
    expect(JSON.stringify(diff)).not.toContain("v1:secret");

    // An admin rolls back to the first checkpoint: written again at a later deployment time (the serial never moves back).
    const admin = await stack.as("admin");
    const current = await stack.api.components.state.query({ id: cid });
    const rolled = await admin.components.stateRollback.mutate({ id: cid, versionId: oldest!.id });
    expect(rolled.serial).toBe(current!.serial! + 1);
    const back = await stack.api.components.state.query({ id: cid });
    expect(back?.resources.map((r) => r.address)).toEqual(first!.resources.map((r) => r.address));
    expect(back?.serial).toBe(current!.serial! + 1);

    // The next job starts from the rolled-back checkpoint; a destroy leaves a checkpoint with no resources.
    const mark = ran().length;
    await succeeded("pets", "update");
    expect(ran().slice(mark).find((c) => c.args[0] === "up")?.saw).toBe(1);
    await succeeded("pets", "destroy");
    expect((await stack.api.components.state.query({ id: cid }))?.resources).toEqual([]);
  });
});
