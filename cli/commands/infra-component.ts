// `planton infra component …` (short form `planton infra ic …`): the direct path of spec/infra-jobs.md.
// Creating or changing a component queues an update job, deleting it runs a destroy job; --tail follows it.
import fs from "node:fs";
import path from "node:path";
import { Command, InvalidArgumentError } from "commander";
import { parse as parseYaml } from "yaml";
import type { ComponentChange, ComponentVersion, InfraComponent, PlantonClient } from "../../lib/client";
import { COMPONENT_LIST_SHOWS, COMPONENT_STATUS_WORDS } from "../../lib/component-lifecycle";
import { client } from "../config";
import { c, example, out, Refusal, table } from "../output";
import { afterStart, withRunFlags, type RunFlags } from "./infra-job";

/** --module: `name@version` pins one; `latest` follows the registry's latest (null). */
function moduleChoice(v: string): string | null {
  if (v === "latest") return null;
  if (!/^[a-z][a-z0-9-]{1,62}@\S+$/.test(v)) throw new InvalidArgumentError(`expected name@version (e.g. team-bucket@1.2.0) or latest, got "${v}"`);
  return v;
}

const MODULE_RULE_WORDS = { custom: "pinned on the component", organization: "the organization registry's latest", platform: "the platform's", none: "none registered for its kind" } as const;
function moduleWords(m: InfraComponent["module"]): string {
  if (!m.resolved) return m.pinned ? `${m.pinned} (pinned, not registered)` : MODULE_RULE_WORDS.none;
  return `${m.resolved} (${MODULE_RULE_WORDS[m.rule]}${m.sha256 ? `, sha256 ${m.sha256.slice(0, 12)}` : ""})`;
}

