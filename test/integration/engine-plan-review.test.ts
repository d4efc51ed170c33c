// The plan review of an engine whose plan the console cannot read (OpenTofu's binary plan): the built console on a
// real Postgres and a real runner process, with a STAND-IN `tofu` on the runner's PATH — a shell script answering
// `version -json`, `init`, `plan -out=…` (a binary plan file), `show -json` (a plan document in the shape of
// OpenTofu's documented JSON plan, written by hand) and `apply`, because OpenTofu itself cannot be installed here.
// The reviewer must see what the plan changes, or be told the changes could not be listed — never "no changes".
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { plantonCli } from "../../cli/run-cli";
import { planReviewRenditionSchema } from "../../lib/runner-protocol";
import { startJobStack, type JobStack } from "./harness";

let stack: JobStack;
const configDir = fs.mkdtempSync(path.join(os.tmpdir(), "planton-cli-"));
let token = "";
const { planton } = plantonCli(() => ({ url: stack.server.url, token, configDir }));
const bin = fs.mkdtempSync(path.join(os.tmpdir(), "planton-standin-tofu-"));
/** While this file exists the stand-in's `show` fails, as a CLI that cannot read its plan would. */
const showFails = path.join(bin, "show-fails");

// Hand-written in the shape of `tofu show -json plan.tfplan`: before/after values are in it (one secret-looking), and
// must not reach the review.
const shown = {
  format_version: "1.2",
  resource_changes: [
    { address: "aws_s3_bucket.logs", mode: "managed", type: "aws_s3_bucket", name: "logs", change: { actions: ["create"], before: null, after: { bucket: "logs" } } },
    { address: "aws_iam_user.ci", mode: "managed", type: "aws_iam_user", name: "ci", change: { actions: ["update"], before: { tags: {} }, after: { tags: { password: "hunter2-in-plan" } } } },
    { address: "aws_instance.web", mode: "managed", type: "aws_instance", name: "web", change: { actions: ["delete", "create"], before: {}, after: {} } },
    { address: "aws_eip.old", mode: "managed", type: "aws_eip", name: "old", change: { actions: ["delete"], before: {}, after: null } },
    { address: "aws_vpc.main", mode: "managed", type: "aws_vpc", name: "main", change: { actions: ["no-op"], before: {}, after: {} } },
  ],
};

beforeAll(async () => {
  fs.writeFileSync(path.join(bin, "show.json"), JSON.stringify(shown));
  const script = [
    "#!/bin/sh",
    'case "$1" in',
    `  version) echo '{"terraform_version":"1.8.0"}';;`,
    `  plan) for a in "$@"; do case "$a" in -out=*) printf 'TFPLAN\\001\\002binary' > "\${a#-out=}";; esac; done`,
    `        echo '{"@level":"info","@message":"Plan: 1 to add, 2 to change, 2 to destroy.","type":"change_summary","changes":{"add":1,"change":2,"import":0,"remove":2,"operation":"plan"}}';;`,
    `  show) if [ -f "${showFails}" ]; then echo "Error: cannot read the plan" >&2; exit 1; fi; cat "${bin}/show.json";;`,
    `  output) echo '{}';;`,
    `  *) echo '{"@level":"info","@message":"ok","type":"log"}';;`,
    "esac",
    "",
  ].join("\n");
  fs.writeFileSync(path.join(bin, "tofu"), script, { mode: 0o755 });
  stack = await startJobStack({ runnerEnv: { PATH: `${bin}${path.delimiter}${process.env.PATH}` } });
  await stack.registerKind("TofuNetwork", "marker", [], "tofu");
  await stack.startRunner("runner-tofu", 1);
  token = await stack.tokenFor("engineer");
}, 240_000);
afterAll(async () => {
  await stack?.close();
  fs.rmSync(bin, { recursive: true, force: true });
  fs.rmSync(configDir, { recursive: true, force: true });
});

