// Following a job: operation transitions and resource changes as they happen, then a summary that
// names each operation by the engine command that ran it (`builtin apply`, `tofu apply`, `pulumi up`).
import type { InfraJob, PlantonClient, ProgressEvent } from "../lib/client";
import type { SummaryPayload } from "../lib/runner-protocol";
import { summaryWords } from "../lib/summary-words";
import { NOT_EXECUTED } from "../lib/delete-protection";
import { SENSITIVE_VALUE } from "../lib/secrets";
import { actionColor, c, duration, out, plain } from "./output";
import { glyphOf } from "../lib/display";

export interface ShowOptions {
  showStackSummary: boolean;
  showStackDiff: boolean;
  showOutputs: boolean;
}

type Summary = SummaryPayload;

const STATUS_WORD: Record<string, (s: string) => string> = {
  succeeded: c.green,
  failed: c.red,
  cancelled: c.yellow,
  skipped: c.dim,
};

/** What a followed job has already said: a failure's reason is printed once, not at every level that repeats it. */
export class Said {
  private seen: string[] = [];
  add(...texts: (string | undefined)[]): void {
    for (const t of texts) if (t) this.seen.push(t);
  }
  /** The reason, or nothing when an earlier line already said it. */
  fresh(reason: unknown): string | undefined {
    if (typeof reason !== "string" || !reason) return undefined;
    if (this.seen.some((t) => reason.includes(t))) return undefined;
    this.seen.push(reason);
    return reason;
  }
}

