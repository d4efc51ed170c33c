"use client";
import { Fragment, useState } from "react";
import dynamic from "next/dynamic";
import { AlertTriangle, ChevronRight } from "lucide-react";
import { NOT_EXECUTED } from "@/lib/delete-protection";
import type { JobResult, JobStatus, ProgressEvent, ResourcePayload, StepName, SummaryPayload } from "@/lib/runner-protocol";
import { SENSITIVE_VALUE } from "@/lib/secrets";
import { DELETES_NOT_COMPUTED, summaryWords } from "@/lib/summary-words";
import { cn } from "@/components/ui/cn";
import { LoadingState } from "@/components/ui/page";
import type { JobEventStore } from "./job-events";
import { actionLook, elapsed, StepIndicator, stepState } from "./job-ui";

const LogPane = dynamic(() => import("./log-pane").then((m) => m.LogPane), { ssr: false, loading: () => <LoadingState label="Opening the log…" /> });

const STEP_LABEL: Record<StepName, string> = { init: "Initialize", refresh: "Refresh", preview: "Preview", apply: "Apply", destroy: "Destroy", import: "Import" };

export interface StepView {
  id: string;
  step: StepName;
  ordinal: number;
  status: JobStatus;
  result: JobResult;
  reason: string | null;
  startedAt: Date | string | null;
  endedAt: Date | string | null;
  /** A preview's saved plan, with the counts the runner reported. */
  plan?: { summary?: Record<string, unknown> | null } | null;
}

/** The job's steps, each with its live indicator and duration; a step expands to its log, resource changes and summary. */
export function JobSteps({ steps, jobStatus, store, now, defaultOpen }: { steps: StepView[]; jobStatus: JobStatus; store: JobEventStore; now: number; defaultOpen?: string }) {
  const [open, setOpen] = useState<Set<string>>(() => new Set(defaultOpen ? [defaultOpen] : []));
  const firstQueued = steps.find((s) => s.status === "queued");
  const toggle = (step: string) =>
    setOpen((o) => {
      const n = new Set(o);
      if (n.has(step)) n.delete(step);
      else n.add(step);
      return n;
    });
  return (
    <ol className="divide-y divide-slate-100" aria-label="Steps">
      {steps.map((s) => {
        const state = stepState(s, jobStatus === "awaiting_approval" && s === firstQueued);
        const expanded = open.has(s.step);
        const resources = resourceRows(store.events, s.step);
        const counts = countByAction(resources);
        return (
          <li key={s.id} data-step={s.step} data-state={state}>
            <button
              type="button"
              aria-expanded={expanded}
              aria-controls={`step-${s.step}-body`}
              onClick={() => toggle(s.step)}
              className="flex w-full items-center gap-3 px-5 py-3 text-left hover:bg-slate-50 focus-visible:bg-slate-50"
            >
              <ChevronRight className={cn("h-4 w-4 text-slate-400 transition-transform", expanded && "rotate-90")} aria-hidden />
              <StepIndicator state={state} />
              <span className="w-28 font-medium text-slate-900">{STEP_LABEL[s.step]}</span>
              <span className={cn("w-36 text-sm", stateColor(state))} data-testid={`step-state-${s.step}`}>
                {state[0].toUpperCase() + state.slice(1)}
              </span>
              <span className="flex flex-1 flex-wrap gap-2 text-xs">
                {Object.entries(counts.executes).map(([a, n]) => (
                  <span key={a} className={cn("font-mono", actionLook(a).className)}>
                    {actionLook(a).symbol}
                    {n}
                  </span>
                ))}
                {Object.entries(counts.held).map(([a, n]) => (
                  <span key={`held-${a}`} className="font-mono text-amber-700" title={`${n} ${a} ${NOT_EXECUTED}: delete protection`}>
                    {actionLook(a).symbol}
                    {n} {NOT_EXECUTED}
                  </span>
                ))}
                {s.reason && state !== "succeeded" && <span className="truncate text-slate-500">{s.reason}</span>}
              </span>
              <span className="w-20 text-right text-sm tabular-nums text-slate-500">{elapsed(s.startedAt, s.endedAt, now) ?? ""}</span>
            </button>
            {expanded && (
              <div id={`step-${s.step}-body`} className="space-y-4 bg-slate-50/60 px-5 pb-5 pt-1">
                <LogPane store={store} step={s.step} live={s.status === "running" || s.status === "queued"} />
                <StepSummaries events={store.events} step={s.step} />
                {s.plan?.summary?.deleteOperationsComputed === false && (
                  <p className="flex gap-1.5 text-sm text-amber-800" data-testid="deletes-not-computed">
                    <AlertTriangle className="mt-0.5 h-4 w-4 shrink-0" /> {DELETES_NOT_COMPUTED}
                  </p>
                )}
                <ResourceChanges rows={resources} counts={counts} />
              </div>
            )}
          </li>
        );
      })}
    </ol>
  );
}

