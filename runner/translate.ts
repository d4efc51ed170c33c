// Turns engines' machine-readable output into progress events (lib/runner-protocol.ts).
// OpenTofu's `-json` UI lines and the builtin engine's lines share one translation; Pulumi's
// engine events have their own. Outputs events are not made here: values go to the server's
// outputs route first, which answers with `$secret/…` references (see engines/outputs.ts).
import { renderUiLine, type UiMessage } from "../engine/index";
import { RESOURCE_ACTIONS, type ResourcePayload, type SummaryOperation, type SummaryPayload } from "../lib/runner-protocol";
import type { EventDraft } from "./events";

type ResourceAction = ResourcePayload["action"];

export interface TranslateContext {
  /** The engine command this step ran, e.g. `builtin apply`, `tofu plan`. */
  command: string;
  /** What the step's summary counts, for engines whose output does not say (Pulumi). */
  operation?: SummaryOperation;
}

function action(a: unknown): ResourceAction {
  if (a === "remove") return "forget";
  if (a === "no-op" || a === "same") return "noop";
  return (RESOURCE_ACTIONS as readonly string[]).includes(a as string) ? (a as ResourceAction) : "noop";
}

function log(line: string, level?: string): EventDraft {
  return { type: "log", payload: level === "error" ? { line, stream: "stderr" } : { line } };
}

function resource(r: { addr: string; resource_type: string }, p: Omit<ResourcePayload, "address" | "type">): EventDraft {
  return { type: "resource", payload: { address: r.addr, type: r.resource_type, ...p } };
}

/** One OpenTofu-style UI line (builtin engine or `tofu … -json`) → progress events. */
export function translateUiLine(line: UiMessage, ctx: TranslateContext): EventDraft[] {
  let human: string;
  try {
    human = renderUiLine(line);
  } catch {
    human = String(line["@message"] ?? "");
  }
  const out: EventDraft[] = [log(human, line["@level"])];
  switch (line.type) {
    case "planned_change":
      out.push(
        resource(line.change.resource, {
          action: action(line.change.action),
          phase: "planned",
          message: line["@message"],
          ...(line.change.not_executed ? { notExecuted: line.change.not_executed } : {}),
        }),
      );
      break;
    case "resource_drift":
      out.push(resource(line.change.resource, { action: action(line.change.action), phase: "drift", message: line["@message"] }));
      break;
    case "apply_start":
      out.push(resource(line.hook.resource, { action: action(line.hook.action), phase: "start", message: line["@message"] }));
      break;
    case "apply_progress":
      out.push(resource(line.hook.resource, { action: action(line.hook.action), phase: "progress", message: line["@message"], elapsedSeconds: line.hook.elapsed_seconds }));
      break;
    case "apply_complete":
      out.push(resource(line.hook.resource, { action: action(line.hook.action), phase: "complete", message: line["@message"], elapsedSeconds: line.hook.elapsed_seconds }));
      break;
    case "apply_errored":
      out.push(resource(line.hook.resource, { action: action(line.hook.action), phase: "errored", message: line["@message"], elapsedSeconds: line.hook.elapsed_seconds }));
      break;
    case "refresh_start":
      out.push(resource(line.hook.resource, { action: "read", phase: "start", message: line["@message"] }));
      break;
    case "refresh_complete":
      out.push(resource(line.hook.resource, { action: "read", phase: "complete", message: line["@message"] }));
      break;
    case "change_summary": {
      const c = line.changes;
      const summary: SummaryPayload = { command: ctx.command, operation: c.operation, add: c.add, change: c.change, remove: c.remove };
      if (c.import) summary.import = c.import;
      if (c.forget) summary.forget = c.forget;
      if (c.skipped_deletes) summary.skippedDeletes = c.skipped_deletes;
      if (c.replacements?.length) summary.replacements = c.replacements;
      out.push({ type: "summary", payload: { ...summary } });
      break;
    }
    case "diagnostic": {
      const d = line.diagnostic;
      out.push({
        type: "diagnostic",
        payload: { severity: d.severity, summary: d.summary, detail: d.detail, ...(d.address ? { address: d.address } : {}), ...(d.range ? { range: d.range } : {}) },
      });
      break;
    }
    // version, log, outputs and anything newer engines add: the log line says it all.
  }
  return out;
}

/** Parses one line of `-json` output; a line that is not a UI message becomes a plain log line. */
export function translateJsonLine(text: string, ctx: TranslateContext): EventDraft[] {
  const trimmed = text.trim();
  if (!trimmed) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    return [log(text)];
  }
  if (!parsed || typeof parsed !== "object" || typeof (parsed as { type?: unknown }).type !== "string") return [log(text)];
  return translateUiLine(parsed as UiMessage, ctx);
}

// ── Pulumi engine events ──────────────────────────────────────────────────────────────────────

/** Pulumi's step ops in the builtin engine's words (engine/types.ts ChangeAction). */
export const PULUMI_OPS: Record<string, ResourceAction> = {
  create: "create",
  update: "update",
  delete: "delete",
  replace: "replace",
  "create-replacement": "replace",
  "delete-replaced": "replace",
  "discard-replaced": "replace",
  same: "noop",
  read: "read",
  "read-replacement": "read",
  refresh: "read",
  import: "import",
  "import-replacement": "import",
  discard: "forget",
  remove: "forget",
};

