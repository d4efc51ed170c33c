// The real `planton` binary (node bin/planton.mjs) against the built console on a real Postgres,
// with a runner started by `planton runner start` running the builtin engine on real files.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import { flowControlPolicies, stateBackends } from "../db/schema";
import { newId } from "../lib/ids";
import { createPlantonClient, PlantonApiError, type PlantonClient, type InfraJob } from "../lib/client";
import { readEventStream } from "../lib/client/sse";
import { sealChain } from "../server/services/audit/archive";
import { reconfigure } from "../test/components";
import { environmentByName } from "../server/services/organizations/lookup";
import { ensureHostedRunner } from "../server/services/runners/register-runner";
import { createApiToken } from "../server/services/settings/api-tokens";
import type { ConsoleServer } from "../test/console-server";
import type { TestDatabase } from "../test/database";
import type { TestOrg } from "../test/fixtures";
import type { TestGates } from "../test/gates";
import { startJobStack, type JobStack } from "../test/integration/harness";
import { plantonCli } from "./run-cli";

let stack: JobStack;
let t: TestDatabase;
let org: TestOrg;
let server: ConsoleServer;
let api: PlantonClient;
let token: string;
let infraRoot: string;
let configDir: string;
let runner: ChildProcess;
let runnerLog = "";
let gates: TestGates;
let ids: Record<string, string>;

const { spawnPlanton, planton } = plantonCli(() => ({ url: server.url, token, configDir }));

const waitJob = (id: string, done: (j: InfraJob) => boolean) =>
  vi.waitFor(
    async () => {
      const j = await api.jobs.get(id);
      if (!done(j)) throw new Error(`job ${id} is ${j.status}/${j.result}, still waiting\nrunner:\n${runnerLog.slice(-3000)}`);
      return j;
    },
    { timeout: 90_000, interval: 150 },
  );
const finished = (id: string) => waitJob(id, (j) => j.status === "completed");
const jobIdIn = (text: string) => text.match(/job_[0-9A-Za-z]+/)![0];

beforeAll(async () => {
  stack = await startJobStack();
  ({ t, org, server, gates, infraRoot, ids } = stack);
  configDir = path.join(infraRoot, "config");
  const prod = await environmentByName(t.db, org.orgId, "prod");
  await t.db.insert(flowControlPolicies).values({ id: newId("flowControlPolicy"), selector: "environment", orgId: org.orgId, selectorId: prod.id, pauseBeforeApply: true });
  await stack.registerKind("TestImport", "importable");
  await stack.registerKind("TestSlow", "slow", [{ name: "name", type: "string", required: true, description: "folder" }]);
  const mk = stack.component;
  await mk("site", "dev", "StaticSite", { site_name: "site" });
  await mk("shop", "prod", "StaticSite", { site_name: "shop" });
  await mk("slow", "dev", "TestSlow", { name: "one" });
  await mk("adopt", "dev", "TestImport", {});
  await mk("creds", "staging", "DatabaseCredentials", { database_name: "orders" });
  // An OpenTofu module where no runner of the route has tofu (the runners report their engines): preflight refuses it.
  await stack.registerKind("TestTofu", "importable", [], "tofu");
  await mk("tofu-thing", "dev", "TestTofu", {});
  await mk("idle", "dev", "StaticSite", { site_name: "idle" });
  await mk("mover", "dev", "StaticSite", { site_name: "mover" });
  const protectFields = [
    { name: "pages", type: "number", default: 2, description: "how many pages" },
    { name: "home", type: "string", default: "index", description: "the home page's name" },
    { name: "motto", type: "string", default: "first", description: "the motto" },
  ];
  await stack.registerKind("TestProtect", "protectable", protectFields);
  await mk("guarded", "dev", "TestProtect", {});

  token = (await createApiToken(t.db, org.actor("engineer"), { name: "cli-tests" })).token;
  api = createPlantonClient({ url: server.url, token });
  // The runner for every job here is `planton runner start`.
  const { token: runnerToken } = await ensureHostedRunner(t.db, "cli-runner", 2);
  const r = spawnPlanton(["runner", "start", "--token", runnerToken, "--url", server.url, "--capacity", "2", "--work-dir", path.join(infraRoot, "work"), "--name", "cli-runner"], {
    PLANTON_RUNNER_HEARTBEAT_MS: "1000",
    ...gates.env,
  });
  runner = r.child;
  r.child.stdout!.on("data", (d) => (runnerLog += d));
  r.child.stderr!.on("data", (d) => (runnerLog += d));
  await r.said("started against");
}, 240_000);

afterAll(async () => {
  if (runner && runner.exitCode === null && runner.signalCode === null) {
    const closed = new Promise((r) => runner.once("close", r));
    runner.kill("SIGTERM");
    // A runner that does not stop within its grace period is killed rather than left behind.
    const stuck = setTimeout(() => runner.kill("SIGKILL"), 10_000);
    await closed;
    clearTimeout(stuck);
  }
  await stack?.close();
});

const SUBCOMMANDS: [string, string][] = [
  ["create", "<infra-component-id>"],
  ["list", "<infra-component-id>"],
  ["stream-progress-events", "<infra-job-id>"],
  ["logs", "<infra-job-id>"],
  ["cancel", "<infra-job-id>"],
  ["resume", "<infra-job-id>"],
  ["rerun", "<infra-job-id>"],
  ["iac-input", "<infra-job-id>"],
  ["plan", "<infra-job-id>"],
  ["preflight-checks", "--catalog-kind <kind>"],
];

