// `planton runner start`: a self-hosted runner in this process (runner/main.ts's startRunner).
import os from "node:os";
import { Command, InvalidArgumentError } from "commander";
import { RunnerStartError, startRunner, type RunningRunner } from "../../runner/main";
import { readConfig } from "../config";
import { err, out, Refusal } from "../output";

function capacity(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 64) throw new InvalidArgumentError("must be a whole number from 1 to 64");
  return n;
}

export function runnerCommand(): Command {
  const runner = new Command("runner").description("Run Infra Jobs on this machine");
  runner
    .command("start")
    .description("Start a self-hosted runner: claims this organization's jobs from the server and runs them here")
    .option("--token <rnr_…>", "runner token (env PLANTON_RUNNER_TOKEN)")
    .option("--url <server>", "server URL (env PLANTON_URL; default: the one you logged in to)")
    .option("--capacity <n>", "jobs run at once", capacity, 2)
    .option("--work-dir <dir>", "folder for job workspaces", os.tmpdir())
    .option("--name <name>", "name shown in logs", os.hostname())
    .addHelpText("after", "\nExample:\n  $ planton runner start --token rnr_… --url https://planton.example.com --capacity 4\n")
    .action(async (o: { token?: string; url?: string; capacity: number; workDir: string; name: string }) => {
      const url = o.url || process.env.PLANTON_URL || readConfig().url || "";
      const token = o.token || process.env.PLANTON_RUNNER_TOKEN || "";
      if (!url) throw new Refusal("No runner was started: no server URL. Pass --url https://planton.example.com (or log in with planton auth login).");
      if (!token) throw new Refusal("No runner was started: no runner token. Pass --token rnr_… (or set PLANTON_RUNNER_TOKEN); an admin creates one in Settings → Runners.");
      let r: RunningRunner;
      try {
        // Checks the token with the server first: nothing says "started" unless the server accepted it.
        r = await startRunner({ url, token, capacity: o.capacity, workDir: o.workDir, name: o.name });
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