function stateColor(state: string) {
  return state === "running" ? "text-sky-700" : state === "succeeded" ? "text-emerald-700" : state === "failed" ? "text-rose-700" : state === "awaiting approval" ? "text-amber-700" : "text-slate-500";
}

interface ResourceRow {
  address: string;
  type: string;
  action: ResourcePayload["action"];
  phase: ResourcePayload["phase"];
  message?: string;
  before?: unknown;
  after?: unknown;
  /** Planned but never carried out (delete protection): the reason and the fix. */
  notExecuted?: ResourcePayload["notExecuted"];
}

/** One row per address: its latest action and phase, and the before/after it was planned with. */
export function resourceRows(events: ProgressEvent[], step: string): ResourceRow[] {
  const rows = new Map<string, ResourceRow>();
  for (const e of events) {
    if (e.operation !== step || e.type !== "resource") continue;
    const p = e.payload as unknown as ResourcePayload;
    const prev = rows.get(p.address);
    rows.set(p.address, {
      address: p.address,
      type: p.type,
      action: p.action === "noop" && prev ? prev.action : p.action,
      phase: p.phase,
      message: p.message?.replace(`${p.address}: `, "") ?? prev?.message,
      before: p.before !== undefined ? p.before : prev?.before,
      after: p.after !== undefined ? p.after : prev?.after,
      notExecuted: p.notExecuted ?? prev?.notExecuted,
    });
  }
  return [...rows.values()];
}

/** Counts by action of what runs, and apart from it what delete protection leaves out. */
function countByAction(rows: ResourceRow[]) {
  const counts: { executes: Record<string, number>; held: Record<string, number> } = { executes: {}, held: {} };
  for (const r of rows) {
    if (r.action === "noop" || r.action === "read") continue;
    const into = r.notExecuted ? counts.held : counts.executes;
    into[r.action] = (into[r.action] ?? 0) + 1;
  }
  return counts;
}

const PHASE_LABEL: Record<ResourcePayload["phase"], string> = { planned: "planned", drift: "drift found", start: "in progress", progress: "in progress", complete: "done", errored: "errored" };