describe("planton CLI", () => {
  it("every infra job subcommand's --help names its argument on the usage line and shows an example, in both forms", async () => {
    // Each --help is a process start and nothing else: they are asked all at once.
    // The short form is commander's alias of the group: one subcommand shows it answers like the long one.
    const forms = (sub: string) => (sub === SUBCOMMANDS[0][0] ? ["job", "ij"] : ["job"]);
    const helps = await Promise.all(SUBCOMMANDS.flatMap(([sub, arg]) => forms(sub).map(async (form) => ({ sub, arg, form, r: await planton(["infra", form, sub, "--help"]) }))));
    for (const { sub, arg, form, r } of helps) {
      expect(r.code, `${form} ${sub}`).toBe(0);
      const usage = r.stdout.split("\n").find((l) => l.startsWith("Usage:"))!;
      if (arg.startsWith("<")) expect(usage, `${form} ${sub}`).toMatch(new RegExp(`^Usage: planton infra job (stream-progress-events\\|logs|${sub}) \\[options\\] ${arg}$`));
      else expect(usage).toBe(`Usage: planton infra job ${sub} ${arg} [--env <environment>] [options]`);
      expect(r.stdout, `${form} ${sub}`).toMatch(/\nExamples?:\n {2}\$ planton infra job /);
    }
    const create = await planton(["infra", "job", "create", "--help"]);
    for (const flag of ["-t, --tail", "--show-stack-summary", "--no-show-stack-summary", "--show-stack-diff", "--show-outputs", "-m, --version-message"]) expect(create.stdout).toContain(flag);
  });

  it("auth login verifies the token and stores it with mode 0600; auth status reads it; logout forgets it", async () => {
    const dir = path.join(infraRoot, "login-config");
    const noEnv = { PLANTON_URL: undefined, PLANTON_TOKEN: undefined, PLANTON_CONFIG_DIR: dir };
    const before = await planton(["auth", "status"], noEnv);
    expect(before.code).not.toBe(0);
    expect(before.stderr).toContain("Not logged in");

    const login = await planton(["auth", "login", "--url", server.url, "--token", token], noEnv);
    expect(login.stderr).toBe("");
    expect(login.code).toBe(0);
    expect(login.stdout).toContain(`Logged in to ${server.url} as ${org.users.engineer.email} (token cli-tests), engineer in ${org.slug}`);
    const file = path.join(dir, "config.json");
    expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual({ url: server.url, token });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);

    const status = await planton(["auth", "status"], noEnv);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`Server:       ${server.url}`);
    expect(status.stdout).toContain(`Organization: ${org.slug}`);
    expect(status.stdout).not.toContain(token);

    // A stored login is enough for the job commands.
    const list = await planton(["infra", "job", "list", ids.site], noEnv);
    expect(list.code).toBe(0);

    const logout = await planton(["auth", "logout"], noEnv);
    expect(logout.code).toBe(0);
    expect(fs.existsSync(file)).toBe(false);
  });

  it("a bad token is refused with a clear message on stderr and a non-zero exit, and nothing is stored", async () => {
    const dir = path.join(infraRoot, "bad-config");
    const login = await planton(["auth", "login", "--url", server.url, "--token", "plt_not-a-real-token"], { PLANTON_URL: undefined, PLANTON_TOKEN: undefined, PLANTON_CONFIG_DIR: dir });
    expect(login.code).toBe(1);
    expect(login.stderr.trim()).toBe(
      "The API token was refused: it is unknown, revoked or expired. Nothing was done. Create a new one in Settings → API Tokens, then run planton auth login --token <token>.",
    );
    expect(fs.existsSync(path.join(dir, "config.json"))).toBe(false);
    const list = await planton(["infra", "job", "list", ids.site], { PLANTON_TOKEN: "plt_wrong" });
    expect(list.code).toBe(1);
    expect(list.stderr).toContain("The API token was refused");
    expect(list.stdout).toBe("");
  });

  it("an unknown operation is refused as Unknown Operation naming the valid ones, exits 1, and creates no job", async () => {
    const before = (await api.jobs.list(ids.site)).jobs.length;
    const r = await planton(["infra", "job", "create", ids.site, "--operation", "deploy"]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe('Unknown Operation "deploy": use one of refresh, preview, update, destroy, destroy_preview, import. No job was created.');
    expect(r.stdout).toBe("");
    expect((await api.jobs.list(ids.site)).jobs.length).toBe(before);
    // The same words without reaching a server: the CLI knows the operations the server does.
    const offline = await planton(["infra", "job", "create", ids.site, "--operation", "deploy"], { PLANTON_URL: "http://127.0.0.1:9" });
    expect(offline.code).toBe(1);
    expect(offline.stderr.trim()).toBe(r.stderr.trim());
  });

  it("create --operation update --tail follows the job through to a summary naming builtin apply, and exits 0", async () => {
    const r = await planton(["infra", "job", "create", ids.site, "--operation", "update", "--tail", "-m", "first release"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout.split("\n");
    const at = (re: RegExp) => lines.findIndex((l) => re.test(l));
    expect(at(/^Created Infra Job job_\S+ \(update\)/)).toBe(0);
    // Transitions in order, resource changes as they happen, then the summary.
    const order = [/^▸ init running/, /^✓ init succeeded/, /^▸ refresh running/, /^▸ preview running/, /^✓ preview succeeded/, /^▸ apply running/, /^ {2}\+ local_file\.\S+ created/, /^✓ apply succeeded/, /^Job job_\S+ completed: succeeded/];
    const positions = order.map(at);
    expect(positions.every((p) => p >= 0), r.stdout).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(r.stdout).toMatch(/\n {2}apply\s+succeeded\s+builtin apply\s+\d+ added, 0 changed, 0 destroyed\n/);
    expect(r.stdout).toMatch(/\n {2}preview\s+succeeded\s+builtin plan\s+\d+ to add/);
    expect(r.stdout).toContain("Resources changed:");
    expect(r.stdout).not.toMatch(/\x1b\[/);
    const job = await api.jobs.get(jobIdIn(r.stdout));
    expect(job).toMatchObject({ status: "completed", result: "succeeded", versionMessage: "first release" });
  });

  it("list shows a component's jobs, newest first", async () => {
    const r = await planton(["infra", "ij", "list", ids.site]);
    expect(r.code).toBe(0);
    const [header, first] = r.stdout.split("\n");
    expect(header).toMatch(/^ID\s+OPERATION\s+STATUS\s+RESULT\s+CREATED \(UTC\)/);
    expect(first).toMatch(/^job_\S+\s+update\s+completed\s+succeeded\s.*first release$/);
    const json = JSON.parse((await planton(["infra", "job", "list", ids.site, "--json"])).stdout);
    expect(json[0]).toMatchObject({ componentId: ids.site, operation: "update" });
  });

  it("logs on a finished job prints its whole log at once and the summary", async () => {
    const [last] = (await api.jobs.list(ids.site)).jobs;
    const { events } = await api.jobs.events(last.id, 0, 5000);
    const logLines = events.filter((e) => e.type === "log").flatMap((e) => String(e.payload.line).replace(/\x1b\[[0-9;]*m/g, "").split("\n"));
    expect(logLines.length).toBeGreaterThan(3);
    const r = await planton(["infra", "job", "logs", last.id]);
    expect(r.code).toBe(0);
    const printed = r.stdout.split("\n").filter((l) => l.startsWith("  │ ")).map((l) => l.slice(4));
    expect(printed).toEqual(logLines);
    expect(r.stdout).toContain("builtin apply");
    const long = await planton(["infra", "job", "stream-progress-events", last.id]);
    expect(long.stdout).toBe(r.stdout);
  });

  it("plan prints the review document: checksum and verdict, state identity, counts, deletes computed, ordered operations", async () => {
    const r0 = await planton(["infra", "job", "create", ids.site, "--operation", "preview"]);
    expect(r0.code).toBe(0);
    expect(r0.stdout).toContain("Follow it: planton infra job stream-progress-events");
    const job = await finished(jobIdIn(r0.stdout));
    const review = await api.jobs.getPlan(job.id);
    const r = await planton(["infra", "job", "plan", job.id]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Checksum:  sha256 ${review.checksum} — verified`);
    expect(r.stdout).toMatch(/State: {5}lineage \S+, serial \d+/);
    expect(r.stdout).toContain("Deletes:   computed");
    expect(r.stdout).toContain("Operations, in order:");
    const json = JSON.parse((await planton(["infra", "job", "plan", job.id, "--json"])).stdout);
    expect(json).toEqual(review);

    // A destroy preview plans deletes; they are listed in order.
    const d = await planton(["infra", "job", "create", ids.site, "--operation", "destroy_preview", "--tail"]);
    expect(d.code).toBe(0);
    const destroyPlan = await planton(["infra", "job", "plan", jobIdIn(d.stdout), "--show-stack-diff"]);
    expect(destroyPlan.stdout).toMatch(/Changes: {3}delete \d+/);
    expect(destroyPlan.stdout).toMatch(/\n {2}- local_file\.\S+ \(delete\)\n/);
    expect(destroyPlan.stdout).toContain("Stack diff (plan sha256");
  });

  it("iac-input prints the input the job ran with as JSON", async () => {
    const [last] = (await api.jobs.list(ids.site)).jobs;
    const r = await planton(["infra", "job", "iac-input", last.id]);
    expect(r.code).toBe(0);
    const input = JSON.parse(r.stdout);
    expect(input).toMatchObject({ jobId: last.id, component: { id: ids.site, name: "site", kind: "StaticSite", environment: "dev" }, backend: expect.any(Object) });
    expect(input.module.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it("preflight-checks reports the four essentials for a kind per environment, and refuses an unknown kind", async () => {
    const r = await planton(["infra", "job", "preflight-checks", "--catalog-kind", "StaticSite", "--env", "dev"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Preflight of StaticSite in dev: passed");
    for (const e of ["module", "credentials", "backend", "flow_control"]) expect(r.stdout).toMatch(new RegExp(`✓ ${e}\\s+\\S`));
    const all = await planton(["infra", "job", "preflight-checks", "--catalog-kind", "StaticSite"]);
    expect(all.stdout.match(/^Preflight of StaticSite in /gm)).toHaveLength(3);
    const bad = await planton(["infra", "job", "preflight-checks", "--catalog-kind", "NoSuchKind", "--env", "dev"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("NoSuchKind");
    const missing = await planton(["infra", "job", "preflight-checks"]);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("--catalog-kind");
  });

  it("a job paused for approval: the follower says how to resume and keeps following; resume shows counts and checksum, approves that plan, and the apply streams to the end", async () => {
    const create = await planton(["infra", "job", "create", ids.shop, "--operation", "update"]);
    expect(create.code).toBe(0);
    const id = jobIdIn(create.stdout);
    const follower = spawnPlanton(["infra", "job", "logs", id]);
    await follower.said("awaiting approval");
    expect(follower.run.stdout).toContain(`resume it (planton infra job resume ${id})`);
    const review = await api.jobs.getPlan(id);

    const r = await planton(["infra", "job", "resume", id, "--tail", "-m", "reviewed with the DBA"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Plan of job ${id}: sha256 ${review.checksum} (verified)`);
    expect(r.stdout).toMatch(/Changes: \d+ to create/);
    expect(r.stdout).toContain(`Resumed Infra Job ${id} with plan sha256 ${review.checksum}`);
    // It follows from the approval on: the preview is not replayed, but the summary names every step's engine.
    const afterResume = r.stdout.slice(r.stdout.indexOf("Resumed Infra Job"));
    expect(afterResume).not.toContain("▸ preview running");
    expect(afterResume).toContain("▸ apply running");
    expect(r.stdout).toMatch(/\n {2}preview\s+succeeded\s+builtin plan/);
    expect(r.stdout).toMatch(/\n {2}apply\s+succeeded\s+builtin apply/);
    const job = await api.jobs.get(id);
    expect(job.approvals[0]).toMatchObject({ planSha256: review.checksum, message: "reviewed with the DBA" });

    const followed = await follower.done;
    expect(followed.code).toBe(0);
    expect(followed.stdout).toContain(`Job ${id} completed: succeeded`);
    expect(followed.stdout).toContain("builtin apply");

    const again = await planton(["infra", "job", "resume", id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("Nothing was approved");
  });

  it("cancel of a running job during its last operation: the operation finishes, the job succeeds saying the cancel came too late", async () => {
    gates.hold("one");
    const create = await planton(["infra", "job", "create", ids.slow, "--operation", "update"]);
    const id = jobIdIn(create.stdout);
    await gates.held("one");
    const r = await planton(["infra", "job", "cancel", id]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Asked Infra Job ${id} to cancel: its in-flight operation finishes first`);
    gates.release("one");
    const logs = await planton(["infra", "job", "logs", id]);
    expect(logs.code).toBe(0);
    expect(logs.stdout).toContain(`Job ${id} completed: succeeded`);
    expect(logs.stdout).toContain("came too late");
    const again = await planton(["infra", "job", "cancel", id]);
    expect(again.code).toBe(1);
    expect(again.stderr.trim()).toBe(`Nothing was cancelled: job ${id} already completed (succeeded). To undo its changes, run a new job.`);
  });

  it("an engine no runner of the route has is refused at preflight, naming it, and no message ends in a double period", async () => {
    const r = await planton(["infra", "job", "create", ids["tofu-thing"], "--operation", "update", "--tail"]);
    expect(r.code).toBe(1);
    const why = "The module needs OpenTofu, and no Planton-hosted runner has it. Run the job on a runner of your own that has OpenTofu (name it on the connection, or planton runner set-default <runner>), then run the job again.";
    expect(r.stdout).toContain(`${why}\n`);
    expect(r.stdout).toContain("✗ runner: a Planton-hosted runner: neither the connection nor the organization names a runner\n");
    // Said once: the reason line, not again under the check it came from.
    expect(r.stdout.split(why).length - 1).toBe(1);
    expect(r.stdout).not.toMatch(/✗ init failed/);
    expect(r.stdout).not.toMatch(/\.\.(\s|$)/m);
  });

  it("resume of a job that is not paused refuses before showing any plan", async () => {
    const done = await finished(jobIdIn((await planton(["infra", "job", "create", ids.idle, "--operation", "preview"])).stdout));
    const r = await planton(["infra", "job", "resume", done.id, "-m", "looks fine"]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(`Nothing was approved: job ${done.id} is completed (succeeded), not waiting for approval.`);
    expect(r.stdout).not.toContain("sha256");
  });

  it("rerun creates a new job from a completed one and follows it", async () => {
    const [previous] = (await api.jobs.list(ids.site)).jobs;
    const r = await planton(["infra", "job", "rerun", previous.id, "--tail", "--no-show-stack-summary", "--show-stack-diff"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^Re-ran ${previous.id} as Infra Job job_\\S+ \\(${previous.operation}\\)`));
    expect(r.stdout).not.toContain("Resources changed:");
    expect(previous.operation).toBe("destroy_preview");
    expect(r.stdout).toMatch(/Stack diff \(plan sha256 [0-9a-f]{64}\):\n {2}- \S+ \(delete\)\n {6}- \w+ = /);
    const rerunId = r.stdout.match(/as Infra Job (job_\S+)/)![1];
    expect(await api.jobs.get(rerunId)).toMatchObject({ rerunOf: previous.id, result: "succeeded" });
  });

  it("import: --address and --id adopt an existing object; without them the server's refusal is printed and nothing is created", async () => {
    const refused = await planton(["infra", "job", "create", ids.adopt, "--operation", "import"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe("An import job needs the resource's address in the module and its provider id (--address, --id). No job was created.");
    fs.mkdirSync(path.join(infraRoot, "imported"), { recursive: true });
    fs.writeFileSync(path.join(infraRoot, "imported", "readme.txt"), "made by hand\n");
    const r = await planton(["infra", "job", "create", ids.adopt, "--operation", "import", "--address", "local_file.existing", "--id", "imported/readme.txt", "--tail"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\n {2}import\s+succeeded/);
    expect(fs.readFileSync(path.join(infraRoot, "imported", "readme.txt"), "utf8")).toBe("made by hand\n");
  });

  it("outputs at completion show a generated secret only as its $secret/ reference; --no-show-outputs leaves them out", async () => {
    const r = await planton(["infra", "job", "create", ids.creds, "--operation", "update", "--tail"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\nOutputs:\n(.*\n)*? {2}password = \$secret\/\S+/);
    const quiet = await planton(["infra", "job", "logs", jobIdIn(r.stdout), "--no-show-outputs"]);
    expect(quiet.stdout).not.toContain("Outputs:\n  password");
  });

  it("plan says so explicitly when deletes were not computed, and a destroy preview under delete protection deletes everything, nothing held back", async () => {
    // The creds component has state (the test above); refresh skipped and delete protection on.
    await t.db.insert(flowControlPolicies).values({ id: newId("flowControlPolicy"), selector: "component", orgId: org.orgId, selectorId: ids.creds, skipRefresh: true, protectDeletes: true });
    const d = await planton(["infra", "job", "create", ids.creds, "--operation", "destroy_preview", "--tail"]);
    expect(d.code).toBe(0);
    const id = jobIdIn(d.stdout);
    const review = await api.jobs.getPlan(id);
    expect(review.deleteOperationsComputed).toBe(false);
    expect(review).toMatchObject({ destroy: true, deletesNotExecuted: 0 });
    const r = await planton(["infra", "job", "plan", id]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Deletes:   NOT computed — the plan could not enumerate what exists");
    expect(r.stdout).toContain("Destroy:   this plan deletes everything; delete protection never holds a destroy back");
    expect(r.stdout).not.toContain("(not executed)");
    expect(r.stdout.split("\n").filter((l) => l.endsWith("(delete)"))).toHaveLength(review.counts.byAction.delete!);
  });

  it("the completion summary names the deletion inside a replacement; under delete protection deletes and replaces show as (not executed) in the summary and in plan", async () => {
    expect((await planton(["infra", "job", "create", ids.guarded, "--operation", "update", "--tail"])).code).toBe(0);
    await reconfigure(t.db, org.actor("engineer"), { id: ids.guarded, spec: { home: "start" } });
    const replaced = await planton(["infra", "job", "create", ids.guarded, "--operation", "update", "--tail"]);
    expect(replaced.code).toBe(0);
    expect(replaced.stdout).toMatch(/\n {2}preview\s+succeeded\s+builtin plan\s+1 to add, 0 to change, 1 to destroy \(1 inside a replacement: local_file\.home\)\n/);
    expect(replaced.stdout).toMatch(/\n {2}apply\s+succeeded\s+builtin apply\s+1 added, 0 changed, 1 destroyed \(1 inside a replacement: local_file\.home\)\n/);
    expect(fs.existsSync(path.join(infraRoot, "protected", "start.html"))).toBe(true);

    await t.db.insert(flowControlPolicies).values({ id: newId("flowControlPolicy"), selector: "component", orgId: org.orgId, selectorId: ids.guarded, protectDeletes: true });
    await reconfigure(t.db, org.actor("engineer"), { id: ids.guarded, spec: { pages: 1, home: "index", motto: "second" } });
    const held = await planton(["infra", "job", "create", ids.guarded, "--operation", "update", "--tail"]);
    expect(held.code).toBe(0);
    expect(held.stdout).toContain("local_file.page[1]: Plan to delete (not executed)");
    expect(held.stdout).toContain("local_file.home: Plan to replace (not executed)");
    expect(held.stdout).toMatch(/\n {2}preview\s+succeeded\s+builtin plan\s+0 to add, 1 to change, 0 to destroy, 2 protected \(not executed\)\n/);
    expect(held.stdout).toMatch(/\n {2}apply\s+succeeded\s+builtin apply\s+0 added, 1 changed, 0 destroyed, 2 protected \(not executed\)\n/);
    expect(held.stdout).toMatch(/\nNot executed \(delete protection is on; a destroy job is the way to delete\):\n {2}± local_file\.home\s+replace \(not executed\)\n {2}- local_file\.page\[1\]\s+delete \(not executed\)\n/);
    for (const f of ["page-1.txt", "start.html"]) expect(fs.existsSync(path.join(infraRoot, "protected", f))).toBe(true);
    expect(fs.existsSync(path.join(infraRoot, "protected", "index.html"))).toBe(false);

    const id = jobIdIn(held.stdout);
    const review = await api.jobs.getPlan(id);
    expect(review.deletesNotExecuted).toBe(2);
    const r = await planton(["infra", "job", "plan", id]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Skipped:   2 will not be executed (delete protection is on): 1 replace, 1 delete (local_file.home, local_file.page[1]); a destroy job is the way to delete");
    expect(r.stdout).toContain("Replace:   local_file.home would be deleted, then created again (not executed)");
    const marked = r.stdout.split("\n").filter((l) => l.endsWith("(not executed)") && l.startsWith("  ") && /\((delete|replace)\) \(not executed\)$/.test(l));
    expect(marked.map((l) => l.trim())).toEqual(["± local_file.home (replace) (not executed)", "- local_file.page[1] (delete) (not executed)"]);
    expect(r.stdout).toContain("local_file.home is not replaced: delete protection is on for this component");
    expect(r.stdout).toMatch(/\n {2}~ local_file\.motto \(update\)\n/);
  });

  it("colour only when asked for (FORCE_COLOR) and never with NO_COLOR", async () => {
    const [last] = (await api.jobs.list(ids.site)).jobs;
    const coloured = await planton(["infra", "job", "logs", last.id], { NO_COLOR: undefined, FORCE_COLOR: "1" });
    expect(coloured.stdout).toMatch(/\x1b\[3\dm/);
    const plainRun = await planton(["infra", "job", "logs", last.id], { NO_COLOR: "1", FORCE_COLOR: "1" });
    expect(plainRun.stdout).not.toMatch(/\x1b\[/);
  });

  it("runner start with a token the server refuses, or a server it cannot reach, exits non-zero with the reason and never says it started", async () => {
    const work = path.join(infraRoot, "work-refused");
    const refused = await planton(["runner", "start", "--token", "rnr_not-a-token-of-this-console", "--url", server.url, "--work-dir", work]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `No runner was started: the server at ${server.url} refused the runner token (401): this runner token is not known (it may have been rotated, or the runner removed). Start the runner with its current token, or register it again in Settings → Runners.`,
    );
    const nowhere = "http://127.0.0.1:9";
    const unreachable = await planton(["runner", "start", "--token", "rnr_anything", "--url", nowhere, "--work-dir", work]);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain(`No runner was started: the server at ${nowhere} could not be reached (`);
    for (const r of [refused, unreachable]) expect(r.stdout + r.stderr).not.toMatch(/started against|"runner started"/);
  });

  it("runner start without a token is refused and starts nothing", async () => {
    const r = await planton(["runner", "start", "--url", server.url], { PLANTON_RUNNER_TOKEN: undefined });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("No runner was started: no runner token");
  });
  it("state moves: move-off-planton --dry-run prints the table and changes nothing, an unknown backend is refused, tofu state migrate-backend follows one component's move to its end", async () => {
    const created = await planton(["infra", "job", "create", ids.mover, "--operation", "update", "--tail"]);
    expect(created.code, created.stdout + created.stderr).toBe(0);
    await t.db.insert(stateBackends).values({ id: newId("stateBackend"), orgId: org.orgId, name: "cli-local", kind: "local", config: { path: path.join(infraRoot, "cli-states") } });
    const admin = { PLANTON_TOKEN: (await createApiToken(t.db, org.actor("admin"), { name: "cli-move" })).token };
    const dry = await planton(["infra", "state-backend", "move-off-planton", "--to", "builtin=cli-local", "--dry-run"], admin);
    expect([dry.code, dry.stderr]).toEqual([0, ""]);
    expect(dry.stdout).toMatch(/^COMPONENT\s+ENVIRONMENT\s+PROVISIONER\s+FROM\s+TO\s+FROM KEY\s+TO KEY\s+SIZE\s+SERIAL\n/);
    expect(dry.stdout).toMatch(/\nmover\s+dev\s+builtin\s+planton-managed\s+cli-local\s+planton-managed\/\S+\s+dev\/mover\/terraform\.tfstate\s/);
    expect(dry.stdout).toMatch(/\nDry run: \d+ states \(.+\) would move; nothing was changed\.\n$/);
    expect(fs.existsSync(path.join(infraRoot, "cli-states", "dev"))).toBe(false);
    const unknown = await planton(["infra", "state-backend", "move-off-planton", "--to", "nowhere"], admin);
    expect([unknown.code, unknown.stdout]).toEqual([1, ""]);
    expect(unknown.stderr).toMatch(/^Nothing was moved: the state backend nowhere was not found\. Create it first/);
    const wrongTool = await planton(["pulumi", "state", "migrate-backend", ids.mover, "--to", "cli-local"], admin);
    expect([wrongTool.code, wrongTool.stderr.trim()]).toEqual([1, `Nothing was moved: component mover is a builtin component. Use planton tofu state migrate-backend ${ids.mover} --to cli-local.`]);
    const moved = await planton(["tofu", "state", "migrate-backend", ids.mover, "--to", "cli-local"], admin);
    expect([moved.code, moved.stderr]).toEqual([0, ""]);
    expect(moved.stdout).toMatch(/^Started state move smv_\S+: mover's state to cli-local\.\n/);
    expect(moved.stdout).toMatch(/State move smv_\S+: 1\/1 moved \(succeeded\)\nMoved 1 state; the old copies are kept for rollback\.\n$/);
    expect(JSON.parse(fs.readFileSync(path.join(infraRoot, "cli-states", "dev", "mover", "terraform.tfstate"), "utf8")).serial).toBeGreaterThan(0);
  });
});

describe("planton audit", () => {
  it("list takes the Audit page's filters as flags and pages with --all; verify exits 1 naming a tampered event and 0 once restored; export streams to a 0600 file; --archive checks a sealed archive", async () => {
    for (let i = 0; i < 3; i++) await api.jobs.create(ids.mover, { operation: "preview", versionMessage: `audit ${i}` });
    const pagedJson = await planton(["audit", "list", "--action", "job", "--limit", "2", "--all", "--output", "json"]);
    expect([pagedJson.code, pagedJson.stderr]).toEqual([0, ""]);
    const jobEvents = JSON.parse(pagedJson.stdout) as { seq: number; action: string }[];
    expect(jobEvents.length).toBeGreaterThanOrEqual(3);
    expect(jobEvents.every((e) => e.action.startsWith("job."))).toBe(true);
    expect(jobEvents.map((e) => e.seq)).toEqual([...jobEvents.map((e) => e.seq)].sort((a, b) => b - a));
    const firstPage = JSON.parse((await planton(["audit", "list", "--action", "job", "--limit", "2", "--output", "json"])).stdout);
    expect(firstPage).toEqual(jobEvents.slice(0, 2));
    const listed = await planton(["audit", "list", "--action", "job.create", "--since", "1d", "--limit", "1"]);
    expect(listed.stdout).toMatch(/^SEQ\s+TIME\s+ACTOR\s+ACTION\s+TARGET\s+ENV\s+RESULT\s+SUMMARY\n\d+\s+\S+ \S+Z\s+engineer-\S+ \(token cli-tests\)\s+job\.create\s/);
    expect(listed.stdout.trim().split("\n").length).toBe(2);
    const none = await planton(["audit", "list", "--until", "2000-01-01T00:00:00Z"]);
    expect(none.stdout).toBe("No audit events match.\n");
    const csv = await planton(["audit", "list", "--action", "job.create", "--all", "--output", "csv"]);
    expect(csv.stdout.split("\r\n")[0]).toBe("seq,at,actorLabel,action,targetKind,targetName,targetId,environment,result,summary,clientAddress,changes,hash");
    const badTime = await planton(["audit", "list", "--since", "last tuesday"]);
    expect([badTime.code, badTime.stderr.trim()]).toEqual([1, "Nothing was done: from: Give a time as ISO 8601, for example 2026-11-24T00:00:00Z"]);

    const clean = await planton(["audit", "verify"]);
    expect([clean.code, clean.stderr]).toEqual([0, ""]);
    expect(clean.stdout).toMatch(/^The audit record verifies: \d+ events checked from the first event, each matching its hash and linked to the one before\.\nHead: #\d+ [0-9a-f]{64}\n/);
    const { events: [created] } = await api.audit.list({ action: "job.create", limit: 1 });
    const tamper = (summary: string) =>
      t.db.transaction(async (tx) => {
        await tx.execute(sql`set local session_replication_role = replica`);
        await tx.execute(sql`update audit_events set summary = ${summary} where id = ${created.id}`);
      });
    await tamper("nothing ran");
    const broken = await planton(["audit", "verify"]);
    expect(broken.code).toBe(1);
    expect(broken.stderr.trim()).toMatch(new RegExp(`^Event #${created.seq} \\(job\\.create by ${org.users.engineer.email.replaceAll(".", "\\.")} \\(token cli-tests\\), \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC\\) was changed after it was recorded: its content no longer matches its hash\\.$`));
    expect(broken.stdout).toMatch(/^Head: #\d+ [0-9a-f]{64}\n/);
    await tamper(created.summary);
    expect((await planton(["audit", "verify"])).code).toBe(0);

    const file = path.join(infraRoot, "audit-export.json");
    const exported = await planton(["audit", "export", "--format", "json", "--action", "job.create", "-o", file]);
    expect([exported.code, exported.stderr]).toEqual([0, `Exported to ${file}.\n`]);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const rows = JSON.parse(fs.readFileSync(file, "utf8")) as { seq: number }[];
    expect(rows.map((r) => r.seq)).toEqual(jobEvents.filter((e) => e.action === "job.create").map((e) => e.seq).reverse());
    const toStdout = await planton(["audit", "export", "--action", "job.create"]);
    // The list is newest first, the export oldest first: the same lines, reversed.
    const csvLines = (text: string) => text.split("\r\n").filter(Boolean);
    expect(csvLines(toStdout.stdout)).toEqual([csvLines(csv.stdout)[0], ...csvLines(csv.stdout).slice(1).reverse()]);

    const dir = path.join(infraRoot, "audit-archive");
    const sealed = await sealChain(t.db, org.orgId, { retentionDays: 1, dir }, new Date(Date.now() + 2 * 86_400_000));
    const checked = await planton(["audit", "verify", "--archive", path.join(dir, sealed!.archiveName)]);
    expect([checked.code, checked.stderr]).toEqual([0, ""]);
    expect(checked.stdout).toMatch(new RegExp(`verifies: its SHA-256 is the one checkpoint ${sealed!.checkpointId} sealed, and its ${sealed!.eventCount} events \\(#1–#${sealed!.throughSeq}\\) link up to the checkpoint's hash\\.\\n$`));
    const fromCheckpoint = await planton(["audit", "verify"]);
    expect(fromCheckpoint.stdout).toMatch(new RegExp(`^The audit record verifies: \\d+ events? checked from archive checkpoint ${sealed!.checkpointId} \\(#${sealed!.throughSeq}\\)`));
    fs.appendFileSync(path.join(dir, sealed!.archiveName), "x");
    const forged = await planton(["audit", "verify", "--archive", path.join(dir, sealed!.archiveName)]);
    expect([forged.code, forged.stderr]).toEqual([1, expect.stringMatching(/was changed after it was archived: its SHA-256 is [0-9a-f]{64}, and checkpoint \S+ sealed [0-9a-f]{64}\.\n$/)]);
  });
});

describe("REST API /api/v1", () => {
  it("refusals are JSON {error: {code, message}} with the matching status", async () => {
    const anon = await fetch(`${server.url}/api/v1/jobs/job_nope`);
    expect(anon.status).toBe(401);
    expect(await anon.json()).toEqual({ error: { code: "UNAUTHORIZED", message: expect.stringContaining("You are not signed in") } });
    const missing = await fetch(`${server.url}/api/v1/jobs/job_nope`, { headers: { authorization: `Bearer ${token}` } });
    expect(missing.status).toBe(404);
    expect((await missing.json()).error).toMatchObject({ code: "NOT_FOUND", message: expect.stringContaining("Infra Job job_nope was not found") });
    const err = await api.jobs.create(ids.site, { operation: "deploy" }).catch((e) => e);
    expect(err).toBeInstanceOf(PlantonApiError);
    expect(err).toMatchObject({ status: 400, code: "BAD_REQUEST" });
    const viewerToken = (await createApiToken(t.db, org.actor("viewer"), { name: "viewer-cli" })).token;
    const viewer = createPlantonClient({ url: server.url, token: viewerToken });
    expect((await viewer.jobs.list(ids.site)).jobs.length).toBeGreaterThan(0);
    await expect(viewer.jobs.create(ids.site, { operation: "preview" })).rejects.toMatchObject({ status: 403, message: expect.stringContaining("this needs the engineer role, and you are a viewer") });
  });

  it("artifact content carries Digest: sha-256=<base64>, which the client verifies before returning the bytes", async () => {
    const [last] = (await api.jobs.list(ids.site)).jobs;
    const artifacts = await api.jobs.listArtifacts(last.id);
    // The executable plan is encrypted and refused to people; its review rendition is what they download.
    const executable = artifacts.find((a) => a.kind === "plan")!;
    expect(executable).toMatchObject({ encrypted: true });
    await expect(api.jobs.getArtifact(last.id, executable.id)).rejects.toMatchObject({ status: 403, message: expect.stringContaining("kept encrypted and only the job's runner reads it") });
    const plan = artifacts.find((a) => a.kind === "plan_review")!;
    expect(plan).toMatchObject({ encrypted: false });
    const raw = await fetch(`${server.url}/api/v1/jobs/${last.id}/artifacts/${plan.id}`, { headers: { authorization: `Bearer ${token}` } });
    const rawBytes = new Uint8Array(await raw.arrayBuffer());
    expect(raw.headers.get("digest")).toBe(`sha-256=${createHash("sha256").update(rawBytes).digest("base64")}`);
    const bytes = await api.jobs.getArtifact(last.id, plan.id);
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(plan.sha256);

    // The same answer with one byte changed on the way is refused by the client.
    const tampering: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (!String(input).includes("/artifacts/")) return res;
      const body = new Uint8Array(await res.arrayBuffer());
      body[0] ^= 1;
      return new Response(body, { status: res.status, headers: res.headers });
    };
    const damaged = createPlantonClient({ url: server.url, token, fetch: tampering });
    await expect(damaged.jobs.getArtifact(last.id, plan.id)).rejects.toMatchObject({ code: "DIGEST_MISMATCH" });
    const stripping: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      const headers = new Headers(res.headers);
      headers.delete("digest");
      return new Response(await res.arrayBuffer(), { status: res.status, headers });
    };
    await expect(createPlantonClient({ url: server.url, token, fetch: stripping }).jobs.getArtifact(last.id, plan.id)).rejects.toMatchObject({ code: "DIGEST_MISSING" });
  });

  it("the SSE events route resumes from Last-Event-ID with no event repeated or lost", async () => {
    const job = await api.jobs.create(ids.site, { operation: "update" });
    const seen: number[] = [];
    const read = async (lastEventId: string | null, stopAfter: number | null) => {
      const abort = new AbortController();
      const res = await fetch(`${server.url}/api/v1/jobs/${job.id}/events/stream`, {
        headers: { authorization: `Bearer ${token}`, accept: "text/event-stream", ...(lastEventId ? { "last-event-id": lastEventId } : {}) },
        signal: abort.signal,
      });
      expect(res.headers.get("content-type")).toContain("text/event-stream");
      expect(res.headers.get("cache-control")).toBe("no-cache, no-transform");
      expect(res.headers.get("x-accel-buffering")).toBe("no");
      let n = 0;
      let ended = false;
      for await (const msg of readEventStream(res.body!)) {
        if (msg.event === "end") {
          ended = true;
          break;
        }
        const e = JSON.parse(msg.data);
        expect(msg.id).toBe(String(e.seq));
        seen.push(e.seq);
        if (stopAfter !== null && ++n >= stopAfter) break;
      }
      abort.abort();
      return ended;
    };
    expect(await read(null, 4)).toBe(false);
    expect(await read(String(seen[seen.length - 1]), 3)).toBe(false);
    expect(await read(String(seen[seen.length - 1]), null)).toBe(true);
    const { events } = await api.jobs.events(job.id, 0, 5000);
    expect(seen).toEqual(events.map((e) => e.seq));
    expect(seen).toEqual(seen.map((_, i) => i + 1));
    expect((await api.jobs.get(job.id)).status).toBe("completed");
  });

  it("events?after= pages through the log; the typed client's stream gives each event once", async () => {
    const [last] = (await api.jobs.list(ids.site)).jobs;
    const { events } = await api.jobs.events(last.id, 0, 5000);
    const tail = await api.jobs.events(last.id, 5);
    expect(tail.events.map((e) => e.seq)).toEqual(events.slice(5).map((e) => e.seq));
    const streamed: number[] = [];
    for await (const e of api.jobs.streamEvents(last.id, { after: 2 })) streamed.push(e.seq);
    expect(streamed).toEqual(events.slice(2).map((e) => e.seq));
  });
});
