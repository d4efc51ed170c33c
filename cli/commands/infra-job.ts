// `planton infra job …` (short form `planton infra ij …`): the command surface of spec/infra-jobs.md.
import { Command } from "commander";
import type { CreatedJob, InfraJob, PlanReview, PlantonClient } from "../../lib/client";
import { isOperation, OPERATIONS, unknownOperationMessage } from "../../lib/runner-protocol";
import { NOT_EXECUTED, notExecutedWords } from "../../lib/delete-protection";
import { client } from "../config";
import { followJob, printStackDiff, type ShowOptions } from "../follow";
import { actionColor, c, duration, example, out, Refusal, table } from "../output";
import { glyphOf } from "../../lib/display";

export interface RunFlags extends ShowOptions {
  tail?: boolean;
  versionMessage?: string;
}


const PAUSE_NOTE =
  "\nWith --tail, a job that pauses for approval is reported with the command that resumes it, and the CLI keeps following: approve it from the console or another terminal and the apply streams here. Ctrl-C stops following; the job keeps waiting.";

/** --tail, --show-stack-summary, --show-stack-diff, --show-outputs, --version-message on create, resume and rerun. */
export function withRunFlags(cmd: Command): Command {
  return cmd
    .option("-t, --tail", "follow the job's progress events until it completes")
    .option("--show-stack-summary", "display the resource summary at completion", true)
    .option("--no-show-stack-summary", "leave out the resource summary")
    .option("--show-stack-diff", "display the before/after of each changed resource", false)
    .option("--show-outputs", "display the outputs at completion; secrets as their $secret/… reference", true)
    .option("--no-show-outputs", "leave out the outputs")
    .option("-m, --version-message <message>", "a description for the job, like a commit message");
}

/** Exit status: 0 when the job succeeded (or is still going without --tail), 1 when it failed or was cancelled. */
export function exitFor(job: Pick<InfraJob, "status" | "result">): void {
  if (job.status === "completed" && job.result !== "succeeded") process.exitCode = 1;
}

export async function afterStart(api: PlantonClient, job: CreatedJob, flags: RunFlags, verb: string): Promise<void> {
  out(`${verb} Infra Job ${c.bold(job.id)} (${job.operation}) for component ${job.componentId}: ${job.status}${job.status === "completed" ? `/${job.result}` : ""}`);
  if (job.status === "completed" && job.result === "failed") {
    // Preflight failed: nothing ran. Say what is missing.
    if (job.reason) out(c.red(job.reason));
    for (const check of job.preflight?.checks ?? []) {
      out(`  ${check.passed ? c.green("✓") : c.red("✗")} ${check.essential}: ${check.resolvedTo ?? "not resolved"}`);
      // The reason already quotes the failing checks' words; print them under the check only when it does not.
      for (const e of check.errors) if (!job.reason?.includes(e)) out(`      ${e}`);
    }
    process.exitCode = 1;
    return;
  }
  if (!flags.tail) {
    out(`Follow it: planton infra job stream-progress-events ${job.id}`);
    return;
  }
  exitFor(await followJob(api, job.id, flags));
}

/** "2 will not be executed (delete protection is on): 1 delete, 1 replace (local_file.a, local_file.b)". */
function notExecutedLine(plan: PlanReview): string {
  const held = plan.operations.filter((o) => !o.executes).map((o) => o.address);
  return `${plan.deletesNotExecuted} will not be executed (delete protection is on): ${notExecutedWords(plan.counts.notExecuted)} (${held.join(", ")}); a destroy job is the way to delete`;
}

function printPlanCounts(plan: PlanReview): void {
  const counts = Object.entries(plan.counts.byAction);
  out(`Plan of job ${plan.jobId}: sha256 ${c.bold(plan.checksum)} (${plan.verification === "verified" ? c.green("verified") : c.red("checksum mismatch")})`);
  out(`  Changes: ${!plan.changesListed ? c.yellow("not listed (see below)") : counts.length ? counts.map(([a, n]) => `${n} to ${a}`).join(", ") : "none"}`);
  if (plan.deletesNotExecuted) out(c.yellow(`  ${notExecutedLine(plan)}`));
  if (plan.destroy) out("  This is a destroy: it deletes everything, whatever the delete protection.");
  // The review's notes say why counts may not be the whole story (deletes not computed, changes not listed).
  for (const note of plan.notes) out(c.yellow(`  ${note}`));
}

