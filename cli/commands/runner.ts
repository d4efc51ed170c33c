// `planton runner …`: the organization's runners (list, get, register, rotate-token, revoke), its
// default runner (spec/runners-and-state-backends.md, "Choosing a Default Runner"), and `start`, a
// self-hosted runner in this process (runner/main.ts's startRunner).
import os from "node:os";
import { Command, InvalidArgumentError } from "commander";
import type { Runner, RunnerDetail, RunnerToken } from "../../lib/client";
import { formatDuration } from "../../lib/display";
import { runnerStartCommand } from "../../lib/runner-routing";
import { niceValue, RunnerStartError, startRunner, type RunningRunner } from "../../runner/main";
import { runnerConfig } from "../../runner/config";
import { client, readConfig } from "../config";
import { keyValue, outputOption } from "../options";
import { c, err, example, out, Refusal, table } from "../output";

/** PLANTON_RUNNER_NICE as the runner process reads it; a bad value is refused with what to set. */
function runnerNice(): number {
  try {
    return runnerConfig({ PLANTON_RUNNER_NICE: process.env.PLANTON_RUNNER_NICE }).PLANTON_RUNNER_NICE;
  } catch (e) {
    throw new Refusal(`No runner was started: ${(e as Error).message}`);
  }
}

function capacity(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 64) throw new InvalidArgumentError("must be a whole number from 1 to 64");
  return n;
}

const kindWords = (r: Pick<Runner, "kind">) => (r.kind === "hosted" ? "Planton-hosted" : "self-hosted");
const seenWords = (at: string | null, now = Date.now()) => (at ? `${formatDuration(Math.max(0, now - new Date(at).getTime()))} ago` : "never");
const engineWords = (r: Pick<Runner, "engines">) =>
  Object.entries(r.engines)
    .map(([p, v]) => `${p} ${v}`)
    .join(", ") || "-";
