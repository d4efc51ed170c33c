// Moving states between backends from the command line: `planton infra state-backend move-off-planton`
// for every state on Planton-managed storage, `planton tofu|pulumi state migrate-backend` for one component.
import { Command } from "commander";
import type { PlantonClient, StateMove, StateMoveDryRun } from "../../lib/client";
import { PROVISIONERS } from "../../lib/state-backend-kinds";
import { client } from "../config";
import { c, example, out, Refusal, table } from "../output";

/** `--to prod-s3` (the one provisioner in use) or `--to pulumi=pulumi-cloud`, repeatable: the body's `to`. */
export function parseDestinations(values: string[]): Record<string, string> {
  const to: Record<string, string> = {};
  for (const v of values) {
    const eq = v.indexOf("=");
    const [provisioner, backend] = eq < 0 ? ["*", v] : [v.slice(0, eq), v.slice(eq + 1)];
    if (!backend) throw new Refusal(`Nothing was moved: --to ${v} names no backend. Use --to <backend>, or --to <provisioner>=<backend> with one of ${PROVISIONERS.join(", ")}.`);
    if (provisioner !== "*" && !(PROVISIONERS as readonly string[]).includes(provisioner)) {
      throw new Refusal(`Nothing was moved: ${provisioner} in --to ${v} is not a provisioner. Use one of ${PROVISIONERS.join(", ")}.`);
    }
    if (to[provisioner]) throw new Refusal(`Nothing was moved: --to names ${provisioner === "*" ? "a backend" : `a backend for ${provisioner}`} twice (${to[provisioner]} and ${backend}). Give one per provisioner.`);
    to[provisioner] = backend;
  }
  return to;
}

