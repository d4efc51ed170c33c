// The direct path end to end, through the real `planton` binary: the built console on a real Postgres,
// a real runner process and the builtin engine writing StaticSite files under the local connection's
// folder. Create → update job → files; change → version + a job that changes only what differs;
// delete → destroy → files gone, history readable; prod pauses; a failed or cancelled destroy leaves
// the component "delete failed" with a retry that works; forget keeps the files; concurrent edits.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { flowControlPolicies } from "../db/schema";
import { newId } from "../lib/ids";
import type { InfraJob, PlantonClient } from "../lib/client";
import { environmentByName } from "../server/services/organizations/lookup";
import { startJobStack, type JobStack } from "../test/integration/harness";
import { plantonCli } from "./run-cli";

let stack: JobStack;
let api: PlantonClient;
let token: string;
let adminToken: string;
let configDir: string;
const { spawnPlanton, planton } = plantonCli(() => ({ url: stack.server.url, token, configDir }));
const runnerLog = () => stack.runners.map((r) => r.log()).join("").slice(-3000);

const jobIdIn = (text: string) => text.match(/job_[0-9A-Za-z]+/)![0];
const componentIdIn = (text: string) => text.match(/cmp_[0-9A-Za-z]+/)![0];
const waitJob = (id: string, done: (j: InfraJob) => boolean) =>
  vi.waitFor(
    async () => {
      const j = await api.jobs.get(id);
      if (!done(j)) throw new Error(`job ${id} is ${j.status}/${j.result}, still waiting\nrunner:\n${runnerLog()}`);
      return j;
    },
    { timeout: 90_000, interval: 150 },
  );
/** The folders of a site under the connection's root (`sites/<site_name>-<pet>`). */
const siteDirs = (siteName: string) => (fs.existsSync(stack.file("sites")) ? fs.readdirSync(stack.file("sites")).filter((d) => d.startsWith(`${siteName}-`)) : []);
const specFile = (name: string, body: string) => {
  const f = path.join(stack.infraRoot, "specs", name);
  fs.mkdirSync(path.dirname(f), { recursive: true });
  fs.writeFileSync(f, body);
  return f;
};
const ok = (r: { code: number | null; stdout: string; stderr: string }) => expect(r.code, `${r.stdout}${r.stderr}\nrunner:\n${runnerLog()}`).toBe(0);

beforeAll(async () => {
  stack = await startJobStack();
  configDir = path.join(stack.infraRoot, "config");
  const prod = await environmentByName(stack.t.db, stack.org.orgId, "prod");
  await stack.t.db.insert(flowControlPolicies).values({ id: newId("flowControlPolicy"), selector: "environment", orgId: stack.org.orgId, selectorId: prod.id, pauseBeforeApply: true });
  token = await stack.tokenFor("engineer");
  adminToken = await stack.tokenFor("admin");
  api = stack.rest;
  await stack.startRunner("component-runner", 2);
}, 240_000);

afterAll(async () => {
  await stack?.close();
});

const SUBCOMMANDS: [string, string][] = [
  ["list", "[options]"],
  ["get", "[options] <infra-component-id>"],
  ["create", "[options] <name> --env <environment> --kind <kind>"],
  ["update", "[options] <infra-component-id>"],
  ["delete", "[options] <infra-component-id>"],
  ["forget", "[options] <infra-component-id> --confirm <name>"],
];

