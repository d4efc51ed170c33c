// A self-hosted runner's life from the command line, with real processes: the built console on a
// real Postgres, the real `planton` binary. An admin registers a runner (its token shown once, with
// the command that starts it), starts it with exactly that command, makes it the organization's
// default runner; the console restarts while the runner waits, and the runner reconnects and runs the
// next job; `planton connection auth create`, as a preflight refusal words it, lets a job run; SIGTERM
// drains the runner; rotate-token and revoke end its token. A second organization, whose states are on
// Planton-managed storage, is refused a default runner in words that name them.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { createPlantonClient, type InfraJob, type PlantonClient } from "../../lib/client";
import { buildProgram } from "../../cli/main";
import { storedStateOf } from "../../state-backends/rules";
import { draftComponent } from "../components";
import { unauthorizedConnectionMessage } from "../../server/services/jobs/preflight";
import { createConnection } from "../../server/services/settings/connections";
import { createApiToken } from "../../server/services/settings/api-tokens";
import { PlantonManagedStore, plantonManagedKey, plantonStateBytes } from "../../server/services/state-backends/planton-managed-store";
import { seedTestOrg, type TestOrg } from "../fixtures";
import { startJobStack, type JobStack } from "./harness";

const root = path.resolve(import.meta.dirname, "../..");
let stack: JobStack;
let adminToken: string;
let engineerToken: string;
let admin: PlantonClient;
let other: TestOrg;
let otherAdminToken: string;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `planton …` as its own process, logged in with `token` (the organization's admin by default). */
function spawnPlanton(args: string[], opts: { token?: string; env?: Record<string, string> } = {}) {
  const env = { ...process.env, PLANTON_URL: stack.server.url, PLANTON_TOKEN: opts.token ?? adminToken, PLANTON_CONFIG_DIR: path.join(stack.infraRoot, "config"), NO_COLOR: "1", ...opts.env };
  const child = spawn(process.execPath, [path.join(root, "bin/planton.mjs"), ...args], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  const run: Run = { code: null, stdout: "", stderr: "" };
  child.stdout.on("data", (d) => (run.stdout += d));
  child.stderr.on("data", (d) => (run.stderr += d));
  const done = new Promise<Run>((resolve) => child.on("close", (code) => resolve({ ...run, code })));
  return { child, run, done };
}
const planton = (args: string[], token?: string) => spawnPlanton(args, { token }).done;

/** Resolves once `read()` contains `text`; fails if the process ends first. */
const saidBy = (child: ChildProcess, read: () => string, text: string) =>
  new Promise<void>((resolve, reject) => {
    const check = () => read().includes(text) && (off(), resolve());
    const onClose = () => (read().includes(text) ? resolve() : reject(new Error(`the process ended without saying "${text}":\n${read()}`)));
    const off = () => (child.stdout!.off("data", check), child.stderr!.off("data", check), child.off("close", onClose));
    child.stdout!.on("data", check);
    child.stderr!.on("data", check);
    child.once("close", onClose);
    check();
  });

const waitJob = (id: string, done: (j: InfraJob) => boolean, log: () => string = () => "") =>
  vi.waitFor(
    async () => {
      const j = await stack.rest.jobs.get(id);
      if (!done(j)) throw new Error(`job ${id} is ${j.status}/${j.result} (${j.reason ?? ""}), still waiting\nrunner:\n${log().slice(-3000)}`);
      return j;
    },
    { timeout: 90_000, interval: 150 },
  );

beforeAll(async () => {
  stack = await startJobStack();
  [adminToken, engineerToken] = await Promise.all([stack.tokenFor("admin"), stack.tokenFor("engineer")]);
  admin = createPlantonClient({ url: stack.server.url, token: adminToken });
  // This organization keeps its states in a backend of its own, so a runner of its own may be its default.
  await admin.stateBackends.create({ name: "lab-states", kind: "local", config: { path: stack.file("states") } });
  for (const p of ["builtin", "tofu", "terraform"]) await admin.stateBackends.setDefault(p, "lab-states");
  await stack.registerKind("TestSlow", "slow", [{ name: "name", type: "string", required: true, description: "folder" }]);
  await stack.component("after-restart", "dev", "StaticSite", { site_name: "after-restart" });
  await stack.component("drained", "dev", "TestSlow", { name: "drained" });

  // Another organization on the same console, with three states still on Planton-managed storage.
  other = await seedTestOrg(stack.t.db, { localRoot: stack.file("other") });
  otherAdminToken = (await createApiToken(stack.t.db, other.actor("admin"), { name: "other-admin" })).token;
  const store = new PlantonManagedStore(stack.t.db, other.orgId);
  for (const [name, env] of [["web", "dev"], ["docs", "dev"], ["api", "prod"]] as const) {
    const { id } = await draftComponent(stack.t.db, other.actor(), { environment: env, kind: "StaticSite", name, spec: { site_name: name }, connection: "local-sandbox" });
    const doc = { version: 4, terraform_version: "builtin-0.1.0", serial: 1, lineage: `lin-${name}`, outputs: {}, resources: [] };
    await store.write(plantonManagedKey(other.orgId, id), storedStateOf(plantonStateBytes(doc)));
  }
}, 240_000);

let runner: ReturnType<typeof spawnPlanton> | undefined;
const runnerLog = () => (runner ? runner.run.stdout + runner.run.stderr : "");

afterAll(async () => {
  if (runner && runner.child.exitCode === null && runner.child.signalCode === null) {
    runner.child.kill("SIGKILL");
    await runner.done;
  }
  await stack?.close();
});

const SUBCOMMANDS: [string, string, string[]][] = [
  ["runner", "list", []],
  ["runner", "get", ["<runner>"]],
  ["runner", "register", ["<name>"]],
  ["runner", "rotate-token", ["<runner>"]],
  ["runner", "revoke", ["<runner>"]],
  ["runner", "get-default", []],
  ["runner", "set-default", ["<runner>"]],
  ["runner", "unset-default", []],
  ["runner", "start", []],
  ["connection auth", "create", ["--provider", "--connection", "--scope", "--environments"]],
  ["connection auth", "list", ["--connection"]],
  ["connection auth", "delete", ["--connection", "--scope", "--environments"]],
];

describe("a self-hosted runner from the command line", () => {
  let started: { token: string; command: string };

  it("every runner and connection auth subcommand's --help has its usage and an example", () => {
    // The program's own help, in this process: one spawn per subcommand would cost seconds for the same text.
    const program = buildProgram();
    for (const [group, sub, args] of SUBCOMMANDS) {
      let cmd = program;
      for (const name of [...group.split(" "), sub]) cmd = cmd.commands.find((x) => x.name() === name)!;
      let help = "";
      cmd.configureOutput({ writeOut: (text) => (help += text) });
      cmd.outputHelp();
      expect(help).toContain(`Usage: planton ${group} ${sub} `);
      for (const a of args) expect(help, `${group} ${sub}`).toContain(a);
      expect(help).toMatch(new RegExp(`Examples?:\\n  \\$ planton ${group} ${sub}`));
    }
  });

  it("register prints the token once, says so, and the command that starts it; no other answer shows the token", async () => {
    const r = await planton(["runner", "register", "edge-runner", "--capacity", "2", "--label", "zone=lab"]);
    expect(r.stderr).toBe("");
    const token = r.stdout.match(/rnr_[A-Za-z0-9_-]+/)![0];
    const command = `planton runner start --token ${token} --url ${stack.server.url}`;
    expect(r.stdout).toBe(
      [
        "Registered self-hosted runner edge-runner (capacity 2, labels zone=lab).",
        "Token for runner edge-runner, shown this once (the server keeps only its hash):",
        `  ${token}`,
        "",
        "Start the runner on the machine that will run its jobs:",
        `  ${command}`,
        "",
      ].join("\n"),
    );
    started = { token, command };
    const list = await planton(["runner", "list"], engineerToken);
    const lines = list.stdout.split("\n");
    expect(lines[0]).toMatch(/^NAME\s+KIND\s+STATUS\s+LAST SEEN\s+VERSION\s+ENGINES\s+RUNNING\/CAPACITY\s+DEFAULT$/);
    expect(lines.find((l) => l.startsWith("edge-runner"))).toMatch(/^edge-runner\s+self-hosted\s+offline\s+never\s+-\s+-\s+0\/2$/);
    expect(list.stdout).toContain("Default runner: none (deploys run on a Planton-hosted runner)");
    const json = await planton(["runner", "get", "edge-runner", "--output", "json"], engineerToken);
    expect(JSON.parse(json.stdout)).toMatchObject({ name: "edge-runner", kind: "self_hosted", labels: { zone: "lab" }, runningJobs: [], recentJobs: [] });
    for (const out of [list.stdout, json.stdout, JSON.stringify(await admin.runners.list())]) expect(out).not.toContain(token);
  });

  it("set-default is refused while states are on Planton-managed storage, naming them and the command that moves them", async () => {
    await createPlantonClient({ url: stack.server.url, token: otherAdminToken }).runners.register({ name: "b-runner" });
    const r = await planton(["runner", "set-default", "b-runner"], otherAdminToken);
    expect([r.code, r.stdout]).toEqual([1, ""]);
    expect(r.stderr).toBe(
      "Nothing was changed: b-runner cannot be the default runner while 3 states are on Planton-managed storage (dev: docs, web; prod: api), which only Planton-hosted runners can reach. Move them off first: planton infra state-backend move-off-planton --to <backend> (or Settings → State Backends → Move off Planton-managed storage), then set the default again.\n",
    );
  });

  it("starts with the printed command, becomes the default, waits out a console restart and runs the next job", async () => {
    const [word, ...args] = started.command.split(" ");
    expect(word).toBe("planton");
    runner = spawnPlanton([...args, "--work-dir", stack.file("work"), "--name", "edge-runner"], { env: { ...stack.gates.env, PLANTON_RUNNER_HEARTBEAT_MS: "1000" } });
    await saidBy(runner.child, () => runner!.run.stdout, `Runner edge-runner started against ${stack.server.url}`);

    const set = await planton(["runner", "set-default", "edge-runner"]);
    expect(set.stdout).toBe("edge-runner is now the organization's default runner.\nDeploys and live cloud operations of connections that name no runner run on edge-runner.\n");
    expect((await planton(["runner", "get-default"], engineerToken)).stdout).toBe("Default runner: edge-runner\nDeploys and live cloud operations of connections that name no runner run on edge-runner.\n");

    // The console goes away under the runner's long poll, stays away until the runner has noticed, and comes back on the same port and database.
    await stack.server.restart(() => saidBy(runner!.child, runnerLog, "the server is unreachable"));
    const job = await stack.rest.jobs.create(stack.ids["after-restart"], { operation: "update" });
    const done = await waitJob(job.id, (j) => j.status === "completed", runnerLog);
    expect(done.result, done.reason ?? "").toBe("succeeded");
    expect(done.route).toMatchObject({ rule: "default", runner: "edge-runner", sentence: "on edge-runner: the organization's default runner" });
    expect((await admin.runners.get("edge-runner")).recentJobs.map((j) => j.id)).toContain(job.id);
    expect(runner.child.exitCode).toBeNull();
    const lines = runner.run.stderr.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as { msg: string; failedClaims?: number });
    // Told once, however many claims failed while the console was away; then told it answers again.
    expect(lines.filter((l) => l.msg.startsWith("the server is unreachable"))).toHaveLength(1);
    expect(lines.find((l) => l.msg === "the server answers again; claiming")!.failedClaims).toBeGreaterThanOrEqual(1);

    const list = await planton(["runner", "list"], engineerToken);
    expect(list.stdout.split("\n").find((l) => l.startsWith("edge-runner"))).toMatch(/^edge-runner\s+self-hosted\s+(online|busy)\s+\d+ ?m?s ago\s.*\s\d\/2\s+yes$/);
  }, 180_000);

  it("a job refused for an unauthorized connection runs after the refusal's own planton connection auth create command", async () => {
    await createConnection(stack.t.db, stack.org.actor(), { name: "lab-files", provider: "local", config: { root: stack.file("lab") } });
    const { id } = await draftComponent(stack.t.db, stack.org.actor("engineer"), { environment: "staging", kind: "StaticSite", name: "lab-site", spec: { site_name: "lab" }, connection: "lab-files" });
    const refused = await stack.rest.jobs.create(id, { operation: "update" });
    expect([refused.status, refused.result]).toEqual(["completed", "failed"]);
    const message = unauthorizedConnectionMessage("staging", "local", "lab-files");
    expect(JSON.stringify(refused.preflight)).toContain(message);
    const command = message.match(/\((planton connection auth create [^)]+)\)/)![1];

    const wrong = await planton(["connection", "auth", "create", "--provider", "aws", "--connection", "lab-files", "--scope", "organization"]);
    expect([wrong.code, wrong.stderr]).toEqual([
      1,
      "Connection lab-files was not authorized: connection lab-files is a local connection, not aws. Pass --provider local, or name an aws connection (planton connection auth list shows each connection's provider).\n",
    ]);
    const authorized = await planton(command.split(" ").slice(1));
    expect(authorized.stderr).toBe("");
    expect(authorized.stdout).toBe("Authorized environment staging to use local connection lab-files.\nConnection lab-files may now be used by environment staging.\n");
    const list = await planton(["connection", "auth", "list"], engineerToken);
    expect(list.stdout.split("\n")).toEqual([expect.stringMatching(/^CONNECTION\s+PROVIDER\s+AUTHORIZED FOR$/), expect.stringMatching(/^lab-files\s+local\s+environment staging$/), expect.stringMatching(/^local-sandbox\s+local\s+the organization$/), ""]);

    const rerun = await stack.rest.jobs.rerun(refused.id);
    const done = await waitJob(rerun.id, (j) => j.status === "completed", runnerLog);
    expect(done.result, done.reason ?? "").toBe("succeeded");

    const removed = await planton(["connection", "auth", "delete", "--connection", "lab-files", "--scope", "environment", "--environments", "staging"]);
    expect(removed.stdout).toBe("Removed the authorization of environment staging to use local connection lab-files.\nConnection lab-files may now be used by nobody.\n");
    const after = await stack.rest.jobs.create(id, { operation: "update" });
    expect(after.result).toBe("failed");
  });

  it("SIGTERM drains the runner: the in-flight step finishes, then it exits 0", async () => {
    stack.gates.hold("drained");
    const job = await stack.rest.jobs.create(stack.ids.drained, { operation: "update" });
    await stack.gates.held("drained");
    runner!.child.kill("SIGTERM");
    await saidBy(runner!.child, runnerLog, "stopping: no new claims");
    stack.gates.release("drained");
    expect((await runner!.done).code).toBe(0);
    const done = await stack.rest.jobs.get(job.id);
    expect([done.status, done.result]).toEqual(["completed", "succeeded"]);
    expect(done.steps.map((s) => `${s.step}:${s.result}`)).toEqual(["init:succeeded", "refresh:succeeded", "preview:succeeded", "apply:succeeded"]);
  });

  it("rotate-token prints a new token once and the old one no longer starts a runner; revoke ends it", async () => {
    const rotated = await planton(["runner", "rotate-token", "edge-runner"]);
    const token = rotated.stdout.match(/rnr_[A-Za-z0-9_-]+/)![0];
    expect(token).not.toBe(started.token);
    expect(rotated.stdout).toContain("Rotated the token of runner edge-runner: the old token no longer works.");
    expect(rotated.stdout).toContain(`  planton runner start --token ${token} --url ${stack.server.url}\n`);
    const old = await planton(["runner", "start", "--token", started.token, "--url", stack.server.url]);
    expect(old.code).toBe(1);
    expect(old.stderr).toContain(`No runner was started: the server at ${stack.server.url} refused the runner token (401)`);
    expect(old.stdout).not.toContain("started");

    const unset = await planton(["runner", "unset-default"]);
    expect(unset.stdout).toBe("The organization has no default runner now.\nDeploys and live cloud operations of connections that name no runner run on a Planton-hosted runner.\n");
    await admin.runners.setDefault("edge-runner");
    const revoked = await planton(["runner", "revoke", "edge-runner"]);
    expect(revoked.stdout).toBe(
      "Revoked runner edge-runner: its claims and heartbeats are refused from now on.\nIt was running no jobs.\nIt is no longer the organization's default runner: deploys and live cloud operations return to a Planton-hosted runner.\n",
    );
    expect(await admin.runners.getDefault()).toMatchObject({ runner: null });
    expect((await admin.runners.get("edge-runner")).status).toBe("revoked");
  });
});
