// `planton audit …`: the organization's audit record — list it with the Audit page's filters, verify
// its hash chain (or an archive file against its checkpoint), and export it as CSV or JSON.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { gunzipSync } from "node:zlib";
import { Command, InvalidArgumentError, Option } from "commander";
import type { AuditEvent, AuditFilter, AuditVerification, PlantonClient } from "../../lib/client";
import { AUDIT_GENESIS_HASH, AUDIT_RESULTS, AUDIT_TARGET_KIND_NAMES } from "../../lib/audit";
import { AUDIT_EXPORT_FORMATS, auditCsvHeader, auditCsvLine } from "../../lib/audit-export";
import { client } from "../config";
import { c, err, example, out, Refusal, table } from "../output";

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** `7d`, `24h`, `30m`, `2w` before now, or a time as given (the server checks ISO 8601). */
export function timeArg(v: string): string {
  const m = /^(\d+)([mhdw])$/.exec(v.trim());
  return m ? new Date(Date.now() - Number(m[1]) * UNITS[m[2]]).toISOString() : v;
}

function pageSize(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 200) throw new InvalidArgumentError("must be a whole number from 1 to 200");
  return n;
}

interface FilterFlags {
  actor?: string;
  action?: string;
  targetKind?: string;
  target?: string;
  component?: string;
  env?: string;
  result?: string;
  since?: string;
  from?: string;
  until?: string;
  to?: string;
  search?: string;
}

/** The filter flags every audit command takes, named as the Audit page names its filters. */
function withFilters(cmd: Command): Command {
  return cmd
    .option("--actor <who>", "who acted: an email, \"<email> (token <name>)\" or system")
    .option("--action <action>", "an action (job.approve) or a family of them (job)")
    .addOption(new Option("--target-kind <kind>", "the kind of target").choices(AUDIT_TARGET_KIND_NAMES))
    .option("--target <name>", "the target's name or id")
    .option("--component <id>", "a component's events and its jobs' events")
    .option("--env <environment>", "the environment the target lives in")
    .addOption(new Option("--result <result>", "success or failure").choices(AUDIT_RESULTS))
    .option("--since <time>", "events at or after: ISO 8601, or 30m, 24h, 7d, 2w ago", timeArg)
    .option("--from <time>", "the same as --since", timeArg)
    .option("--until <time>", "events before: ISO 8601, or 30m, 24h, 7d, 2w ago", timeArg)
    .option("--to <time>", "the same as --until", timeArg)
    .option("--search <words>", "words the summary, actor, action or target name start with");
}

const filterOf = (o: FilterFlags): AuditFilter => ({
  actor: o.actor,
  action: o.action,
  targetKind: o.targetKind as AuditFilter["targetKind"],
  target: o.target,
  component: o.component,
  environment: o.env,
  result: o.result as AuditFilter["result"],
  from: o.since ?? o.from,
  to: o.until ?? o.to,
  q: o.search,
});

const when = (at: string) => at.replace("T", " ").replace(/\.\d+Z$/, "Z");

/** Every page of the filter (or the first one only), newest first. */
async function* pages(api: PlantonClient, filter: AuditFilter, limit: number, all: boolean): AsyncGenerator<AuditEvent[]> {
  let cursor: string | undefined;
  do {
    const page = await api.audit.list({ ...filter, limit, cursor });
    yield page.events;
    cursor = page.nextCursor ?? undefined;
  } while (all && cursor);
}

const headLines = (v: AuditVerification) => [`Head: #${v.head.seq} ${v.head.hash}`, c.dim("Keep the head outside Planton: a later verify that reaches it proves nothing before it was rewritten.")];

/** `--archive FILE`: the file's SHA-256 against the checkpoint that sealed it, and its events' links from the one before to the checkpoint's hash. */
async function verifyArchive(api: PlantonClient, file: string): Promise<void> {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (e) {
    throw new Refusal(`Nothing was checked: ${file} cannot be read (${(e as NodeJS.ErrnoException).code}). Give the path of an archive file from the server's PLANTON_AUDIT_ARCHIVE_DIR.`);
  }
  const sha = createHash("sha256").update(bytes).digest("hex");
  const { checkpoints } = await api.audit.checkpoints();
  const i = checkpoints.findIndex((k) => k.archiveName === path.basename(file) || k.archiveSha256 === sha);
  if (i < 0) throw new Refusal(`${file} is not sealed by any checkpoint of this organization (SHA-256 ${sha}); it is not one of its archives, or it was changed and renamed.`);
  const k = checkpoints[i];
  if (k.archiveSha256 !== sha) throw new Refusal(`${file} was changed after it was archived: its SHA-256 is ${sha}, and checkpoint ${k.id} sealed ${k.archiveSha256}.`);
  const lines = gunzipSync(bytes).toString("utf8").split("\n").filter(Boolean);
  let last = i > 0 ? { seq: checkpoints[i - 1].throughSeq, hash: checkpoints[i - 1].throughHash } : { seq: 0, hash: AUDIT_GENESIS_HASH };
  for (const line of lines) {
    const e = JSON.parse(line) as { seq: number; prev_hash: string; hash: string };
    if (e.seq !== last.seq + 1 || e.prev_hash !== last.hash) throw new Refusal(`${file} breaks at event #${e.seq}: it does not follow #${last.seq}, though its SHA-256 is the sealed one. Report this to the console's operator.`);
    last = { seq: e.seq, hash: e.hash };
  }
  if (lines.length !== k.eventCount || last.seq !== k.throughSeq || last.hash !== k.throughHash) {
    throw new Refusal(`${file} ends at #${last.seq} after ${lines.length} events, and checkpoint ${k.id} sealed #${k.throughSeq} after ${k.eventCount}.`);
  }
  out(c.green(`${path.basename(file)} verifies: its SHA-256 is the one checkpoint ${k.id} sealed, and its ${lines.length} events (#${last.seq - lines.length + 1}–#${last.seq}) link up to the checkpoint's hash.`));
}