describe("planton infra component", () => {
  let site: string;

  it("every subcommand's --help has its usage line and an example, in both forms (component, ic)", async () => {
    // The short form on one subcommand (commander's alias is the whole group's), the long form on each.
    const forms = SUBCOMMANDS.map(([sub], i) => ["infra", i === 0 ? "ic" : "component", sub, "--help"]);
    const helps = await Promise.all(forms.map((args) => planton(args)));
    SUBCOMMANDS.forEach(([sub, usage], i) => {
      const r = helps[i];
      expect(r.code, sub).toBe(0);
      expect(r.stdout.split("\n")[0], sub).toBe(`Usage: planton infra component ${sub} ${usage}`);
      expect(r.stdout, sub).toMatch(/\nExamples?:\n {2}\$ planton infra component /);
    });
    const create = helps[2].stdout;
    for (const flag of ["--env <environment>", "--kind <kind>", "--spec-file <file>", "--no-deploy", "-t, --tail", "-m, --version-message"]) expect(create).toContain(flag);
    expect(helps[3].stdout).toContain("--base-version <n>");
    for (const flag of ["--env <environment>", "--kind <kind>", "--deleted"]) expect(helps[0].stdout).toContain(flag);
  });

  it("create runs an update job that writes the site; list and get show it with its spec version and last job", async () => {
    const spec = specFile("site.yaml", "site_name: lifecycle\ntitle: First\n");
    const r = await planton(["infra", "component", "create", "lifecycle", "--env", "dev", "--kind", "StaticSite", "--connection", "local-sandbox", "--spec-file", spec, "--tail", "-m", "first release"]);
    ok(r);
    site = componentIdIn(r.stdout);
    const jobId = jobIdIn(r.stdout.slice(r.stdout.indexOf("Created Infra Job")));
    expect(r.stdout).toContain(`Created lifecycle (${site}) in dev: Active, spec version 1`);
    expect(r.stdout).toMatch(new RegExp(`Job ${jobId} completed: succeeded`));
    const job = await api.jobs.get(jobId);
    expect([job.operation, job.result, job.specVersion, job.versionMessage]).toEqual(["update", "succeeded", 1, "first release"]);
    const [dir] = siteDirs("lifecycle");
    expect(fs.readFileSync(stack.file("sites", dir, "index.html"), "utf8")).toContain("<h1>First</h1>");

    const list = await planton(["infra", "component", "list", "--env", "dev"]);
    ok(list);
    const row = list.stdout.split("\n").find((l) => l.startsWith(site))!;
    expect(row.split(/\s{2,}/)).toEqual([site, "lifecycle", "StaticSite", "dev", "Active", "v1", `${jobId} (update, succeeded, v1)`]);
    expect((await planton(["infra", "ic", "list", "--env", "prod"])).stdout).not.toContain(site);
    expect((await planton(["infra", "ic", "list", "--kind", "DatabaseCredentials"])).stdout).not.toContain(site);

    const get = await planton(["infra", "component", "get", site]);
    ok(get);
    expect(get.stdout).toMatch(/Status: +Active/);
    expect(get.stdout).toMatch(/Spec version: +v1/);
    expect(get.stdout).toMatch(new RegExp(`Last job: +${jobId} \\(update, succeeded, v1\\)`));
    expect(get.stdout).toMatch(/ {2}v1 .*spec.* jobs: job_/);
    // The job commands take the id list printed.
    ok(await planton(["infra", "job", "list", site]));
  });

  it("update records version 2 with its field diff and runs a job that changes only what differs", async () => {
    const spec = specFile("site-2.json", JSON.stringify({ site_name: "lifecycle", title: "Second" }));
    const r = await planton(["infra", "component", "update", site, "--spec-file", spec, "--tail"]);
    ok(r);
    expect(r.stdout).toContain("Spec version 1 → 2:");
    expect(r.stdout).toContain('spec.title: "First" → "Second"');
    expect(r.stdout).not.toContain("spec.site_name");
    const jobId = jobIdIn(r.stdout.slice(r.stdout.indexOf("Created Infra Job")));
    const job = await api.jobs.get(jobId);
    expect([job.result, job.specVersion]).toEqual(["succeeded", 2]);
    // The title is only in index.html and the manifest: the folder, robots.txt and the pet stay.
    const plan = await api.jobs.getPlan(jobId);
    const changed = plan.operations.filter((o) => o.action !== "noop" && o.action !== "read").map((o) => o.address).sort();
    expect(changed).toEqual(["local_file.index", "terraform_data.manifest"]);
    const [dir] = siteDirs("lifecycle");
    expect(fs.readFileSync(stack.file("sites", dir, "index.html"), "utf8")).toContain("<h1>Second</h1>");
    const { versions } = await api.components.versions(site);
    expect(versions.map((v) => [v.version, v.jobIds])).toEqual([
      [2, [jobId]],
      [1, [expect.stringMatching(/^job_/)]],
    ]);
  });

  it("two concurrent updates on the same base version: one is saved, the other refused naming both versions", async () => {
    const a = specFile("a.yaml", "site_name: lifecycle\ntitle: From A\n");
    const b = specFile("b.yaml", "site_name: lifecycle\ntitle: From B\n");
    const [ra, rb] = await Promise.all([
      planton(["infra", "component", "update", site, "--spec-file", a, "--base-version", "2", "--no-deploy"]),
      planton(["infra", "component", "update", site, "--spec-file", b, "--base-version", "2", "--no-deploy"]),
    ]);
    const [won, lost] = ra.code === 0 ? [ra, rb] : [rb, ra];
    ok(won);
    expect(lost.code, lost.stdout + lost.stderr).toBe(1);
    expect(lost.stdout).toBe("");
    expect(lost.stderr).toMatch(/version 2/);
    expect(lost.stderr).toMatch(/version 3/);
    expect(lost.stderr).not.toMatch(/\.\.\s*$/);
    expect(won.stdout).toContain("Spec version 2 → 3:");
    const now = await api.components.get(site);
    expect(now.specVersion).toBe(3);
    expect(now.spec.title).toBe(won === ra ? "From A" : "From B");
  });

  it("--no-deploy saves a draft; deleting a draft that never ran removes it at once", async () => {
    const r = await planton(["infra", "ic", "create", "sketch", "--env", "dev", "--kind", "StaticSite", "--connection", "local-sandbox", "--spec-file", specFile("sketch.yaml", "site_name: sketch\n"), "--no-deploy"]);
    ok(r);
    const id = componentIdIn(r.stdout);
    expect(r.stdout).toContain("Draft");
    expect(r.stdout).toContain("Saved as a draft: nothing was deployed");
    expect((await api.jobs.list(id)).jobs).toEqual([]);
    expect((await planton(["infra", "ic", "list"])).stdout.split("\n").find((l) => l.startsWith(id))).toMatch(/ Draft /);
    const del = await planton(["infra", "ic", "delete", id]);
    ok(del);
    expect((await api.components.get(id)).status).toBe("deleted");
    expect(siteDirs("sketch")).toEqual([]);
  });

  it("refuses a spec that does not match its kind, field by field, and an unreadable spec file, and creates nothing", async () => {
    const bad = await planton(["infra", "ic", "create", "wrong", "--env", "dev", "--kind", "StaticSite", "--spec-file", specFile("wrong.yaml", "page_count: many\n")]);
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim()).toBe("The spec does not match StaticSite: site_name is required: Name of the site; its folder is sites/<name>-<suffix>; page_count must be a number. Nothing was saved.");
    const broken = await planton(["infra", "ic", "create", "wrong", "--env", "dev", "--kind", "StaticSite", "--spec-file", specFile("broken.json", "{ nope")]);
    expect(broken.code).not.toBe(0);
    expect(broken.stderr).toContain("broken.json is not valid JSON");
    const list = await api.components.list({ show: "all" });
    expect(list.components.map((x) => x.name)).not.toContain("wrong");
  });

  it("a module registered from an archive makes a kind of the organization's own: its spec is checked against the module's variables, and a component pinned to it runs it", async () => {
    const dir = path.join(stack.infraRoot, "greeting-module");
    fs.mkdirSync(path.join(dir, "greeting"), { recursive: true });
    fs.writeFileSync(
      path.join(dir, "greeting", "main.tf"),
      `variable "file_name" {
  type        = string
  description = "The file to write under greetings/."
  validation {
    condition     = length(var.file_name) <= 10
    error_message = "file_name must be at most 10 characters."
  }
}

variable "words" {
  type    = number
  default = 2
}

resource "local_file" "greeting" {
  filename = "greetings/\${var.file_name}.txt"
  content  = "hello \${var.words}"
}
`,
    );
    execFileSync("tar", ["-czf", path.join(dir, "greeting.tar.gz"), "-C", dir, "greeting"]);
    const reg = await planton(["module", "register", "--name", "greeting", "--version", "1.0.0", "--kind", "Greeting", "--provisioner", "builtin", "--archive", path.join(dir, "greeting.tar.gz")], { PLANTON_TOKEN: adminToken });
    ok(reg);
    expect(reg.stdout).toMatch(/^Registered greeting@1\.0\.0 for Greeting \(sha256 [0-9a-f]{64}, 1 files\)\.\nInputs: file_name, words\?\n/);

    const bad = await planton(["infra", "ic", "create", "hello", "--env", "dev", "--kind", "Greeting", "--connection", "local-sandbox", "--spec-file", specFile("greeting-bad.yaml", "file_name: much-too-long-for-it\n")]);
    expect([bad.code, bad.stderr.trim()]).toEqual([1, "The spec does not match Greeting: file_name: file_name must be at most 10 characters. Nothing was saved."]);
    const made = await planton(["infra", "ic", "create", "hello", "--env", "dev", "--kind", "Greeting", "--connection", "local-sandbox", "--spec-file", specFile("greeting.yaml", "file_name: hi\n"), "--module", "greeting@1.0.0", "--tail"]);
    ok(made);
    expect(made.stdout).toMatch(/Job job_\S+ completed: succeeded/);
    expect(fs.readFileSync(stack.file("greetings", "hi.txt"), "utf8")).toBe("hello 2");

    const got = await planton(["module", "get", "greeting", "--version", "1.0.0", "--output", "json"]);
    ok(got);
    const v = JSON.parse(got.stdout);
    expect(v.usedBy).toEqual([{ id: componentIdIn(made.stdout), name: "hello", environment: "dev" }]);
    const job = await api.jobs.get(jobIdIn(made.stdout.slice(made.stdout.indexOf("Created Infra Job"))));
    expect(job.moduleSha256).toBe(v.sha256);
  });

  it("create in prod pauses before apply; approved with planton infra job resume, it applies", async () => {
    const follow = spawnPlanton(["infra", "ic", "create", "storefront", "--env", "prod", "--kind", "StaticSite", "--connection", "local-sandbox", "--spec-file", specFile("storefront.yaml", "site_name: storefront\n"), "--tail"]);
    await follow.said("is awaiting approval");
    const jobId = jobIdIn(follow.run.stdout.slice(follow.run.stdout.indexOf("Created Infra Job")));
    expect(siteDirs("storefront")).toEqual([]);
    ok(await planton(["infra", "job", "resume", jobId]));
    const r = await follow.done;
    ok(r);
    expect(r.stdout).toContain(`Job ${jobId} completed: succeeded`);
    expect(siteDirs("storefront")).toHaveLength(1);
  });

  it("delete in prod pauses; cancelled, the component is delete failed with a retry; retried and approved, the destroy removes it and its history stays readable", async () => {
    const id = (await api.components.list({ environment: "prod" })).components.find((x) => x.name === "storefront")!.id;
    const first = await planton(["infra", "component", "delete", id]);
    ok(first);
    const destroyId = jobIdIn(first.stdout.slice(first.stdout.indexOf("Created Infra Job")));
    expect(first.stdout).toContain(`Deleting storefront (${id}) in prod: Deleting`);
    expect(first.stdout).toContain(`The destroy deletes the 5 resources in storefront's state (its plan: planton infra job plan ${destroyId}):`);
    for (const a of ["local_file.index", "local_file.robots", "local_directory.site", "random_pet.suffix", "terraform_data.manifest"]) expect(first.stdout).toContain(`  - ${a}\n`);
    await waitJob(destroyId, (j) => j.status === "awaiting_approval");
    const plan = await api.jobs.getPlan(destroyId);
    expect(plan.destroy).toBe(true);
    expect(plan.operations.filter((o) => o.action === "delete").length).toBe(5);
    ok(await planton(["infra", "job", "cancel", destroyId]));
    await vi.waitFor(async () => expect((await api.components.get(id)).status).toBe("delete_failed"), { timeout: 30_000, interval: 150 });
    const failed = await planton(["infra", "ic", "get", id]);
    expect(failed.stdout).toMatch(/Status: +Delete failed/);
    expect(failed.stdout).toMatch(/Reason: +\S/);
    expect(failed.stdout).toContain(`Retry:         planton infra component delete ${id}`);
    expect(siteDirs("storefront")).toHaveLength(1);

    const retry = spawnPlanton(["infra", "component", "delete", id, "--tail"]);
    await retry.said("is awaiting approval");
    const retryId = jobIdIn(retry.run.stdout.slice(retry.run.stdout.indexOf("Created Infra Job")));
    ok(await planton(["infra", "job", "resume", retryId]));
    const r = await retry.done;
    ok(r);
    expect(r.stdout).toContain(`Job ${retryId} completed: succeeded`);
    expect(siteDirs("storefront")).toEqual([]);
    await vi.waitFor(async () => expect((await api.components.get(id)).status).toBe("deleted"), { timeout: 30_000, interval: 150 });

    expect((await planton(["infra", "ic", "list"])).stdout).not.toContain(id);
    const gone = await planton(["infra", "ic", "list", "--deleted"]);
    expect(gone.stdout.split("\n").find((l) => l.startsWith(id))).toMatch(/storefront +StaticSite +prod +Deleted/);
    const get = await planton(["infra", "ic", "get", id]);
    ok(get);
    expect(get.stdout).toMatch(/Status: +Deleted/);
    expect(get.stdout).toMatch(/Removed: +\d{4}-/);
    const jobs = await planton(["infra", "job", "list", id]);
    ok(jobs);
    for (const j of [destroyId, retryId]) expect(jobs.stdout).toContain(j);
    expect((await api.components.versions(id)).versions.length).toBeGreaterThan(0);
    // Deleted: nothing more can be changed, in the rule's words.
    const again = await planton(["infra", "ic", "update", id, "--no-deploy", "--description", "again"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("was deleted");
  });

  it("a destroy that fails leaves the component delete failed with the reason; the retry deletes it", async () => {
    const [dir] = siteDirs("lifecycle");
    // The site folder becomes a link out of the connection's root: the local provider refuses to touch it.
    const outside = path.join(path.dirname(stack.infraRoot), `${path.basename(stack.infraRoot)}-moved`);
    fs.renameSync(stack.file("sites", dir), outside);
    fs.symlinkSync(outside, stack.file("sites", dir));
    try {
      const r = await planton(["infra", "component", "delete", site, "--tail"]);
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(r.stdout).toMatch(/completed: failed/);
      await vi.waitFor(async () => expect((await api.components.get(site)).status).toBe("delete_failed"), { timeout: 30_000, interval: 150 });
      const get = await planton(["infra", "ic", "get", site]);
      expect(get.stdout).toMatch(/Status: +Delete failed/);
      expect(get.stdout).toContain(`Retry:         planton infra component delete ${site}`);
      expect(fs.existsSync(path.join(outside, "index.html"))).toBe(true);
    } finally {
      fs.rmSync(stack.file("sites", dir));
      fs.renameSync(outside, stack.file("sites", dir));
    }
    const retry = await planton(["infra", "component", "delete", site, "--tail"]);
    ok(retry);
    expect(siteDirs("lifecycle")).toEqual([]);
    await vi.waitFor(async () => expect((await api.components.get(site)).status).toBe("deleted"), { timeout: 30_000, interval: 150 });
  });

  it("forget needs the admin role and --confirm <name>; it names what keeps running, and keeps the files", async () => {
    const created = await planton(["infra", "ic", "create", "keeper", "--env", "dev", "--kind", "StaticSite", "--connection", "local-sandbox", "--spec-file", specFile("keeper.yaml", "site_name: keeper\n"), "--tail"]);
    ok(created);
    const id = componentIdIn(created.stdout);
    const asEngineer = await planton(["infra", "ic", "forget", id, "--confirm", "keeper"]);
    expect(asEngineer.code).toBe(1);
    expect(asEngineer.stderr).toContain("admin");
    const unconfirmed = await planton(["infra", "ic", "forget", id], { PLANTON_TOKEN: adminToken });
    expect(unconfirmed.code).toBe(1);
    expect(unconfirmed.stderr).toContain("local_file.index");
    expect((await api.components.get(id)).status).toBe("active");
    const r = await planton(["infra", "ic", "forget", id, "--confirm", "keeper"], { PLANTON_TOKEN: adminToken });
    ok(r);
    expect(r.stdout).toContain(`Forgot keeper (${id})`);
    expect(r.stdout).toContain("5 resources keep running unmanaged:");
    expect(r.stdout).toContain("  local_file.index");
    const [dir] = siteDirs("keeper");
    expect(fs.existsSync(stack.file("sites", dir, "index.html"))).toBe(true);
    expect((await planton(["infra", "ic", "list"])).stdout).not.toContain(id);
    expect((await planton(["infra", "ic", "list", "--deleted"])).stdout.split("\n").find((l) => l.startsWith(id))).toMatch(/ Forgotten /);
  });
});
