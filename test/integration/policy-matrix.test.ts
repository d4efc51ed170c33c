// The approval gate holds for every flow-control policy: each combination of the five toggles, for
// an update and then a destroy, run by a real runner process with the builtin engine on real files.
// Whatever else a policy says, pause_before_apply means no apply or destroy starts before an approval
// bound to the checksum of the plan it applies; manual_start holds the job before anything runs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fs from "node:fs";
import { POLICY_TOGGLES, type PolicyToggles } from "../../lib/flow-control";
import { startJobStack, type Job, type JobStack } from "./harness";

let s: JobStack;

const POLICIES: PolicyToggles[] = Array.from({ length: 2 ** POLICY_TOGGLES.length }, (_, bits) =>
  Object.fromEntries(POLICY_TOGGLES.map((name, i) => [name, Boolean(bits & (1 << i))])) as unknown as PolicyToggles,
);
const label = (p: PolicyToggles) => POLICY_TOGGLES.filter((n) => p[n]).join("+") || "defaults-off";
const nameOf = (i: number) => `matrix-${i}`;

beforeAll(async () => {
  s = await startJobStack();
  await s.registerKind("TestMarker", "marker", [{ name: "name", type: "string", required: true, description: "file name" }]);
  for (const [i, p] of POLICIES.entries()) {
    await s.component(nameOf(i), "dev", "TestMarker", { name: nameOf(i) });
    await s.componentPolicy(nameOf(i), p);
  }
  await s.startRunner("matrix-a", 4);
  await s.startRunner("matrix-b", 4);
}, 240_000);

afterAll(async () => {
  await s?.close();
});

/** Drives one job to its end, approving each gate it meets, and checks each gate as it is met. */
async function drive(jobId: string, p: PolicyToggles, changing: "apply" | "destroy", marker: string, existsBefore: boolean) {
  const gates: string[] = [];
  for (;;) {
    const j: Job = await s.waitFor(jobId, (x) => x.status === "awaiting_approval" || x.status === "completed");
    if (j.status === "completed") return { job: j, gates };
    const step = j.steps.find((x) => x.step === changing)!;
    expect(step.status, "the changing step waits behind the gate").toBe("queued");
    expect(fs.existsSync(marker), "nothing changed before the approval").toBe(existsBefore);
    if (!j.startedAt) {
      gates.push("manual_start");
      await s.api.jobs.resume.mutate({ org: s.org.slug, jobId });
    } else {
      gates.push("pause_before_apply");
      const plan = await s.api.jobs.plan.query({ org: s.org.slug, id: jobId });
      // Without the checksum of the reviewed plan, nothing is approved.
      await expect(s.api.jobs.resume.mutate({ org: s.org.slug, jobId })).rejects.toThrow(/Nothing was approved: send the checksum of the plan you reviewed/);
      await s.api.jobs.resume.mutate({ org: s.org.slug, jobId, expectedChecksum: plan.checksum, message: `approved ${changing}` });
    }
    await s.waitFor(jobId, (x) => x.status !== "awaiting_approval");
  }
}

function expectGatesHeld(job: Job, p: PolicyToggles, changing: "apply" | "destroy", gates: string[]) {
  const want = [...(p.manualStart ? ["manual_start"] : []), ...(p.pauseBeforeApply ? ["pause_before_apply"] : [])];
  expect(gates).toEqual(want);
  expect(job.result).toBe("succeeded");
  const names = job.steps.map((x) => x.step);
  // A pause approves a plan: the preview is there whenever the gate is, even with preview_before_apply off.
  expect(names.includes("preview")).toBe(p.previewBeforeApply || p.pauseBeforeApply);
  expect(job.steps.find((x) => x.step === "refresh")!.result).toBe(p.skipRefresh ? "skipped" : "succeeded");
  const change = job.steps.find((x) => x.step === changing)!;
  expect(change.result).toBe("succeeded");
  expect(job.approvals).toHaveLength(want.length);
  if (p.pauseBeforeApply) {
    const preview = job.steps.find((x) => x.step === "preview")!;
    const planApproval = job.approvals.find((a) => a.planSha256)!;
    expect(planApproval.planSha256).toBe((preview.plan as { sha256: string }).sha256);
    expect(planApproval.message).toBe(`approved ${changing}`);
    expect(new Date(change.startedAt!).getTime()).toBeGreaterThanOrEqual(new Date(planApproval.createdAt).getTime());
  } else {
    expect(job.approvals.every((a) => a.planSha256 === null)).toBe(true);
  }
}

describe("every flow-control policy × update and destroy", () => {
  it(`never reaches an apply or destroy without the approval the policy asks for (${POLICIES.length} policies)`, async () => {
    await Promise.all(
      POLICIES.map(async (p, i) => {
        const name = nameOf(i);
        const marker = s.file("markers", `${name}.txt`);
        const tag = `${label(p)} update`;
        const update = await drive((await s.run(name, "update")).id, p, "apply", marker, false);
        expect(update.job.result, tag).toBe("succeeded");
        expectGatesHeld(update.job, p, "apply", update.gates);
        expect(fs.readFileSync(marker, "utf8"), tag).toBe(`made by ${name}`);

        const destroy = await drive((await s.run(name, "destroy")).id, p, "destroy", marker, true);
        expectGatesHeld(destroy.job, p, "destroy", destroy.gates);
        expect(fs.existsSync(marker), `${label(p)} destroy`).toBe(false);
      }),
    );
  });

  it("the REST API refuses to resume a paused job without the reviewed checksum, and the job stays paused", async () => {
    const i = POLICIES.findIndex((p) => p.pauseBeforeApply && !p.manualStart && !p.previewBeforeApply);
    const created = await s.run(nameOf(i), "update");
    const paused = await s.waitFor(created.id, (x) => x.status === "awaiting_approval");
    expect(paused.steps.map((x) => x.step)).toEqual(["init", "refresh", "preview", "apply"]);
    const token = await s.tokenFor("engineer");
    const res = await fetch(`${s.server.url}/api/v1/jobs/${created.id}/resume`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(412);
    expect((await res.json()).error.message).toContain("Nothing was approved: send the checksum of the plan you reviewed");
    expect((await s.api.jobs.get.query({ org: s.org.slug, id: created.id })).status).toBe("awaiting_approval");
    await s.api.jobs.cancel.mutate({ org: s.org.slug, jobId: created.id });
  });
});