function ResourceChanges({ rows, counts }: { rows: ResourceRow[]; counts: ReturnType<typeof countByAction> }) {
  const [diff, setDiff] = useState<string | null>(null);
  if (!rows.length) return null;
  return (
    <section aria-label="Resource changes" className="rounded-md bg-white ring-1 ring-slate-200">
      <header className="flex items-center justify-between border-b border-slate-100 px-3 py-2 text-sm">
        <span className="font-medium text-slate-800">Resource changes</span>
        <span className="flex gap-3 text-xs text-slate-600">
          {Object.entries(counts.executes).map(([a, n]) => (
            <span key={a}>
              <span className={cn("font-mono font-semibold", actionLook(a).className)}>{actionLook(a).symbol}</span> {n} {a}
            </span>
          ))}
          {Object.entries(counts.held).map(([a, n]) => (
            <span key={`held-${a}`} className="text-amber-800">
              <span className="font-mono font-semibold">{actionLook(a).symbol}</span> {n} {a} {NOT_EXECUTED}
            </span>
          ))}
          {!Object.keys(counts.executes).length && !Object.keys(counts.held).length && "no changes"}
        </span>
      </header>
      <table className="w-full text-sm">
        <thead className="text-left text-xs uppercase tracking-wide text-slate-500">
          <tr>
            <th className="w-16 px-3 py-1.5">Action</th>
            <th className="px-3 py-1.5">Address</th>
            <th className="px-3 py-1.5">Type</th>
            <th className="px-3 py-1.5">Status</th>
            <th className="px-3 py-1.5">
              <span className="sr-only">Diff</span>
            </th>
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {rows.map((r) => (
            <Fragment key={r.address}>
              <tr data-address={r.address} data-executes={!r.notExecuted}>
                <td className={cn("px-3 py-1.5 font-mono font-semibold", actionLook(r.action).className)} title={r.action}>
                  {actionLook(r.action).symbol}
                </td>
                <td className="px-3 py-1.5 font-mono text-xs">{r.address}</td>
                <td className="px-3 py-1.5 font-mono text-xs text-slate-600">{r.type}</td>
                <td className={cn("px-3 py-1.5 text-xs", r.phase === "errored" ? "text-rose-700" : r.phase === "complete" ? "text-emerald-700" : "text-slate-600")}>
                  {PHASE_LABEL[r.phase]}
                  {r.message && <span className="text-slate-500"> · {r.message}</span>}
                  {r.notExecuted && <span className="mt-0.5 block text-amber-800">{r.notExecuted.message}</span>}
                </td>
                <td className="px-3 py-1.5 text-right">
                  {(r.before !== undefined || r.after !== undefined) && (
                    <button type="button" aria-expanded={diff === r.address} onClick={() => setDiff(diff === r.address ? null : r.address)} className="text-xs font-medium text-indigo-600 hover:underline">
                      {diff === r.address ? "Hide diff" : "Diff"}
                    </button>
                  )}
                </td>
              </tr>
              {diff === r.address && (
                <tr>
                  <td colSpan={5} className="bg-slate-50 px-3 py-2">
                    <Diff before={r.before} after={r.after} />
                  </td>
                </tr>
              )}
            </Fragment>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** Attribute by attribute: removed in red, added in green, unchanged in grey. */
function Diff({ before, after }: { before: unknown; after: unknown }) {
  const b = (before && typeof before === "object" ? before : {}) as Record<string, unknown>;
  const a = (after && typeof after === "object" ? after : {}) as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(b), ...Object.keys(a)])].sort();
  const show = (v: unknown) => (v === undefined ? "" : v === SENSITIVE_VALUE ? SENSITIVE_VALUE : JSON.stringify(v));
  return (
    <pre className="overflow-x-auto font-mono text-xs leading-5" aria-label="Before and after">
      {keys.map((k) => {
        const bv = show(b[k]);
        const av = show(a[k]);
        if (bv === av) return <div key={k} className="text-slate-500">{`  ${k} = ${av}`}</div>;
        return (
          <Fragment key={k}>
            {k in b && <div className="bg-rose-50 text-rose-800">{`- ${k} = ${bv}`}</div>}
            {k in a && <div className="bg-emerald-50 text-emerald-800">{`+ ${k} = ${av}`}</div>}
          </Fragment>
        );
      })}
      {!keys.length && <span className="text-slate-500">{before == null ? "(created from nothing)" : "(removed)"}</span>}
    </pre>
  );
}

function StepSummaries({ events, step }: { events: ProgressEvent[]; step: string }) {
  const items = events.filter((e) => e.operation === step && (e.type === "summary" || e.type === "diagnostic"));
  if (!items.length) return null;
  return (
    <ul className="space-y-1 text-sm">
      {items.map((e) => {
        if (e.type === "summary") {
          const s = e.payload as unknown as SummaryPayload;
          return (
            <li key={e.seq} className="text-slate-700">
              <span className="font-mono font-medium">{s.command}</span>: {summaryWords(s)}
            </li>
          );
        }
        const d = e.payload as { severity?: string; summary?: string; detail?: string };
        return (
          <li key={e.seq} className={d.severity === "error" ? "text-rose-700" : "text-amber-800"}>
            <span className="font-medium">{d.summary}</span>
            {d.detail && <span className="whitespace-pre-wrap"> — {d.detail}</span>}
          </li>
        );
      })}
    </ul>
  );
}