/** Prints one job's progress from `after` until it completes; answers the completed job. */
export async function followJob(api: PlantonClient, jobId: string, show: ShowOptions, opts: { after?: number } = {}): Promise<InfraJob> {
  const summaries = new Map<string, Summary>();
  const changed = new Map<string, { action: string; phase: string; operation: string | null }>();
  // Planned changes the plan marks not executed (delete protection), by address.
  const held = new Map<string, string>();
  const noteHeld = (e: ProgressEvent) => {
    const p = e.payload as { address?: string; action?: string; phase?: string; notExecuted?: unknown };
    if (e.type === "resource" && p.phase === "planned" && p.notExecuted) held.set(String(p.address), String(p.action));
  };
  let outputs: Record<string, { value: unknown; sensitive: boolean }> | null = null;
  let diffShown = false;
  const said = new Said();

  for await (const e of api.jobs.streamEvents(jobId, { after: opts.after })) {
    printEvent(e, said);
    noteHeld(e);
    if (e.type === "summary" && e.operation) summaries.set(e.operation, e.payload as unknown as Summary);
    if (e.type === "outputs") outputs = (e.payload as { outputs: typeof outputs }).outputs;
    if (e.type === "resource") {
      const p = e.payload as { address: string; action: string; phase: string };
      if (p.action !== "read" && p.action !== "noop" && (p.phase === "complete" || p.phase === "errored")) changed.set(p.address, { action: p.action, phase: p.phase, operation: e.operation });
    }
    if (e.type === "job_status" && e.payload.status === "awaiting_approval") {
      if (show.showStackDiff && !diffShown) diffShown = await printStackDiff(api, jobId);
      out(
        c.yellow(
          `⏸ Job ${jobId} is awaiting approval. Review its plan (planton infra job plan ${jobId}), then resume it (planton infra job resume ${jobId}) or cancel it (planton infra job cancel ${jobId}). Still following; Ctrl-C stops following, the job keeps waiting.`,
        ),
      );
    }
  }

  const job = await api.jobs.get(jobId);
  outputs ??= job.outputs;
  // Following from the middle (after a resume): the earlier operations' summaries are in the backlog.
  for (let seq = 0; seq < (opts.after ?? 0); ) {
    const page = await api.jobs.events(jobId, seq, 1000);
    if (!page.events.length) break;
    for (const e of page.events) {
      if (e.seq > (opts.after ?? 0)) continue;
      noteHeld(e);
      if (e.type === "summary" && e.operation && !summaries.has(e.operation)) summaries.set(e.operation, e.payload as unknown as Summary);
    }
    seq = page.events[page.events.length - 1].seq;
  }
  out();
  const result = (STATUS_WORD[job.result] ?? ((s: string) => s))(job.result);
  out(c.bold(`Job ${job.id} ${job.status === "completed" ? "completed" : job.status}: ${result}`) + c.dim(`  (${job.operation} of ${job.componentName} in ${job.environment}${job.completedAt ? `, ${duration(job.createdAt, job.completedAt)}` : ""})`));
  const reason = said.fresh(job.reason);
  if (reason) out(`  ${reason}`);
  out(c.bold("Operations:"));
  const rows = job.steps.map((s) => {
    const sum = summaries.get(s.step);
    const state = s.status === "completed" ? s.result : s.status;
    return [
      `  ${s.step}`,
      (STATUS_WORD[state] ?? ((x: string) => x))(state.padEnd(10)),
      sum ? sum.command : "",
      sum ? summaryWords(sum) : s.result === "skipped" || s.result === "cancelled" ? (s.reason ?? "") : duration(s.startedAt, s.endedAt),
    ];
  });
  const w0 = Math.max(...rows.map((r) => r[0].length));
  const w2 = Math.max(0, ...rows.map((r) => r[2].length));
  for (const r of rows) out(`${r[0].padEnd(w0)}  ${r[1]}  ${r[2].padEnd(w2)}  ${r[3]}`.trimEnd());

  if (show.showStackSummary && changed.size) {
    out(c.bold("Resources changed:"));
    const width = Math.max(...[...changed.keys()].map((a) => a.length));
    for (const [address, r] of changed) {
      const paint = r.phase === "errored" ? c.red : actionColor(r.action);
      out(`  ${paint(`${glyphOf(r.action)} ${address.padEnd(width)}`)}  ${r.phase === "errored" ? c.red(`${r.action} failed`) : pastTense(r.action)}`);
    }
  }
  if (show.showStackSummary && held.size) {
    out(c.bold("Not executed (delete protection is on; a destroy job is the way to delete):"));
    const width = Math.max(...[...held.keys()].map((a) => a.length));
    for (const [address, action] of held) out(`  ${actionColor(action)(`${glyphOf(action)} ${address.padEnd(width)}`)}  ${action} ${c.yellow(NOT_EXECUTED)}`);
  }
  if (show.showStackDiff && !diffShown) await printStackDiff(api, jobId);
  if (show.showOutputs && outputs && Object.keys(outputs).length) {
    out(c.bold("Outputs:"));
    for (const [name, o] of Object.entries(outputs)) out(`  ${name} = ${typeof o.value === "string" ? (o.sensitive ? o.value : JSON.stringify(o.value)) : JSON.stringify(o.value)}`);
  }
  return job;
}



const PAST: Record<string, string> = { create: "created", update: "updated", delete: "deleted", replace: "replaced", import: "imported", move: "moved", forget: "forgotten" };
const pastTense = (action: string) => PAST[action] ?? action;

