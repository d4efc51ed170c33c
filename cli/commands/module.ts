// `planton module …`: the organization's module registry (list, get, versions, register from git or
// an archive) and whether engineers may register (policy). README "Modules and the registry".
import fs from "node:fs";
import path from "node:path";
import { Command, InvalidArgumentError, Option } from "commander";
import type { ModuleVersion, RegisterModuleRequest } from "../../lib/client";
import { PROVISIONERS } from "../../lib/catalog";
import { MODULE_LIMITS } from "../../lib/modules";
import { client } from "../config";
import { outputOption } from "../options";
import { c, example, out, Refusal, table } from "../output";

const when = (d: string | Date) => new Date(d).toISOString().slice(0, 16).replace("T", " ");

function sourceWords(v: ModuleVersion): string {
  const s = v.source;
  if (s.kind === "git") return `git ${s.url}${s.path ? ` //${s.path}` : ""} @ ${s.ref} (commit ${s.commit?.slice(0, 12)})`;
  if (s.kind === "archive") return `archive ${s.archiveName}`;
  return `builtin ${s.path}`;
}

function printVersion(v: ModuleVersion) {
  out(c.bold(`${v.name}@${v.version}`));
  for (const [k, val] of [
    ["Kind", v.kind],
    ["Provisioner", v.provisioner],
    ["Registry", v.scope === "platform" ? "the platform's" : "the organization's"],
    ["Source", sourceWords(v)],
    ["SHA-256", v.sha256 ?? "-"],
    ["Files", `${v.fileCount} (${v.size} bytes)`],
    ["Registered", `${when(v.createdAt)} UTC by ${v.registeredBy}`],
    ["Used by", v.usedBy.length ? v.usedBy.map((u) => `${u.name} (${u.environment})`).join(", ") : "no component"],
  ]) {
    out(`  ${`${k}:`.padEnd(13)} ${val}`);
  }
  out(c.bold("Inputs:"));
  if (!v.inputs.length) out("  (none)");
  const rows = v.inputs.map((i) => [i.name, i.type, i.required ? "yes" : "", i.default === undefined ? "" : JSON.stringify(i.default), i.sensitive ? "yes" : "", `${i.file}:${i.line}`, i.description]);
  if (rows.length) for (const line of table(rows, ["NAME", "TYPE", "REQUIRED", "DEFAULT", "SENSITIVE", "WHERE", "DESCRIPTION"])) out(`  ${line}`);
  if (v.readme.trim()) {
    out(c.bold("README:"));
    for (const line of v.readme.trimEnd().split("\n")) out(`  ${line}`);
  }
}

function semverArg(v: string): string {
  if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(v)) throw new InvalidArgumentError(`expected a semantic version like 1.4.0, got "${v}"`);
  return v;
}

function readArchive(file: string): { fileName: string; contentBase64: string } {
  if (!/\.(tar\.gz|tgz|zip)$/i.test(file)) throw new Refusal(`Nothing was registered: ${file} is not a .tar.gz, .tgz or .zip file. Make one with tar -czf module.tar.gz -C <module folder> . (or zip -r).`);
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (e) {
    throw new Refusal(`Nothing was registered: ${file} could not be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}). Check the path.`);
  }
  if (bytes.length > MODULE_LIMITS.archiveBytes) {
    throw new Refusal(`Nothing was registered: ${file} is ${Math.ceil(bytes.length / 1024)} KiB, more than an uploaded module may be (${MODULE_LIMITS.archiveBytes / 1024} KiB compressed). Register it from git instead (--git URL --ref R).`);
  }
  return { fileName: path.basename(file), contentBase64: bytes.toString("base64") };
}