interface PulumiStep {
  op: string;
  urn: string;
  type?: string;
}

/** `urn:pulumi:stack::project::aws:s3/bucket:Bucket::my-bucket` → the resource's name. */
function urnName(urn: string): string {
  return urn.split("::").at(-1) ?? urn;
}

function pulumiResource(step: PulumiStep, phase: ResourcePayload["phase"], message?: string): EventDraft {
  const type = step.type ?? step.urn.split("::").at(-2) ?? "";
  return { type: "resource", payload: { address: step.urn, type, action: PULUMI_OPS[step.op] ?? "noop", phase, ...(message ? { message } : {}) } };
}

function pulumiCounts(changes: Record<string, number | undefined>): { add: number; change: number; remove: number; import?: number } {
  const n = (k: string) => changes[k] ?? 0;
  const out: { add: number; change: number; remove: number; import?: number } = {
    add: n("create") + n("replace"),
    change: n("update"),
    remove: n("delete") + n("replace"),
  };
  if (n("import")) out.import = n("import");
  return out;
}

/** One Pulumi engine event (a line of `pulumi up --json` / `--event-log`) → progress events. */
export function translatePulumiEvent(ev: Record<string, unknown>, ctx: TranslateContext): EventDraft[] {
  const preview = ctx.command.includes("preview");
  const pre = ev.resourcePreEvent as { metadata: PulumiStep; planning?: boolean } | undefined;
  if (pre) {
    const phase = preview || pre.planning ? "planned" : "start";
    const op = pre.metadata.op;
    const verb = phase === "planned" ? `${op === "same" ? "no change" : `plan to ${op}`}` : `${op === "same" ? "unchanged" : `${op}...`}`;
    return [log(`${pre.metadata.urn}: ${verb}`), pulumiResource(pre.metadata, phase)];
  }
  const outs = ev.resOutputsEvent as { metadata: PulumiStep; planning?: boolean } | undefined;
  if (outs) {
    if (preview || outs.planning) return [];
    return [log(`${urnName(outs.metadata.urn)}: ${outs.metadata.op} complete`), pulumiResource(outs.metadata, "complete")];
  }
  const failed = ev.resOpFailedEvent as { metadata: PulumiStep; status?: number } | undefined;
  if (failed) return [log(`\x1b[31m✗ ${failed.metadata.urn}: ${failed.metadata.op} failed\x1b[0m`, "error"), pulumiResource(failed.metadata, "errored")];
  const diag = ev.diagnosticEvent as { message?: string; severity?: string; urn?: string } | undefined;
  if (diag) {
    const message = (diag.message ?? "").replace(/\n$/, "");
    const severity = diag.severity === "error" ? "error" : diag.severity === "warning" ? "warning" : undefined;
    const out = [log(message, diag.severity)];
    if (severity) out.push({ type: "diagnostic", payload: { severity, summary: message.split("\n")[0] ?? "", detail: message, ...(diag.urn ? { address: diag.urn } : {}) } });
    return out;
  }
  const stdout = ev.stdoutEvent as { message?: string } | undefined;
  if (stdout) return [log((stdout.message ?? "").replace(/\n$/, ""))];
  const summary = ev.summaryEvent as { resourceChanges?: Record<string, number> } | undefined;
  if (summary) {
    const counts = pulumiCounts(summary.resourceChanges ?? {});
    const payload: SummaryPayload = { command: ctx.command, operation: ctx.operation ?? "apply", ...counts };
    return [
      log(`\x1b[1mResources: ${counts.add} to create, ${counts.change} to update, ${counts.remove} to delete\x1b[0m`),
      { type: "summary", payload: { ...payload } },
    ];
  }
  if (ev.preludeEvent) return [log(`${ctx.command}: starting`)];
  return [];
}

/** `pulumi preview --json` prints one document: steps, change summary and diagnostics. */
export function translatePulumiPreview(doc: Record<string, unknown>, ctx: TranslateContext): EventDraft[] {
  const out: EventDraft[] = [];
  for (const step of (doc.steps as PulumiStep[] | undefined) ?? []) {
    out.push(log(`${step.urn}: ${step.op === "same" ? "no change" : `plan to ${step.op}`}`), pulumiResource(step, "planned"));
  }
  for (const d of (doc.diagnostics as { message?: string; severity?: string; urn?: string }[] | undefined) ?? []) {
    out.push(...translatePulumiEvent({ diagnosticEvent: d }, ctx));
  }
  const counts = pulumiCounts((doc.changeSummary as Record<string, number> | undefined) ?? {});
  out.push(log(`\x1b[1mResources: ${counts.add} to create, ${counts.change} to update, ${counts.remove} to delete\x1b[0m`), {
    type: "summary",
    payload: { command: ctx.command, operation: "plan", ...counts } satisfies SummaryPayload,
  });
  return out;
}