/** --spec-file: a YAML or JSON object (JSON is read strictly, so a typo names its position). */
function readSpecFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    throw new InvalidArgumentError(`cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  let spec: unknown;
  try {
    spec = path.extname(file).toLowerCase() === ".json" ? JSON.parse(text) : parseYaml(text);
  } catch (e) {
    throw new InvalidArgumentError(`${file} is not valid ${path.extname(file).toLowerCase() === ".json" ? "JSON" : "YAML"}: ${(e as Error).message.split("\n")[0]}`);
  }
  if (spec === null || spec === undefined) return {};
  if (typeof spec !== "object" || Array.isArray(spec)) throw new InvalidArgumentError(`${file} must hold one object of spec fields (field: value), not ${Array.isArray(spec) ? "a list" : typeof spec}`);
  return spec as Record<string, unknown>;
}

const when = (d: string | Date) => new Date(d).toISOString().replace("T", " ").slice(0, 19);
const shown = (v: unknown) => (v === null || v === undefined ? "(none)" : typeof v === "string" ? JSON.stringify(v) : JSON.stringify(v));
const statusWord = (s: InfraComponent["status"]) => {
  const label = COMPONENT_STATUS_WORDS[s].label;
  return s === "delete_failed" ? c.red(label) : s === "draft" || s === "deleting" ? c.yellow(label) : s === "active" ? c.green(label) : c.dim(label);
};
const jobRef = (j: InfraComponent["lastJob"]) => (j ? `${j.id} (${j.operation}, ${j.status === "completed" ? j.result : j.status}${j.specVersion ? `, v${j.specVersion}` : ""})` : "none");

/** A version's field-level changes, one per line: `spec.site_name: "a" → "b"`. */
function printChanges(v: Pick<ComponentVersion, "changes">, indent = "  "): void {
  const entries = Object.entries(v.changes);
  if (!entries.length) return out(`${indent}no field changed`);
  for (const [field, { from, to }] of entries) out(`${indent}${field}: ${c.red(shown(from))} → ${c.green(shown(to))}`);
}

interface ChangeFlags extends RunFlags {
  deploy: boolean;
}

/** What create, update and delete print: the component's status, then the job it queued (followed with --tail). */
async function afterChange(api: PlantonClient, change: ComponentChange, o: ChangeFlags, verb: string, beforeJob?: () => Promise<void>): Promise<void> {
  const { component: cmp, job } = change;
  out(`${verb} ${c.bold(cmp.name)} (${cmp.id}) in ${cmp.environment}: ${statusWord(cmp.status)}, spec version ${cmp.specVersion}`);
  await beforeJob?.();
  if (!job) {
    if (cmp.status === "draft") out(`Saved as a draft: nothing was deployed. Deploy it: planton infra job create ${cmp.id} --operation update --tail`);
    else if (cmp.status === "deleted") out("Nothing of it was ever deployed, so there was nothing to destroy: it was removed at once.");
    return;
  }
  if (change.queuedBehind) out(`Its job waits for ${change.queuedBehind}, which is running or waiting for this component (one job per component at a time).`);
  await afterStart(api, job, o, "Created");
}

export function infraComponentCommand(): Command {
  const cmd = new Command("component").alias("ic").description("Create, change, delete and forget Infra Components; each change runs its job (short form: planton infra ic)");
  cmd.addHelpText("after", example("planton infra component list --env dev", "planton infra ic create site --env dev --kind StaticSite --spec-file site.yaml --tail"));

  cmd
    .command("list")
    .description("List the organization's Infra Components: the ids the job commands take, their status, spec version and last job")
    .option("--env <environment>", "only this environment's")
    .option("--kind <kind>", "only this catalog kind's")
    .option("--deleted", "show the deleted and forgotten ones instead (their history stays readable)")
    .option("--all", "show the current and the gone ones")
    .option("--json", "print the components as JSON")
    .addHelpText("after", example("planton infra component list --env prod", "planton infra component list --deleted --json"))
    .action(async (o: { env?: string; kind?: string; deleted?: boolean; all?: boolean; json?: boolean }) => {
      const show: (typeof COMPONENT_LIST_SHOWS)[number] = o.all ? "all" : o.deleted ? "gone" : "current";
      const { components } = await client().components.list({ environment: o.env, kind: o.kind, show });
      if (o.json) return out(JSON.stringify(components, null, 2));
      if (!components.length) {
        const where = [o.env && `in ${o.env}`, o.kind && `of kind ${o.kind}`].filter(Boolean).join(" ");
        return out(show === "gone" ? `No deleted or forgotten components${where ? ` ${where}` : ""}.` : `No Infra Components${where ? ` ${where}` : ""} yet. Create one: planton infra component create <name> --env <environment> --kind <kind> --spec-file spec.yaml`);
      }
      const rows = components.map((x) => [x.id, x.name, x.kind, x.environment, COMPONENT_STATUS_WORDS[x.status].label, `v${x.specVersion}`, jobRef(x.lastJob)]);
      for (const line of table(rows, ["ID", "NAME", "KIND", "ENV", "STATUS", "VERSION", "LAST JOB"])) out(line);
    });

  cmd
    .command("get")
    .description("Show an Infra Component: status (and why), spec, spec versions and last job")
    .argument("<infra-component-id>", "the Infra Component to show")
    .option("--json", "print the component and its versions as JSON")
    .addHelpText("after", example("planton infra component get cmp_01J…", "planton infra component get cmp_01J… --json"))
    .action(async (id: string, o: { json?: boolean }) => {
      const api = client();
      const [cmp, { versions }] = await Promise.all([api.components.get(id), api.components.versions(id)]);
      if (o.json) return out(JSON.stringify({ ...cmp, versions }, null, 2));
      out(c.bold(`${cmp.name} (${cmp.id})`));
      out(`  Kind:          ${cmp.kind}`);
      out(`  Environment:   ${cmp.environment}`);
      out(`  Status:        ${statusWord(cmp.status)}: ${COMPONENT_STATUS_WORDS[cmp.status].description}`);
      if (cmp.statusReason) out(`  Reason:        ${cmp.statusReason}`);
      if (cmp.status === "delete_failed") out(`  Retry:         planton infra component delete ${cmp.id}`);
      if (cmp.deleteJobId) out(`  Destroy job:   ${cmp.deleteJobId}`);
      if (cmp.deletedAt) out(`  Removed:       ${when(cmp.deletedAt)} UTC${cmp.deletedBy ? ` by ${cmp.deletedBy}` : ""}`);
      out(`  Spec version:  v${cmp.specVersion}`);
      out(`  Connection:    ${cmp.connection ?? "(none: its jobs cannot deploy until it has one)"}`);
      out(`  State backend: ${cmp.stateBackend ?? "(the organization's default)"}`);
      out(`  Module:        ${moduleWords(cmp.module)}`);
      if (cmp.description) out(`  Description:   ${cmp.description}`);
      out(`  Last job:      ${jobRef(cmp.lastJob)}`);
      out(c.bold("Spec:"));
      const spec = Object.entries(cmp.spec);
      if (!spec.length) out("  (empty)");
      for (const [k, v] of spec) out(`  ${k}: ${shown(v)}`);
      out(c.bold("Versions, newest first:"));
      for (const v of versions) {
        const fields = Object.keys(v.changes);
        out(`  v${v.version}  ${when(v.createdAt)} UTC  ${v.createdByLabel}  ${fields.length ? fields.join(", ") : "no field changed"}${v.jobIds.length ? `  jobs: ${v.jobIds.join(", ")}` : ""}`);
      }
      // What may not be done now, once per reason (a deleted component refuses everything for one reason).
      const blocked = new Map<string, string[]>();
      for (const [action, a] of Object.entries(cmp.actions)) if (!a.allowed && a.why) blocked.set(a.why, [...(blocked.get(a.why) ?? []), action]);
      for (const [why, actions] of blocked) out(c.dim(`Not now (${actions.join(", ")}): ${why}.`));
    });

  withRunFlags(
    cmd
      .command("create")
      .description("Create an Infra Component and queue its first update job (--no-deploy saves a draft)")
      .usage("[options] <name> --env <environment> --kind <kind>")
      .argument("<name>", "the component's name, unique in its environment")
      .requiredOption("--env <environment>", "the environment to create it in")
      .requiredOption("--kind <kind>", "its catalog kind, e.g. StaticSite")
      .option("--spec-file <file>", "its spec: a YAML or JSON file of field: value (secrets as $secret/NAME)", readSpecFile)
      .option("--description <text>", "what it is for")
      .option("--connection <name>", "the connection its jobs deploy through, e.g. local-sandbox (needed to deploy)")
      .option("--state-backend <name>", "where its state lives (default: the organization's default)")
      .option("--module <name@version>", "a registered module version for its kind to pin (planton module list); default: follow the registry's latest", moduleChoice)
      .option("--no-deploy", "save it without deploying: a draft, until you deploy it"),
  )
    .addHelpText(
      "after",
      example(
        "planton infra component create site --env dev --kind StaticSite --spec-file site.yaml --tail",
        "planton infra component create shop --env prod --kind StaticSite --spec-file shop.json --no-deploy",
        "planton infra component create logs --env dev --kind TeamBucket --spec-file logs.yaml --module team-bucket@1.2.0",
      ),
    )
    .action(async (name: string, o: ChangeFlags & { env: string; kind: string; specFile?: Record<string, unknown>; description?: string; connection?: string; stateBackend?: string; module?: string | null }) => {
      const api = client();
      const change = await api.components.create({
        name,
        environment: o.env,
        kind: o.kind,
        spec: o.specFile ?? {},
        ...(o.description !== undefined ? { description: o.description } : {}),
        ...(o.connection ? { connection: o.connection } : {}),
        ...(o.stateBackend ? { stateBackend: o.stateBackend } : {}),
        ...(o.module ? { module: o.module } : {}),
        deploy: o.deploy,
        versionMessage: o.versionMessage ?? "",
      });
      await afterChange(api, change, o, "Created");
    });

  withRunFlags(
    cmd
      .command("update")
      .description("Change an Infra Component: records the next spec version (printed as a field diff) and queues an update job for it")
      .argument("<infra-component-id>", "the Infra Component to change")
      .option("--spec-file <file>", "its whole new spec: a YAML or JSON file of field: value", readSpecFile)
      .option("--description <text>", "what it is for")
      .option("--connection <name>", "the connection its jobs use")
      .option("--state-backend <name>", "where its state lives")
      .option("--module <name@version|latest>", "pin a registered module version for its kind, or `latest` to follow the registry's latest", moduleChoice)
      .option("--base-version <n>", "the spec version your change is based on (default: the one read just before); refused if someone changed it since", (v) => {
        const n = Number(v);
        if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`expected a spec version (1, 2, …), got "${v}"`);
        return n;
      })
      .option("--no-deploy", "record the version without running a job"),
  )
    .addHelpText(
      "after",
      example(
        "planton infra component update cmp_01J… --spec-file site.yaml --tail -m \"a second page\"",
        "planton infra component update cmp_01J… --spec-file site.yaml --base-version 3",
        "planton infra component update cmp_01J… --module team-bucket@1.3.0",
        "planton infra component update cmp_01J… --module latest",
      ),
    )
    .action(async (id: string, o: ChangeFlags & { specFile?: Record<string, unknown>; description?: string; connection?: string; stateBackend?: string; baseVersion?: number; module?: string | null }) => {
      const api = client();
      // The version this change is based on: a change someone saved since is refused rather than overwritten.
      const baseVersion = o.baseVersion ?? (await api.components.get(id)).specVersion;
      const change = await api.components.update(id, {
        baseVersion,
        ...(o.specFile ? { spec: o.specFile } : {}),
        ...(o.description !== undefined ? { description: o.description } : {}),
        ...(o.connection !== undefined ? { connection: o.connection } : {}),
        ...(o.stateBackend !== undefined ? { stateBackend: o.stateBackend } : {}),
        ...(o.module !== undefined ? { module: o.module } : {}),
        deploy: o.deploy,
        versionMessage: o.versionMessage ?? "",
      });
      const next = change.component.specVersion;
      const diff = async () => {
        if (next <= baseVersion) return out(`Nothing changed: it stays at spec version ${next}, and no job was queued. To deploy it as it is: planton infra job create ${id} --operation update`);
        const v = (await api.components.versions(id)).versions.find((x) => x.version === next);
        out(`Spec version ${baseVersion} → ${c.bold(String(next))}:`);
        if (v) printChanges(v);
      };
      await afterChange(api, change, o, "Updated", diff);
    });

  withRunFlags(
    cmd
      .command("delete")
      .description("Delete an Infra Component: a destroy job deletes its resources, then the component is removed (its history stays); also retries a failed delete")
      .argument("<infra-component-id>", "the Infra Component to delete"),
  )
    .addHelpText(
      "after",
      example("planton infra component delete cmp_01J… --tail", "planton infra component delete cmp_01J… -m \"site retired\"") +
        "\nThe destroy runs under the environment's flow control: where approval is required it pauses; resume it with planton infra job resume <job-id>. If it fails or is cancelled the component stays, marked delete failed; run the same command to retry.",
    )
    .action(async (id: string, o: RunFlags) => {
      const api = client();
      const change = await api.components.delete(id, { versionMessage: o.versionMessage ?? "" });
      const job = change.job;
      // What the destroy deletes: what the state holds now (its plan, once made, is the exact list).
      const whatGoes = async () => {
        if (!job) return;
        const { resources } = await api.components.state(id);
        if (!resources.length) return out(`${change.component.name}'s state holds no resources: the destroy has nothing to delete.`);
        out(`The destroy deletes the ${resources.length} resource${resources.length === 1 ? "" : "s"} in ${change.component.name}'s state (its plan: planton infra job plan ${job.id}):`);
        for (const r of resources) out(`  - ${r.address}${r.instances > 1 ? ` (${r.instances} instances)` : ""}`);
      };
      await afterChange(api, change, { ...o, deploy: true }, job ? "Deleting" : "Deleted", whatGoes);
    });

  cmd
    .command("forget")
    .description("Admins: remove an Infra Component from Planton without destroying its resources, which keep running unmanaged; its state is kept for export")
    .usage("[options] <infra-component-id> --confirm <name>")
    .argument("<infra-component-id>", "the Infra Component to forget")
    .option("--confirm <name>", "the component's name, to confirm its resources keep running unmanaged (without it nothing is forgotten and the refusal lists them)")
    .addHelpText("after", example("planton infra component forget cmp_01J… --confirm site"))
    .action(async (id: string, o: { confirm?: string }) => {
      const { component: cmp, unmanaged } = await client().components.forget(id, o.confirm !== undefined ? { confirmName: o.confirm } : {});
      out(`Forgot ${c.bold(cmp.name)} (${cmp.id}): Planton no longer manages it; nothing was destroyed.`);
      if (!unmanaged.length) out("Its state held no resources.");
      else {
        out(`${unmanaged.length} resource${unmanaged.length === 1 ? "" : "s"} keep running unmanaged:`);
        for (const a of unmanaged) out(`  ${a}`);
      }
    });

  for (const sub of cmd.commands) sub.showHelpAfterError();
  return cmd;
}

export { Refusal };