const bytes = (n: number) => (n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`);

/** The dry run as a table, with its totals. */
export function dryRunLines(plan: StateMoveDryRun): string[] {
  if (!plan.items.length) return ["Nothing would move: no state is left on Planton-managed storage."];
  const rows = plan.items.map((i) => [i.component, i.environment, i.provisioner, i.from, i.to, i.fromKey, i.toKey, bytes(i.size), i.serial == null ? "-" : String(i.serial)]);
  return [
    ...table(rows, ["COMPONENT", "ENVIRONMENT", "PROVISIONER", "FROM", "TO", "FROM KEY", "TO KEY", "SIZE", "SERIAL"]),
    "",
    `Dry run: ${plan.totals.count} state${plan.totals.count === 1 ? "" : "s"} (${bytes(plan.totals.size)}) would move; nothing was changed.`,
  ];
}

export const progressLine = (m: StateMove) =>
  `State move ${m.id}: ${m.progress.done}/${m.progress.total} moved${m.progress.failed ? `, ${c.red(`${m.progress.failed} failed`)}` : ""} (${m.status})`;

/** Follows a move with a progress line until it ends; exit 1 when items failed. */
async function followMove(api: PlantonClient, moveId: string): Promise<void> {
  const tty = !!process.stdout.isTTY;
  let last = "";
  for (;;) {
    // While it runs the counts are enough (every item of a 10 000-state move is 4.5 MB); the failed ones are read at the end.
    let move = await api.stateMoves.get(moveId, { limit: 0 });
    if (move.status !== "running" && move.progress.failed) move = await api.stateMoves.get(moveId);
    const line = progressLine(move);
    if (line !== last) {
      if (tty) process.stdout.write(`\r\x1b[2K${line}`);
      else out(line);
      last = line;
    }
    if (move.status !== "running") {
      if (tty) out();
      for (const i of move.items.filter((x) => x.step === "failed")) out(`  ${c.red("✗")} ${i.component} (${i.environment}): ${i.error}`);
      if (move.status === "failed") {
        out(`Retry the failed ones when fixed: Settings → State Backends, or POST /api/v1/state-moves/${move.id}/retry`);
        process.exitCode = 1;
      } else out(c.green(`Moved ${move.progress.done} state${move.progress.done === 1 ? "" : "s"}; the old copies are kept for rollback.`));
      return;
    }
    // The CLI polls the move's REST record (its live channel is the console's); a short pause between reads.
    await new Promise((r) => setTimeout(r, 500));
  }
}

function moveOffPlanton(): Command {
  return new Command("move-off-planton")
    .description("Move every state off Planton-managed storage to backends of your own: each component's jobs wait while its state moves")
    .requiredOption("--to <backend>", "the destination: <backend> when one provisioner is in use, else <provisioner>=<backend> once per provisioner (repeatable)", (v: string, acc: string[] = []) => [...acc, v])
    .option("--dry-run", "only print what would move (component, environment, provisioner, keys, size, serial); nothing changes")
    .addHelpText("after", example("planton infra state-backend move-off-planton --to prod-s3 --dry-run", "planton infra state-backend move-off-planton --to builtin=prod-s3 --to pulumi=pulumi-cloud"))
    .action(async (o: { to: string[]; dryRun?: boolean }) => {
      const to = parseDestinations(o.to);
      const api = client();
      if (o.dryRun) return dryRunLines(await api.stateMoves.dryRun(to)).forEach((l) => out(l));
      const move = await api.stateMoves.start(to);
      out(`Started state move ${c.bold(move.id)}: ${move.progress.total} state${move.progress.total === 1 ? "" : "s"} to ${Object.entries(move.destinations).map(([p, b]) => `${b} (${p})`).join(", ")}.`);
      await followMove(api, move.id);
    });
}

const FAMILY = { tofu: ["builtin", "tofu", "terraform"], pulumi: ["pulumi"] } as const;

function migrateBackend(tool: keyof typeof FAMILY): Command {
  return new Command("migrate-backend")
    .description(`Move one ${tool === "tofu" ? "OpenTofu / builtin" : "Pulumi"} component's state to another backend, from whichever it is on now`)
    .argument("<infra-component-id>", "the Infra Component whose state moves")
    .requiredOption("--to <backend>", "the destination backend's name")
    .option("--dry-run", "only print what would move; nothing changes")
    .addHelpText("after", example(`planton ${tool} state migrate-backend cmp_01J… --to ${tool === "tofu" ? "prod-s3" : "pulumi-cloud"} --dry-run`))
    .action(async (componentId: string, o: { to: string; dryRun?: boolean }) => {
      const api = client();
      const plan = (await api.stateMoves.migrateBackend(componentId, { to: o.to, dryRun: true })).dryRun!;
      const provisioner = plan.items[0]?.provisioner;
      if (provisioner && !(FAMILY[tool] as readonly string[]).includes(provisioner)) {
        const other = tool === "tofu" ? "pulumi" : "tofu";
        throw new Refusal(`Nothing was moved: component ${plan.items[0].component} is a ${provisioner} component. Use planton ${other} state migrate-backend ${componentId} --to ${o.to}.`);
      }
      if (o.dryRun) return dryRunLines(plan).forEach((l) => out(l));
      const { move } = await api.stateMoves.migrateBackend(componentId, { to: o.to });
      out(`Started state move ${c.bold(move!.id)}: ${plan.items[0].component}'s state to ${o.to}.`);
      await followMove(api, move!.id);
    });
}

/** The sub-command named `name` of `parent`, created with `description` when it is not there yet (another file may add to it too). */
function group(parent: Command, name: string, description: string): Command {
  return parent.commands.find((x) => x.name() === name) ?? parent.command(name).description(description);
}

/** Adds move-off-planton under `planton infra state-backend` and migrate-backend under `planton tofu state` / `planton pulumi state`. */
export function addStateMoveCommands(program: Command): void {
  const infra = group(program, "infra", "Infra Components and their jobs");
  group(infra, "state-backend", "Where Infra Components keep their state").addCommand(moveOffPlanton());
  for (const tool of ["tofu", "pulumi"] as const) {
    const state = group(group(program, tool, tool === "tofu" ? "OpenTofu / builtin components' state" : "Pulumi components' state"), "state", `${tool === "tofu" ? "OpenTofu" : "Pulumi"} state of one component`);
    state.addCommand(migrateBackend(tool));
  }
}