const labelWords = (r: Pick<Runner, "labels">) =>
  Object.entries(r.labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(" ") || "-";

/** The token once, that it is shown once, and the command that starts the runner with it against the server this CLI talks to. */
function printToken(t: RunnerToken, url: string) {
  out(`Token for runner ${t.runner.name}, shown this once (the server keeps only its hash):`);
  out(`  ${t.token}`);
  out();
  out("Start the runner on the machine that will run its jobs:");
  out(`  ${runnerStartCommand(url, t.token)}`);
}

function jobRows(jobs: RunnerDetail["recentJobs"]) {
  return table(
    jobs.map((j) => [j.id, j.component, j.environment, j.operation, j.result && j.status === "completed" ? `${j.status}/${j.result}` : j.status, j.createdAt]),
    ["JOB", "COMPONENT", "ENVIRONMENT", "OPERATION", "STATUS", "CREATED"],
  ).map((l) => `  ${l}`);
}

export function runnerCommand(): Command {
  const runner = new Command("runner").description("The organization's runners, its default runner, and running one on this machine");
  runner.addHelpText(
    "after",
    example("planton runner list", "planton runner register prod-runner --capacity 4 --label zone=eu-west", "planton runner set-default prod-runner", "planton runner start --token rnr_… --url https://planton.example.com"),
  );

  runner
    .command("list")
    .description("List the organization's runners and the Planton-hosted ones: status, last seen, version, engines, running jobs, default")
    .addOption(outputOption())
    .addHelpText("after", example("planton runner list", "planton runner list --output json"))
    .action(async (o: { output: string }) => {
      const list = await client().runners.list();
      if (o.output === "json") return out(JSON.stringify(list, null, 2));
      const now = Date.now();
      const rows = list.runners.map((r) => [r.name, kindWords(r), r.status, seenWords(r.lastSeenAt, now), r.version ?? "-", engineWords(r), `${r.running}/${r.capacity}`, r.isDefault ? "yes" : ""]);
      for (const line of table(rows, ["NAME", "KIND", "STATUS", "LAST SEEN", "VERSION", "ENGINES", "RUNNING/CAPACITY", "DEFAULT"])) out(line);
      out();
      out(`Default runner: ${list.default ?? "none (deploys run on a Planton-hosted runner)"}`);
    });

  runner
    .command("get")
    .description("Show one runner with its running and recent jobs")
    .argument("<runner>", "the runner's name (or id)")
    .addOption(outputOption())
    .addHelpText("after", example("planton runner get prod-runner", "planton runner get prod-runner --output json"))
    .action(async (name: string, o: { output: string }) => {
      const r = await client().runners.get(name);
      if (o.output === "json") return out(JSON.stringify(r, null, 2));
      for (const [k, v] of [
        ["Name", r.name],
        ["Kind", kindWords(r)],
        ["Status", r.status],
        ["Last seen", r.lastSeenAt ? `${seenWords(r.lastSeenAt)} (${r.lastSeenAt})` : "never"],
        ["Version", r.version ?? "-"],
        ["Engines", engineWords(r)],
        ["Labels", labelWords(r)],
        ["Running", `${r.running} of ${r.capacity}`],
        ["Default", r.isDefault ? "yes: connections that name no runner deploy here" : "no"],
        ["Connections", r.connections.join(", ") || "-"],
        ...(r.revokedAt ? [["Revoked", r.revokedAt]] : []),
      ]) out(`${(k + ":").padEnd(13)} ${v}`);
      out();
      out(r.runningJobs.length ? "Running jobs:" : "Running jobs: none");
      if (r.runningJobs.length) for (const l of jobRows(r.runningJobs)) out(l);
      out(r.recentJobs.length ? "Recent jobs:" : "Recent jobs: none");
      if (r.recentJobs.length) for (const l of jobRows(r.recentJobs)) out(l);
    });

  runner
    .command("register")
    .description("Register a self-hosted runner; prints its token once and the command that starts it")
    .argument("<name>", "the runner's name, e.g. prod-runner")
    .option("--capacity <n>", "jobs it runs at once", capacity, 2)
    .option("--label <key=value>", "a label; repeat for each", keyValue)
    .addHelpText("after", example("planton runner register prod-runner", "planton runner register prod-runner --capacity 4 --label zone=eu-west --label team=platform"))
    .action(async (name: string, o: { capacity: number; label?: Record<string, string> }) => {
      const api = client();
      const t = await api.runners.register({ name, capacity: o.capacity, labels: o.label ?? {} });
      out(`Registered self-hosted runner ${c.bold(t.runner.name)} (capacity ${t.runner.capacity}${Object.keys(t.runner.labels).length ? `, labels ${labelWords(t.runner)}` : ""}).`);
      printToken(t, api.url);
    });

  runner
    .command("rotate-token")
    .description("Give a runner a new token (printed once); the old token and the job credentials issued under it stop working")
    .argument("<runner>", "the runner's name (or id)")
    .addHelpText("after", example("planton runner rotate-token prod-runner") + "\nRestart the runner with the new token; jobs it was running fail, since their credentials stop working.\n")
    .action(async (name: string) => {
      const api = client();
      const t = await api.runners.rotateToken(name);
      out(`Rotated the token of runner ${c.bold(t.runner.name)}: the old token no longer works.`);
      if (t.failedJobs.length) out(`Failed, as their credentials stopped working: ${t.failedJobs.join(", ")}`);
      printToken(t, api.url);
    });

  runner
    .command("revoke")
    .description("Revoke a runner: its claims and heartbeats are refused at once, and the jobs it is running fail")
    .argument("<runner>", "the runner's name (or id)")
    .addHelpText("after", example("planton runner revoke old-runner"))
    .action(async (name: string) => {
      const api = client();
      const wasDefault = (await api.runners.get(name)).isDefault;
      const r = await api.runners.revoke(name);
      out(`Revoked runner ${c.bold(r.runner.name)}: its claims and heartbeats are refused from now on.`);
      out(r.failedJobs.length ? `Failed, as the runner was revoked: ${r.failedJobs.join(", ")}` : "It was running no jobs.");
      if (wasDefault) out("It is no longer the organization's default runner: deploys and live cloud operations return to a Planton-hosted runner.");
    });

  runner
    .command("get-default")
    .description("Show where deploys and live cloud operations run for the organization")
    .addOption(outputOption())
    .addHelpText("after", example("planton runner get-default"))
    .action(async (o: { output: string }) => {
      const d = await client().runners.getDefault();
      if (o.output === "json") return out(JSON.stringify(d, null, 2));
      out(`Default runner: ${d.runner ?? "none (Planton-hosted)"}`);
      out(d.description);
    });

  runner
    .command("set-default")
    .description("Make one of the organization's runners the default; refused while any state is on Planton-managed storage")
    .argument("<runner>", "the runner's name (or id)")
    .addHelpText("after", example("planton runner set-default prod-runner") + "\nMove state off Planton-managed storage first: planton infra state-backend move-off-planton --to <backend>\n")
    .action(async (name: string) => {
      const d = await client().runners.setDefault(name);
      out(`${d.runner} is now the organization's default runner.`);
      out(d.description);
    });

  runner
    .command("unset-default")
    .description("Clear the default runner: deploys and live cloud operations return to a Planton-hosted runner")
    .addHelpText("after", example("planton runner unset-default"))
    .action(async () => {
      const d = await client().runners.unsetDefault();
      out("The organization has no default runner now.");
      out(d.description);
    });

  runner
    .command("start")
    .description("Start a self-hosted runner: claims this organization's jobs from the server and runs them here")
    .option("--token <rnr_…>", "runner token (env PLANTON_RUNNER_TOKEN)")
    .option("--url <server>", "server URL (env PLANTON_URL; default: the one you logged in to)")
    .option("--capacity <n>", "jobs run at once", capacity, 2)
    .option("--work-dir <dir>", "folder for job workspaces", os.tmpdir())
    .option("--name <name>", "name shown in logs", os.hostname())
    .option("--nice <n>", "CPU priority of the runner and its engines, 0–19: higher yields the CPU to the rest of the machine (env PLANTON_RUNNER_NICE; default 0)", niceValue)
    .addHelpText("after", example("planton runner start --token rnr_… --url https://planton.example.com --capacity 4") + "\nThe token is checked before the runner says it started. When the server restarts, the runner waits and reconnects; SIGTERM (or Ctrl-C) lets in-flight steps finish, then it exits.\n")
    .action(async (o: { token?: string; url?: string; capacity: number; workDir: string; name: string; nice?: number }) => {
      const url = o.url || process.env.PLANTON_URL || readConfig().url || "";
      const token = o.token || process.env.PLANTON_RUNNER_TOKEN || "";
      if (!url) throw new Refusal("No runner was started: no server URL. Pass --url https://planton.example.com (or log in with planton auth login).");
      if (!token) throw new Refusal("No runner was started: no runner token. Pass --token rnr_… (or set PLANTON_RUNNER_TOKEN); an admin creates one in Settings → Runners.");
      let r: RunningRunner;
      try {
        // Checks the token with the server first: nothing says "started" unless the server accepted it.
        r = await startRunner({ url, token, capacity: o.capacity, workDir: o.workDir, name: o.name, nice: o.nice ?? runnerNice() });
      } catch (e) {
        if (e instanceof RunnerStartError) throw new Refusal(e.message);
        throw e;
      }
      out(`Runner ${o.name} started against ${url} (capacity ${o.capacity}). Ctrl-C stops it after in-flight operations finish.`);
      for (const sig of ["SIGINT", "SIGTERM"] as const) process.once(sig, () => void r.stop().then(() => process.exit(0)));
      try {
        await r.done;
      } catch (e) {
        err((e as Error).message);
        process.exitCode = 1;
      } finally {
        await r.stop();
      }
    });
  return runner;
}