/** An update of a fresh component that pauses before its apply, once paused. */
async function pausedUpdate(name: string) {
  await stack.component(name, "dev", "TofuNetwork", {});
  await stack.componentPolicy(name, { pauseBeforeApply: true });
  const { id } = await stack.run(name, "update");
  const job = await stack.waitFor(id, (j) => j.status !== "queued" && j.status !== "running");
  expect(job.status, stack.runners.map((r) => r.log()).join("").slice(-2000)).toBe("awaiting_approval");
  return id;
}

describe("plan review of an OpenTofu plan (stand-in tofu)", () => {
  it("lists what the binary plan changes, from the runner's review rendition bound to the plan's checksum, with no values", async () => {
    const id = await pausedUpdate("tofu-listed");
    const review = await stack.rest.jobs.getPlan(id);
    expect(review.verification).toBe("verified");
    expect(review.changesListed).toBe(true);
    expect(review.counts.byAction).toEqual({ create: 1, update: 1, replace: 1, delete: 1 });
    expect(review.operations.map((o) => `${o.action} ${o.address}`)).toEqual(["create aws_s3_bucket.logs", "update aws_iam_user.ci", "replace aws_instance.web", "delete aws_eip.old"]);
    expect(review.deletesInsideReplacements).toEqual([{ address: "aws_instance.web", executes: true }]);
    expect(review.deleteOperationsComputed).toBe(true);
    expect(review.state.providerSchemaHash).toBeNull();
    expect(review.notes).toEqual([]);
    // The rendition is the plan's: its checksum, and nothing of the plan document's values.
    const renditions = (await stack.rest.jobs.listArtifacts(id)).filter((a) => a.kind === "plan_review");
    expect(renditions).toHaveLength(1);
    const text = new TextDecoder().decode(await stack.rest.jobs.getArtifact(id, renditions[0]!.id));
    expect(planReviewRenditionSchema.parse(JSON.parse(text))).toMatchObject({ plan_sha256: review.checksum, engine: "tofu", operation: "plan" });
    expect(text).not.toContain("hunter2-in-plan");
    const cli = await planton(["infra", "job", "plan", id]);
    expect(cli.stdout).toMatch(/Changes: {3}create 1, update 1, replace 1, delete 1/);
    expect(cli.stdout).toContain("aws_instance.web (replace)");
    // Approved with the reviewed checksum (the CLI fetches and shows the review first), the apply runs.
    const resumed = await planton(["infra", "job", "resume", id]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("Changes: 1 to create, 1 to update, 1 to replace, 1 to delete");
    expect((await stack.finished(id)).result).toBe("succeeded");
  });

  it("says the changes could not be listed — not that there are none — when the runner could not render the plan", async () => {
    fs.writeFileSync(showFails, "");
    try {
      const id = await pausedUpdate("tofu-unlisted");
      const review = await stack.rest.jobs.getPlan(id);
      expect(review).toMatchObject({ verification: "verified", changesListed: false, operations: [], deleteOperationsComputed: false, counts: { byAction: {} } });
      expect(review.notes).toEqual([expect.stringMatching(/^This plan's changes could not be listed: .*No counts below does not mean no changes/)]);
      expect((await stack.rest.jobs.listArtifacts(id)).filter((a) => a.kind === "plan_review")).toEqual([]);
      const cli = await planton(["infra", "job", "plan", id]);
      expect(cli.stdout).toContain("Changes:   not listed (see the note below)");
      expect(cli.stdout).toContain("Note:      This plan's changes could not be listed");
      expect(cli.stdout).toContain("Not listed: see the note above.");
      expect(cli.stdout).not.toMatch(/Changes: +none|No changes/);
      // The preview's log says why.
      const lines = (await stack.events(id)).map((e) => String((e.payload as { line?: string }).line ?? ""));
      expect(lines.some((l) => l.startsWith("tofu show -json could not read the plan (exit code 1)"))).toBe(true);
    } finally {
      fs.rmSync(showFails, { force: true });
    }
  });
});