/** One progress event as a line (or none). */
export function printEvent(e: ProgressEvent, said = new Said()): void {
  const p = e.payload as Record<string, unknown>;
  switch (e.type) {
    case "job_status": {
      if (p.status === "awaiting_approval") return; // followJob says how to resume
      const word = p.status === "completed" ? String(p.result) : String(p.status);
      const reason = said.fresh(p.reason);
      out(c.bold(`● job ${word}`) + (reason ? c.dim(`: ${reason}`) : ""));
      return;
    }
    case "operation_status": {
      const op = e.operation ?? "job";
      if (p.status === "running") return out(c.cyan(`▸ ${op} running`));
      if (p.status === "queued") return;
      const result = String(p.result);
      const mark = result === "succeeded" ? c.green("✓") : result === "failed" ? c.red("✗") : c.yellow("–");
      const reason = said.fresh(p.reason);
      return out(`${mark} ${op} ${(STATUS_WORD[result] ?? ((s: string) => s))(result)}${reason ? c.dim(`: ${reason}`) : ""}`);
    }
    case "log":
      for (const line of plain(String(p.line ?? "")).split("\n")) out(`  ${c.dim("│")} ${line}`);
      return;
    case "resource": {
      const action = String(p.action);
      if (action === "noop" || action === "read") {
        if (p.phase === "drift") out(`  ${c.yellow(`! ${p.address}`)} changed outside Planton (drift)`);
        return;
      }
      const sym = glyphOf(action);
      const paint = actionColor(action);
      if (p.phase === "complete") out(`  ${paint(`${sym} ${p.address}`)} ${pastTense(action)}${p.elapsedSeconds !== undefined ? c.dim(` (${p.elapsedSeconds}s)`) : ""}`);
      else if (p.phase === "errored") out(`  ${c.red(`✗ ${p.address}`)} ${action} failed${p.message ? `: ${p.message}` : ""}`);
      else if (p.phase === "drift") out(`  ${c.yellow(`! ${p.address}`)} drifted (${action})`);
      // planned changes: the engine's own log line already says "Plan to …".
      return;
    }
    case "diagnostic":
      said.add(p.summary as string | undefined, p.detail as string | undefined);
      return out(`  ${p.severity === "error" ? c.red("Error:") : c.yellow("Warning:")} ${p.summary}${p.detail ? `\n    ${String(p.detail).split("\n").join("\n    ")}` : ""}`);
    case "summary":
      return out(`  ${c.bold(String(p.command))}: ${summaryWords(p as unknown as Summary)}`);
    case "outputs":
      return;
  }
}

interface PlannedChange {
  address: string;
  action: string;
  not_executed?: { message: string };
  change?: { before: unknown; after: unknown; before_sensitive?: unknown; after_sensitive?: unknown };
}

/**
 * The before/after of each planned change, from the review rendition of the job's saved plan
 * (sensitive values already masked; bytes checked against their Digest). The executable plan
 * itself is encrypted and never leaves the server for a person.
 */
export async function printStackDiff(api: PlantonClient, jobId: string): Promise<boolean> {
  let review;
  try {
    review = await api.jobs.getPlan(jobId);
  } catch {
    return false;
  }
  const rendition = (await api.jobs.listArtifacts(jobId)).filter((a) => a.kind === "plan_review").at(-1);
  if (!rendition) {
    out(c.dim("Stack diff: this job's plan has no review rendition (its engine does not make one); see planton infra job plan for its operations."));
    return true;
  }
  const bytes = await api.jobs.getArtifact(jobId, rendition.id);
  let plan: { resource_changes?: PlannedChange[] };
  try {
    plan = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    out(c.dim("Stack diff: the saved plan is not a JSON plan; no diff to show."));
    return true;
  }
  const changes = (plan.resource_changes ?? []).filter((ch) => ch.action !== "noop");
  out(c.bold(`Stack diff (plan sha256 ${review.checksum}):`));
  if (!changes.length) out("  No changes.");
  for (const ch of changes) {
    out(`  ${actionColor(ch.action)(`${glyphOf(ch.action)} ${ch.address}`)} (${ch.action})${ch.not_executed ? c.yellow(` ${NOT_EXECUTED}`) : ""}`);
    for (const line of attributeDiff(ch.change)) out(`      ${line}`);
  }
  return true;
}

function attributeDiff(change: PlannedChange["change"]): string[] {
  if (!change) return [];
  const obj = (v: unknown) => (v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
  const before = obj(change.before);
  const after = obj(change.after);
  const bs = obj(change.before_sensitive);
  const as = obj(change.after_sensitive);
  const lines: string[] = [];
  for (const key of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()) {
    const b = bs[key] === true ? SENSITIVE_VALUE : JSON.stringify(before[key]);
    const a = as[key] === true ? SENSITIVE_VALUE : after[key] === undefined && change.after !== null ? "(known after apply)" : JSON.stringify(after[key]);
    if (change.after === null) lines.push(c.red(`- ${key} = ${b}`));
    else if (change.before === null) lines.push(c.green(`+ ${key} = ${a}`));
    else if (b !== a) lines.push(c.yellow(`~ ${key}: ${b} → ${a}`));
  }
  return lines;
}