export function auditCommand(): Command {
  const audit = new Command("audit").description("The organization's audit record: who did what, when, with what result; tamper-evident");
  audit.addHelpText("after", example("planton audit list --action job.approve --env prod --since 7d", "planton audit verify", "planton audit export --format csv --since 30d -o audit.csv"));

  withFilters(audit.command("list"))
    .description("List audit events, newest first, filtered as the Audit page filters")
    .usage("[--actor <who>] [--action <action>] [--target-kind <kind>] [--target <name>] [--component <id>] [--env <env>] [--result <result>] [--since <time>] [--until <time>] [--search <words>] [--limit <n>] [--all] [--output table|json|csv]")
    .addOption(new Option("--limit <n>", "events per page (1–200)").argParser(pageSize).default(50))
    .option("--all", "page through every event the filter selects, not only the first page")
    .addOption(new Option("-o, --output <format>", "table, json or csv").choices(["table", "json", "csv"]).default("table"))
    .addHelpText("after", example("planton audit list --action job.approve --env prod --since 7d", "planton audit list --actor ann@acme.example --all --output csv > ann.csv"))
    .action(async (o: FilterFlags & { limit: number; all?: boolean; output: string }) => {
      const api = client();
      let n = 0;
      if (o.output === "csv") process.stdout.write(auditCsvHeader());
      if (o.output === "json") process.stdout.write("[");
      for await (const events of pages(api, filterOf(o), o.limit, !!o.all)) {
        if (o.output === "csv") for (const e of events) process.stdout.write(auditCsvLine(e));
        else if (o.output === "json") for (const e of events) process.stdout.write(`${n++ ? "," : ""}\n${JSON.stringify(e)}`);
        else if (events.length) {
          const rows = events.map((e) => [String(e.seq), when(e.at), e.actorLabel, e.action, e.targetName ?? e.targetId ?? "-", e.environment ?? "-", e.result === "failure" ? c.red(e.result) : e.result, e.summary]);
          for (const line of table(rows, n ? undefined : ["SEQ", "TIME", "ACTOR", "ACTION", "TARGET", "ENV", "RESULT", "SUMMARY"])) out(line);
          n += events.length;
        }
      }
      if (o.output === "json") process.stdout.write(n ? "\n]\n" : "]\n");
      if (o.output === "table" && !n) out("No audit events match.");
    });

  audit
    .command("verify")
    .description("Check the audit chain: every event against its hash and the one before it, from the start or the last archive checkpoint; exit 1 at the first broken link")
    .option("--archive <file>", "instead, check an archive file against the checkpoint that sealed it")
    .addOption(new Option("-o, --output <format>", "table or json").choices(["table", "json"]).default("table"))
    .addHelpText("after", example("planton audit verify", "planton audit verify --archive audit-org_01J…-000000000001-000000120000.jsonl.gz"))
    .action(async (o: { archive?: string; output: string }) => {
      const api = client();
      if (o.archive) return verifyArchive(api, o.archive);
      const v = await api.audit.verify();
      if (o.output === "json") out(JSON.stringify(v, null, 2));
      else if (v.broken) {
        err(c.red(v.broken.message));
        for (const l of headLines(v)) out(l);
      } else {
        const start = v.from.checkpoint ? `archive checkpoint ${v.from.checkpoint} (#${v.from.seq})` : "the first event";
        out(c.green(`The audit record verifies: ${v.checked} event${v.checked === 1 ? "" : "s"} checked from ${start}, each matching its hash and linked to the one before.`));
        for (const l of headLines(v)) out(l);
      }
      if (!v.ok) process.exitCode = 1;
    });

  withFilters(audit.command("export"))
    .description("Export the filtered record, oldest first, as CSV or one JSON array, streamed to a file or stdout")
    .usage("--format csv|json [filters] [-o <file>]")
    .addOption(new Option("--format <format>", "csv or json").choices(AUDIT_EXPORT_FORMATS).default("csv"))
    .option("-o, --output <file>", "write to this file (readable by you only) instead of stdout")
    .addHelpText("after", example("planton audit export --format csv --since 30d -o audit.csv", "planton audit export --format json --action job --env prod > prod-jobs.json"))
    .action(async (o: FilterFlags & { format: "csv" | "json"; output?: string }) => {
      const body = await client().audit.export(filterOf(o), o.format);
      const sink = o.output ? fs.createWriteStream(o.output, { mode: 0o600 }) : process.stdout;
      await pipeline(Readable.fromWeb(body as import("node:stream/web").ReadableStream<Uint8Array>), sink, { end: !!o.output });
      if (o.output) err(`Exported to ${o.output}.`);
    });

  return audit;
}
