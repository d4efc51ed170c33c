// The planton CLI: `npx planton …` from a checkout (bin/planton.mjs runs this file through tsx).
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Command, CommanderError } from "commander";
import { PlantonApiError } from "../lib/client";
import { auditCommand } from "./commands/audit";
import { authCommand } from "./commands/auth";
import { connectionCommand } from "./commands/connection";
import { infraComponentCommand } from "./commands/infra-component";
import { infraJobCommand } from "./commands/infra-job";
import { moduleCommand } from "./commands/module";
import { runnerCommand } from "./commands/runner";
import { stateBackendCommand } from "./commands/state-backend";
import { addStateMoveCommands } from "./commands/state-move";
import { err, Refusal } from "./output";

export function buildProgram(): Command {
  const program = new Command("planton")
    .description("The Planton console's command line: log in, run and steer Infra Jobs, manage modules, runners and connections, run a runner, read and verify the audit record.")
    .version("0.1.0")
    // Root options only before a command: `planton module get x --version 1.0.0` is the module's version, not the CLI's.
    .enablePositionalOptions()
    .showHelpAfterError("(run with --help for usage)")
    .addHelpText("after", "\nExample:\n  $ planton auth login --url http://127.0.0.1:3000 --token plt_…\n  $ planton infra component list --env dev\n  $ planton infra job create cmp_01J… --operation update --tail\n");
  program.addCommand(authCommand());
  const infra = program.command("infra").description("Infra Components, their jobs and state backends");
  infra.addCommand(infraComponentCommand());
  infra.addCommand(infraJobCommand());
  infra.addCommand(stateBackendCommand());
  program.addCommand(moduleCommand());
  program.addCommand(runnerCommand());
  program.addCommand(connectionCommand());
  addStateMoveCommands(program);
  program.addCommand(auditCommand());
  return program;
}

/** Runs the CLI; refusals print the server's message as is, to stderr, with a non-zero exit. */
export async function main(argv = process.argv): Promise<void> {
  try {
    await buildProgram().exitOverride().parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      process.exitCode = e.exitCode;
      return;
    }
    if (e instanceof PlantonApiError || e instanceof Refusal) {
      err(e.message);
      process.exitCode = e instanceof Refusal ? e.exitCode : 1;
      return;
    }
    err(`planton: ${(e as Error).stack ?? String(e)}`);
    process.exitCode = 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) void main();
