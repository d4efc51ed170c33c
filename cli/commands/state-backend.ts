// `planton infra state-backend …`: an organization's state backends (spec/runners-and-state-backends.md,
// State Backends): create, list, get, delete, the default per provisioner, what is still on
// Planton-managed storage, and an admin's force-unlock of a component's state.
import { Command } from "commander";
import type { StateBackend, StateBackendAccessCheck } from "../../lib/client";
import { formatBytes } from "../../lib/display";
import { PROVISIONERS, STATE_BACKEND_KIND_NAMES, STATE_BACKEND_KINDS, type StateBackendKind } from "../../lib/state-backend-kinds";
import { client } from "../config";
import { keyValue, outputOption } from "../options";
import { c, example, out, Refusal, table } from "../output";

const CREATABLE = STATE_BACKEND_KIND_NAMES.filter((k) => STATE_BACKEND_KINDS[k].creatable);

/** Each kind with its config fields and the connection it needs, for create's help. */
const KINDS_HELP =
  "\nKinds and their --config fields:\n" +
  CREATABLE.map((k) => {
    const def = STATE_BACKEND_KINDS[k];
    const fields = def.configFields.map((f) => `${f.name}${"required" in f && f.required ? " (required)" : ""}`).join(", ");
    return `  ${k.padEnd(16)} ${def.title}; ${def.connectionProvider ? `--connection to ${/^[aeiou]/.test(def.connectionProvider) ? "an" : "a"} ${def.connectionProvider} connection` : "no connection"}; ${fields || "no fields"}`;
  }).join("\n") +
  "\n";


function accessLine(a: StateBackendAccessCheck): string {
  return `Access test: ${a.steps.map((s) => `${s.step} ${s.ok ? c.green("✓") : c.red("✗")}`).join("  ")}`;
}

const titleOf = (kind: string) => STATE_BACKEND_KINDS[kind as StateBackendKind]?.title ?? kind;
const configWords = (b: StateBackend) =>
  Object.entries(b.config)
    .filter(([, v]) => v !== "" && v !== undefined)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(" ");

