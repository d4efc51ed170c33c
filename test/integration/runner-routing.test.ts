// Where work runs, with real runner processes on the built console: a job goes to the runner its
// connection names, another to the organization's default runner, the rest to a Planton-hosted
// runner, and each job says which; revoking a runner mid-job fails that job with the reason.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStateBackend, setDefaultStateBackend } from "../../server/services/state-backends/backends";
import { createConnection, setConnectionAuthorizations } from "../../server/services/settings/connections";
import { draftComponent } from "../components";
import { startJobStack, type JobStack, type RunnerProcess } from "./harness";

let s: JobStack;
let edge: RunnerProcess;
const ran = (j: { attempts: { runnerName: string | null }[] }) => j.attempts.map((a) => a.runnerName);

beforeAll(async () => {
  s = await startJobStack();
  const admin = s.org.call("admin");
  // The organization's builtin states go to a directory of its own, which its own runners can reach.
  await createStateBackend(s.t.db, s.org.actor(), { name: "own-states", kind: "local", config: { path: s.file("states") } });
  await setDefaultStateBackend(s.t.db, s.org.actor(), { provisioner: "builtin", backend: "own-states" });
  const edgeRunner = await admin.runners.register({ org: s.org.slug, name: "edge-runner", capacity: 1 });
  const prodRunner = await admin.runners.register({ org: s.org.slug, name: "prod-runner", capacity: 1 });
  const conn = await createConnection(s.t.db, s.org.actor(), { name: "edge", provider: "local", config: { root: s.infraRoot }, runnerId: edgeRunner.runner.id });
  await setConnectionAuthorizations(s.t.db, s.org.actor(), { id: conn.id, organization: true });
  await s.registerKind("TestSlow", "slow", [{ name: "name", type: "string", required: true, description: "folder" }]);
  await s.startRunner("hosted-1");
  edge = await s.startRunner("edge-runner", 1, edgeRunner.token);
  await s.startRunner("prod-runner", 1, prodRunner.token);
}, 240_000);
afterAll(() => s?.close());

describe("routing with real runner processes", () => {
  it("a job goes to the runner its connection names, another to the organization's default, the rest to a Planton-hosted runner; each job says where it ran", async () => {
    const admin = s.org.call("admin");
    await admin.runners.setDefault({ org: s.org.slug, runner: "prod-runner" });
    const onEdge = (await draftComponent(s.t.db, s.org.actor(), { environment: "dev", kind: "StaticSite", name: "on-edge", spec: { site_name: "on-edge" }, connection: "edge" })).id;
    s.ids["on-edge"] = onEdge;
    await s.component("on-default", "dev", "StaticSite", { site_name: "on-default" });

    const edgeJob = await s.finished((await s.run("on-edge", "update")).id);
    expect([edgeJob.result, edgeJob.route?.sentence, ran(edgeJob)]).toEqual(["succeeded", "on edge-runner: named by connection edge", ["edge-runner"]]);
    const defaultJob = await s.finished((await s.run("on-default", "update")).id);
    expect([defaultJob.result, defaultJob.route?.sentence, ran(defaultJob)]).toEqual(["succeeded", "on prod-runner: the organization's default runner", ["prod-runner"]]);

    await admin.runners.unsetDefault({ org: s.org.slug });
    const hostedJob = await s.finished((await s.run("on-default", "refresh")).id);
    expect([hostedJob.result, hostedJob.route?.rule, ran(hostedJob)]).toEqual(["succeeded", "hosted", ["hosted-1"]]);

    // The Runners page's figures: who ran what, which connection names which runner.
    const list = await admin.runners.list({ org: s.org.slug });
    expect(list.runners.find((r) => r.name === "edge-runner")).toMatchObject({ kind: "self_hosted", connections: ["edge"], isDefault: false, status: expect.stringMatching(/^(online|busy)$/) });
    const detail = await admin.runners.get({ org: s.org.slug, runner: "prod-runner" });
    expect(detail.recentJobs.map((j) => j.id)).toEqual([defaultJob.id]);
  });

  it("revoking a runner mid-job fails its running job with the reason, and its process stops working on it", async () => {
    s.gates.hold("edge-held");
    const id = (await draftComponent(s.t.db, s.org.actor(), { environment: "dev", kind: "TestSlow", name: "slow-edge", spec: { name: "edge-held" }, connection: "edge" })).id;
    s.ids["slow-edge"] = id;
    const job = await s.run("slow-edge", "update");
    await s.gates.held("edge-held");
    const { failedJobs } = await s.org.call("admin").runners.revoke({ org: s.org.slug, runner: "edge-runner" });
    expect(failedJobs).toEqual([job.id]);
    s.gates.release("edge-held");
    const done = await s.finished(job.id);
    expect(done.result).toBe("failed");
    expect(done.reason).toBe(`runner edge-runner was revoked by ${s.org.actor().label}`);
    // The runner hears it at its next call and leaves the job: its log says the server refused it.
    await expect.poll(() => edge.log()).toMatch(/revoked/);
  });
});