export function moduleCommand(): Command {
  const mod = new Command("module").description("The organization's module registry: list, inspect and register the IaC modules its kinds run");
  mod.addHelpText(
    "after",
    example(
      "planton module list",
      "planton module register --name team-bucket --version 1.0.0 --kind TeamBucket --provisioner tofu --git https://github.com/acme/modules.git --ref v1.0.0 --path bucket",
      "planton module get team-bucket --version 1.0.0",
    ),
  );

  mod
    .command("list")
    .description("List the modules the organization can use (its own and the platform's): kind, provisioner, latest version, components using each")
    .option("--kind <kind>", "only the modules for this catalog kind")
    .addOption(outputOption())
    .addHelpText("after", example("planton module list", "planton module list --kind StaticSite --output json"))
    .action(async (o: { kind?: string; output: string }) => {
      const list = await client().modules.list(o.kind ? { kind: o.kind } : {});
      if (o.output === "json") return out(JSON.stringify(list, null, 2));
      const rows = list.modules.map((m) => [m.name, m.kind, m.provisioner, m.scope, m.latestVersion, String(m.versionCount), String(m.componentsUsing)]);
      if (!rows.length) out(`No modules${o.kind ? ` for ${o.kind}` : ""}. Register one: planton module register --help`);
      else for (const line of table(rows, ["NAME", "KIND", "PROVISIONER", "REGISTRY", "LATEST", "VERSIONS", "COMPONENTS"])) out(line);
      out();
      out(`Engineers may register modules: ${list.policy.engineersMayRegister ? "yes" : "no (admins only)"}; you ${list.mayRegister ? "may" : "may not"} register.`);
    });

  mod
    .command("get")
    .description("Show a module version (the latest unless --version): source, checksum, inputs, README, components using it")
    .argument("<name>", "the module's name")
    .option("--version <version>", "one version (default: the latest)")
    .addOption(outputOption())
    .addHelpText("after", example("planton module get team-bucket", "planton module get team-bucket --version 1.0.0 --output json"))
    .action(async (name: string, o: { version?: string; output: string }) => {
      const api = client();
      const v = o.version ? await api.modules.version(name, o.version) : await api.modules.get(name);
      if (o.output === "json") return out(JSON.stringify(v, null, 2));
      printVersion(v);
    });

  mod
    .command("versions")
    .description("List every registered version of a module, newest first")
    .argument("<name>", "the module's name")
    .addOption(outputOption())
    .addHelpText("after", example("planton module versions team-bucket", "planton module versions team-bucket --output json"))
    .action(async (name: string, o: { output: string }) => {
      const list = await client().modules.versions(name);
      if (o.output === "json") return out(JSON.stringify(list, null, 2));
      const rows = list.versions.map((v) => [v.version, v.provisioner, sourceWords(v), v.sha256?.slice(0, 12) ?? "-", String(v.usedBy.length), `${when(v.createdAt)} UTC`, v.registeredBy]);
      for (const line of table(rows, ["VERSION", "PROVISIONER", "SOURCE", "SHA-256", "COMPONENTS", "REGISTERED", "BY"])) out(line);
    });

  mod
    .command("register")
    .description("Register a module version from a git repository or a .tar.gz/.zip archive: the server fetches it once and keeps it, unchangeable, with its SHA-256")
    .usage("--name <name> --version <version> --kind <kind> --provisioner <provisioner> (--git <url> --ref <ref> [--path <folder>] | --archive <file>)")
    .requiredOption("--name <name>", "the module's name, e.g. team-bucket")
    .requiredOption("--version <version>", "its semantic version, e.g. 1.0.0 (a version, once registered, never changes)", semverArg)
    .requiredOption("--kind <kind>", "the catalog kind it provisions; a kind the organization does not have becomes its own, with fields from the module's variables")
    .addOption(new Option("--provisioner <provisioner>", "the engine that runs it").choices([...PROVISIONERS]).makeOptionMandatory())
    .option("--git <url>", "the repository: https://…, ssh://…, git@host:path (file:// only under folders the operator allows)")
    .option("--ref <ref>", "with --git: the branch, tag or commit")
    .option("--path <folder>", "with --git: the module's folder in the repository (default: its root)")
    .option("--archive <file>", `a .tar.gz or .zip of the module (at most ${MODULE_LIMITS.archiveBytes / 1024} KiB; a single top-level folder is stripped)`)
    .option("--title <title>", "a new kind's title")
    .option("--description <text>", "a new kind's description")
    .option("--provider <provider>", "a new kind's connection provider (default: from the module's providers: aws, gcp, azure, else local)")
    .addOption(outputOption())
    .addHelpText(
      "after",
      example(
        "planton module register --name team-bucket --version 1.0.0 --kind TeamBucket --provisioner tofu --git https://github.com/acme/modules.git --ref v1.0.0 --path bucket",
        "planton module register --name site --version 2.1.0 --kind StaticSite --provisioner builtin --archive site.tar.gz",
      ),
    )
    .action(async (o: { name: string; version: string; kind: string; provisioner: RegisterModuleRequest["provisioner"]; git?: string; ref?: string; path?: string; archive?: string; title?: string; description?: string; provider?: string; output: string }) => {
      if (!!o.git === !!o.archive) throw new Refusal("Nothing was registered: give its source, either --git <url> --ref <ref> [--path <folder>] or --archive <file>.", 2);
      if (o.git && !o.ref) throw new Refusal("Nothing was registered: --git needs --ref, the branch, tag or commit to register (e.g. --ref v1.0.0).", 2);
      if (o.archive && (o.ref || o.path)) throw new Refusal("Nothing was registered: --ref and --path go with --git; an archive is registered as it is.", 2);
      const source: RegisterModuleRequest["source"] = o.git ? { type: "git", url: o.git, ref: o.ref!, ...(o.path ? { path: o.path } : {}) } : { type: "archive", ...readArchive(o.archive!) };
      const v = await client().modules.register({
        name: o.name,
        version: o.version,
        kind: o.kind,
        provisioner: o.provisioner,
        source,
        ...(o.title ? { title: o.title } : {}),
        ...(o.description ? { description: o.description } : {}),
        ...(o.provider ? { provider: o.provider } : {}),
      });
      if (o.output === "json") return out(JSON.stringify(v, null, 2));
      out(`Registered ${c.bold(`${v.name}@${v.version}`)} for ${v.kind} (sha256 ${v.sha256}, ${v.fileCount} files).`);
      out(`Inputs: ${v.inputs.map((i) => `${i.name}${i.required ? "" : "?"}`).join(", ") || "(none)"}`);
      out(`Components of ${v.kind} that follow the latest run it from their next job; pin it with: planton infra component update <id> --module ${v.name}@${v.version}`);
    });

  mod
    .command("policy")
    .description("Set whether engineers may register modules (admins always may)")
    .requiredOption("--engineers-may-register <true|false>", "true lets engineers register; false keeps it to admins", (v) => {
      if (v !== "true" && v !== "false") throw new InvalidArgumentError(`expected true or false, got "${v}"`);
      return v === "true";
    })
    .addHelpText("after", example("planton module policy --engineers-may-register true"))
    .action(async (o: { engineersMayRegister: boolean }) => {
      const p = await client().modules.setPolicy({ engineersMayRegister: o.engineersMayRegister });
      out(p.engineersMayRegister ? "Engineers may register modules now." : "Only admins may register modules now.");
    });

  return mod;
}