export function stateBackendCommand(): Command {
  const cmd = new Command("state-backend").description("Where the organization's state lives: backends, the default per provisioner, Planton-managed usage");
  cmd.addHelpText("after", example("planton infra state-backend create my-s3-backend --kind s3 --connection aws-prod --config bucket=acme-states", "planton infra state-backend set-default my-s3-backend", "planton infra state-backend list-planton-managed"));

  cmd
    .command("create")
    .description("Create a state backend; its access test (write, read back, delete a probe) must pass, or nothing is saved")
    .argument("<name>", "the backend's name, e.g. prod-s3")
    .requiredOption("--kind <kind>", CREATABLE.join(", "))
    .option("--connection <connection>", "the connection its credentials come from (kinds that need one)")
    .option("--config <key=value>", "one of the kind's fields; repeat for each", keyValue)
    .addHelpText("after", example("planton infra state-backend create prod-s3 --kind s3 --connection aws-prod --config bucket=acme-states --config key_prefix=planton/", "planton infra state-backend create laptop --kind local --config path=/var/lib/planton/states") + KINDS_HELP)
    .action(async (name: string, o: { kind: string; connection?: string; config?: Record<string, string> }) => {
      const saved = await client().stateBackends.create({ name, kind: o.kind, config: o.config ?? {}, connection: o.connection ?? null });
      out(`Created ${titleOf(saved.backend.kind)} state backend ${c.bold(saved.backend.name)}${saved.backend.connection ? ` (connection ${saved.backend.connection})` : ""}.`);
      out(accessLine(saved.access));
      out(`Make it the default for new components: planton infra state-backend set-default ${saved.backend.name}`);
    });

  cmd
    .command("list")
    .description("List the organization's state backends: kind, connection, components served, default for")
    .addOption(outputOption())
    .addHelpText("after", example("planton infra state-backend list", "planton infra state-backend list --output json"))
    .action(async (o: { output: string }) => {
      const list = await client().stateBackends.list();
      if (o.output === "json") return out(JSON.stringify(list, null, 2));
      const rows = list.backends.map((b) => [b.name, titleOf(b.kind), b.connection ?? "-", String(b.components), b.defaultFor.join(", ") || "-"]);
      for (const line of table(rows, ["NAME", "KIND", "CONNECTION", "COMPONENTS", "DEFAULT FOR"])) out(line);
      out();
      out(`Defaults: ${Object.entries(list.defaults).map(([p, b]) => `${p} → ${b}`).join(", ")}`);
    });

  cmd
    .command("get")
    .description("Show one state backend")
    .argument("<name>", "the backend's name")
    .addOption(outputOption())
    .addHelpText("after", example("planton infra state-backend get prod-s3"))
    .action(async (name: string, o: { output: string }) => {
      // The list holds every backend, Planton-managed too (GET /state-backends/planton-managed is its usage).
      const b = (await client().stateBackends.list()).backends.find((x) => x.name === name);
      if (!b) throw new Refusal(`State backend ${name} was not found. List the organization's backends with planton infra state-backend list, or see Settings → State Backends.`);
      if (o.output === "json") return out(JSON.stringify(b, null, 2));
      for (const [k, v] of [
        ["Name", b.name],
        ["Kind", `${titleOf(b.kind)} (${b.kind})`],
        ["Connection", b.connection ?? "-"],
        ["Config", configWords(b) || "-"],
        ["Components", String(b.components)],
        ["Default for", b.defaultFor.join(", ") || "-"],
      ]) out(`${(k + ":").padEnd(12)} ${v}`);
    });

  cmd
    .command("delete")
    .description("Delete a state backend; refused while it keeps components' state or is a default")
    .argument("<name>", "the backend's name")
    .addHelpText("after", example("planton infra state-backend delete old-s3"))
    .action(async (name: string) => {
      await client().stateBackends.delete(name);
      out(`Deleted state backend ${name}.`);
    });

  cmd
    .command("set-default")
    .description("Make a backend the default: new components keep their state there (every provisioner its kind serves, unless --provisioner)")
    .argument("<backend>", "the backend's name")
    .option("--provisioner <provisioner>", `only for this provisioner (${PROVISIONERS.join(", ")}); repeat for more`, (v: string, prev: string[] = []) => [...prev, v])
    .addHelpText("after", example("planton infra state-backend set-default my-s3-backend", "planton infra state-backend set-default my-pulumi --provisioner pulumi"))
    .action(async (backend: string, o: { provisioner?: string[] }) => {
      const api = client();
      let provisioners = o.provisioner;
      if (!provisioners?.length) {
        const b = (await api.stateBackends.list()).backends.find((x) => x.name === backend);
        if (!b) throw new Refusal(`No default was set: state backend ${backend} was not found. List the organization's backends with planton infra state-backend list.`);
        provisioners = [...(STATE_BACKEND_KINDS[b.kind as StateBackendKind]?.provisioners ?? [])];
      }
      let defaults: Record<string, string> = {};
      for (const p of provisioners) defaults = (await api.stateBackends.setDefault(p, backend)).defaults;
      out(`${backend} is now the default for ${provisioners.join(", ")}: new components keep their state there.`);
      out(`Defaults: ${Object.entries(defaults).map(([p, b]) => `${p} → ${b}`).join(", ")}`);
    });

  cmd
    .command("unset-default")
    .description("Remove a provisioner's default: new components keep their state on Planton-managed storage")
    .requiredOption("--provisioner <provisioner>", PROVISIONERS.join(", "))
    .addHelpText("after", example("planton infra state-backend unset-default --provisioner builtin"))
    .action(async (o: { provisioner: string }) => {
      const list = await client().stateBackends.unsetDefault(o.provisioner);
      out(`The default for ${o.provisioner} is ${list.defaults[o.provisioner] ?? "unset"} now: new ${o.provisioner} components keep their state there.`);
    });

  cmd
    .command("list-planton-managed")
    .description("List every state still on Planton-managed storage: component, environment, provisioner, size, serial")
    .addOption(outputOption())
    .addHelpText("after", example("planton infra state-backend list-planton-managed", "planton infra state-backend list-planton-managed --output json"))
    .action(async (o: { output: string }) => {
      const usage = await client().stateBackends.plantonManaged();
      if (o.output === "json") return out(JSON.stringify(usage, null, 2));
      if (!usage.states.length) return out("Nothing left on Planton-managed storage.");
      const rows = usage.states.map((s) => [s.component, s.environment, s.provisioner, formatBytes(s.size), s.serial === null ? "-" : String(s.serial)]);
      for (const line of table(rows, ["COMPONENT", "ENVIRONMENT", "PROVISIONER", "SIZE", "SERIAL"])) out(line);
      out();
      out(`${usage.totals.count} state${usage.totals.count === 1 ? "" : "s"}, ${formatBytes(usage.totals.size)} (${usage.byEnvironment.map((e) => `${e.environment}: ${e.count}, ${formatBytes(e.size)}`).join("; ")})`);
      out("Move them off: planton infra state-backend move-off-planton --to <backend> --dry-run");
    });

  cmd
    .command("force-unlock")
    .description("Remove the lock on a component's state whatever its holder (admins; recorded in the audit log)")
    .argument("<infra-component-id>", "the Infra Component whose state to unlock")
    .addHelpText("after", example("planton infra state-backend force-unlock cmp_01J…") + "\nOnly when the lock's holder is gone (a lost runner): a running job's lock protects its writes.\n")
    .action(async (componentId: string) => {
      const r = await client().components.forceUnlockState(componentId);
      if (!r.released) return out(`The state of ${componentId} was not locked; nothing was changed.`);
      out(`Removed the lock on the state of ${componentId}:`);
      for (const k of ["ID", "Operation", "Who", "Created"]) out(`  ${k.padEnd(10)} ${String(r.released[k] ?? "")}`);
    });

  return cmd;
}