export function infraJobCommand(): Command {
  const job = new Command("job").alias("ij").description("Create, follow and steer Infra Jobs (short form: planton infra ij)");
  job.addHelpText("after", example("planton infra job create cmp_01J… --operation update --tail", "planton infra ij logs job_01J…"));

  withRunFlags(
    job
      .command("create")
      .description("Create an Infra Job for an Infra Component")
      .argument("<infra-component-id>", "the Infra Component to run the job for")
      .option("--operation <op>", OPERATIONS.join(", "), "preview")
      .option("--address <address>", "import: the resource's address in the module (e.g. aws_s3_bucket.site)")
      .option("--id <provider-id>", "import: the provider's id of the existing object"),
  )
    .addHelpText("after", example("planton infra job create cmp_01J… --operation update --tail -m \"raise the quota\"", "planton infra job create cmp_01J… --operation import --address local_file.readme --id docs/readme.txt") + PAUSE_NOTE)
    .action(async (componentId: string, o: RunFlags & { operation: string; address?: string; id?: string }) => {
      // Refused here with the server's words, so a typo is caught even when the server is out of reach.
      if (!isOperation(o.operation)) throw new Refusal(unknownOperationMessage(o.operation));
      const api = client();
      const importTarget = o.address || o.id ? { address: o.address ?? "", id: o.id ?? "" } : undefined;
      const created = await api.jobs.create(componentId, { operation: o.operation, versionMessage: o.versionMessage ?? "", ...(importTarget ? { import: importTarget } : {}) });
      await afterStart(api, created, o, "Created");
    });

  job
    .command("list")
    .description("List the Infra Jobs of an Infra Component, newest first")
    .argument("<infra-component-id>", "the Infra Component whose jobs to list")
    .option("--limit <n>", "how many jobs to show", (v) => Number(v), 20)
    .option("--json", "print the jobs as JSON")
    .addHelpText("after", example("planton infra job list cmp_01J…", "planton infra job list cmp_01J… --limit 5 --json"))
    .action(async (componentId: string, o: { limit: number; json?: boolean }) => {
      const { jobs } = await client().jobs.list(componentId, { limit: o.limit });
      if (o.json) return out(JSON.stringify(jobs, null, 2));
      if (!jobs.length) return out(`Component ${componentId} has no Infra Jobs yet. Create one: planton infra job create ${componentId}`);
      const rows = jobs.map((j) => [j.id, j.operation, j.status, j.result, new Date(j.createdAt).toISOString().replace("T", " ").slice(0, 19), duration(j.startedAt ?? j.createdAt, j.completedAt), j.createdByLabel, j.versionMessage]);
      for (const line of table(rows, ["ID", "OPERATION", "STATUS", "RESULT", "CREATED (UTC)", "TOOK", "STARTED BY", "MESSAGE"])) out(line);
    });

  job
    .command("stream-progress-events")
    .alias("logs")
    .description("Stream a job's progress events: operation transitions, resource changes and logs (alias: logs)")
    .argument("<infra-job-id>", "the Infra Job to follow")
    .option("--show-stack-summary", "display the resource summary at completion", true)
    .option("--no-show-stack-summary", "leave out the resource summary")
    .option("--show-stack-diff", "display the before/after of each changed resource", false)
    .option("--show-outputs", "display the outputs at completion", true)
    .option("--no-show-outputs", "leave out the outputs")
    .addHelpText("after", example("planton infra job stream-progress-events job_01J…", "planton infra job logs job_01J… --no-show-outputs") + "\nA finished job's whole log is printed at once; a running one is followed until it completes." + PAUSE_NOTE)
    .action(async (jobId: string, o: ShowOptions) => {
      exitFor(await followJob(client(), jobId, o));
    });

  job
    .command("cancel")
    .description("Cancel a job: the in-flight operation finishes, the rest are skipped")
    .argument("<infra-job-id>", "the Infra Job to cancel")
    .addHelpText("after", example("planton infra job cancel job_01J…"))
    .action(async (jobId: string) => {
      const row = await client().jobs.cancel(jobId);
      if (row.status === "completed") out(`Cancelled Infra Job ${row.id}: nothing more runs.`);
      else out(`Asked Infra Job ${row.id} to cancel: its in-flight operation finishes first (to leave no resource half-changed), then the rest are cancelled. Follow it: planton infra job logs ${row.id}`);
    });

  withRunFlags(
    job
      .command("resume")
      .description("Resume (approve) a paused job: shows its plan's counts and checksum, and approves exactly that plan; -m records why on the approval")
      .argument("<infra-job-id>", "the paused Infra Job to resume"),
  )
    .addHelpText("after", example("planton infra job resume job_01J… --tail", 'planton infra job resume job_01J… -m "reviewed with the DBA"'))
    .action(async (jobId: string, o: RunFlags) => {
      const api = client();
      const current = await api.jobs.get(jobId);
      // Refuse before showing a plan as if approving it.
      if (!current.actions.approve.allowed) throw new Refusal(`Nothing was approved: ${current.actions.approve.why}.`);
      // A manual-start pause has no plan yet: it is approved without a checksum.
      const plan = current.actions.approve.gate === "plan" ? await api.jobs.getPlan(jobId) : null;
      if (plan) {
        printPlanCounts(plan);
        if (o.showStackDiff) await printStackDiff(api, jobId);
      }
      const { eventSeq } = current;
      const { job: row } = await api.jobs.resume(jobId, { ...(plan ? { expectedChecksum: plan.checksum } : {}), ...(o.versionMessage ? { message: o.versionMessage } : {}) });
      out(`Resumed Infra Job ${c.bold(row.id)}${plan ? ` with plan sha256 ${plan.checksum}` : ""}: ${row.status}`);
      if (!o.tail) return out(`Follow it: planton infra job stream-progress-events ${row.id}`);
      // Follow from the approval on: what ran before it was reviewed already.
      exitFor(await followJob(api, row.id, { ...o, showStackDiff: false }, { after: eventSeq }));
    });

  withRunFlags(
    job
      .command("rerun")
      .description("Re-run a completed or failed job: a new job, same component and operation, fresh preflight")
      .argument("<infra-job-id>", "the completed Infra Job to re-run"),
  )
    .addHelpText("after", example("planton infra job rerun job_01J… --tail"))
    .action(async (jobId: string, o: RunFlags) => {
      const api = client();
      const created = await api.jobs.rerun(jobId, o.versionMessage !== undefined ? { versionMessage: o.versionMessage } : {});
      await afterStart(api, created, o, `Re-ran ${jobId} as`);
    });

  job
    .command("preflight-checks")
    .description("Check the four essentials (IaC module, provider credentials, state backend, flow control) for a catalog kind")
    .usage("--catalog-kind <kind> [--env <environment>] [options]")
    .requiredOption("--catalog-kind <kind>", "the catalog kind, e.g. StaticSite")
    .option("--env <environment>", "the environment to check (default: every environment of the organization)")
    .option("--json", "print the reports as JSON")
    .addHelpText("after", example("planton infra job preflight-checks --catalog-kind StaticSite --env prod") + "\nExit status is 1 when an essential cannot be resolved in a checked environment.")
    .action(async (o: { catalogKind: string; env?: string; json?: boolean }) => {
      const result = await client().preflight({ kind: o.catalogKind, environment: o.env });
      if (o.json) out(JSON.stringify(result, null, 2));
      else
        for (const r of result.reports) {
          out(c.bold(`Preflight of ${result.kind} in ${r.environment}: ${r.passed ? c.green("passed") : c.red("failed")}`));
          for (const check of r.checks) {
            out(`  ${check.passed ? c.green("✓") : c.red("✗")} ${check.essential.padEnd(12)} ${check.resolvedTo ?? "not resolved"}`);
            for (const e of check.errors) out(`      ${e}`);
          }
        }
      if (result.reports.some((r) => !r.passed)) process.exitCode = 1;
    });

  job
    .command("iac-input")
    .description("Print the IaC input a job ran with: module, variables (secrets as references), backend, policy")
    .argument("<infra-job-id>", "the Infra Job whose input to print")
    .addHelpText("after", example("planton infra job iac-input job_01J…", "planton infra job iac-input job_01J… > input.json"))
    .action(async (jobId: string) => {
      out(JSON.stringify(await client().jobs.getIacInput(jobId), null, 2));
    });

  job
    .command("download-log")
    .description("Save a finished job's archived log (job.log: every log line and status change), checked against its SHA-256")
    .argument("<infra-job-id>", "the Infra Job whose log to save")
    .option("-o, --output <file>", "where to save it (default: <infra-job-id>.log; - for standard output)")
    .addHelpText("after", example("planton infra job download-log job_01J…", "planton infra job download-log job_01J… -o - | grep stderr"))
    .action(async (jobId: string, o: { output?: string }) => {
      const api = client();
      const j = await api.jobs.get(jobId);
      const log = j.artifacts.find((a) => a.kind === "log");
      if (!log) {
        throw new Refusal(
          j.status === "completed"
            ? `Nothing was saved: job ${jobId}'s log is being archived (within seconds of its end). Run this again shortly, or read it now with planton infra job logs ${jobId}.`
            : `Nothing was saved: job ${jobId} is ${j.status}, and its log is archived when it ends. Follow it meanwhile with planton infra job logs ${jobId}.`,
        );
      }
      const bytes = await api.jobs.getArtifact(jobId, log.id);
      if (o.output === "-") return void process.stdout.write(bytes);
      const file = o.output ?? `${jobId}.log`;
      const { writeFile } = await import("node:fs/promises");
      await writeFile(file, bytes, { flag: "wx" }).catch((e: NodeJS.ErrnoException) => {
        throw new Refusal(e.code === "EEXIST" ? `Nothing was saved: ${file} exists. Name another file with --output, or remove it first.` : `Nothing was saved: ${file} cannot be written (${e.code}).`);
      });
      out(`Saved ${file}: ${log.size} bytes, sha256 ${log.sha256} (verified against the console's Digest)`);
    });

  job
    .command("plan")
    .description("Show the review document of a job's saved plan: checksum, state identity, counts, deletes and every operation in order")
    .argument("<infra-job-id>", "the Infra Job whose plan to show")
    .option("--json", "print the review document as JSON")
    .option("--show-stack-diff", "also display the before/after of each change", false)
    .addHelpText("after", example("planton infra job plan job_01J…", "planton infra job plan job_01J… --json"))
    .action(async (jobId: string, o: { json?: boolean; showStackDiff?: boolean }) => {
      const api = client();
      const plan = await api.jobs.getPlan(jobId);
      if (o.json) return out(JSON.stringify(plan, null, 2));
      out(c.bold(`Plan of Infra Job ${plan.jobId}`));
      out(`  Checksum:  sha256 ${plan.checksum} — ${plan.verification === "verified" ? c.green("verified") : c.red("MISMATCH: do not approve")}`);
      out(`  State:     lineage ${plan.state.lineage ?? "(none yet)"}, serial ${plan.state.serial ?? "(none yet)"}`);
      if (plan.state.providerSchemaHash) out(`  Providers: schemas sha256 ${plan.state.providerSchemaHash} (the apply refuses the plan on an engine whose differ)`);
      const byAction = Object.entries(plan.counts.byAction);
      out(`  Changes:   ${!plan.changesListed ? c.yellow("not listed (see the note below)") : byAction.length ? byAction.map(([a, n]) => `${a} ${n}`).join(", ") : "none"}`);
      for (const [kind, counts] of Object.entries(plan.counts.byKind)) out(`             ${kind}: ${Object.entries(counts).map(([a, n]) => `${a} ${n}`).join(", ")}`);
      out(
        plan.deleteOperationsComputed
          ? "  Deletes:   computed"
          : c.yellow("  Deletes:   NOT computed — the plan could not enumerate what exists (for example, refresh was skipped), so zero deletes does not mean none are needed"),
      );
      if (plan.destroy) out("  Destroy:   this plan deletes everything; delete protection never holds a destroy back");
      if (plan.deletesNotExecuted) out(c.yellow(`  Skipped:   ${notExecutedLine(plan)}`));
      for (const r of plan.deletesInsideReplacements) {
        out(r.executes ? `  Replace:   ${r.address} is deleted, then created again` : c.yellow(`  Replace:   ${r.address} would be deleted, then created again ${NOT_EXECUTED}`));
      }
      for (const note of plan.notes) out(c.yellow(`  Note:      ${note}`));
      out(c.bold("Operations, in order:"));
      if (!plan.changesListed) out(c.yellow("  Not listed: see the note above."));
      else if (!plan.operations.length) out("  No changes.");
      for (const op of plan.operations) {
        out(`  ${actionColor(op.action)(`${glyphOf(op.action)} ${op.address}`)} (${op.action})${op.executes ? "" : c.yellow(` ${NOT_EXECUTED}`)}`);
        if (op.notExecuted) out(c.dim(`      ${op.notExecuted.message}`));
      }
      if (o.showStackDiff) await printStackDiff(api, jobId);
    });

  for (const sub of job.commands) sub.showHelpAfterError();
  return job;
}

/** Unknown refusals never escape as a stack trace. */
export { Refusal };
