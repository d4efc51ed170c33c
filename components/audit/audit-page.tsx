"use client";
import { useEffect, useRef, useState } from "react";
import { usePathname, useSearchParams } from "next/navigation";
import { useQuery } from "@tanstack/react-query";
import { Download, X } from "lucide-react";
import { AUDIT_RESULTS, AUDIT_TARGET_KIND_NAMES, AUDIT_TARGET_KINDS, auditActionTitle } from "@/lib/audit";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { controlClass } from "@/components/ui/field";
import { Card, PageHeader } from "@/components/ui/page";
import { AUDIT_RANGES, auditActionFamilies, auditApiFilter, auditFiltered, auditQueryString, readAuditUrl, type AuditUrlKey } from "./audit-filter";
import { AuditTimeline } from "./audit-timeline";
import { AuditVerifyButton, AuditVerifyResult, useAuditVerify } from "./audit-verify";

const FAMILIES = auditActionFamilies();
const capital = (s: string) => s[0].toUpperCase() + s.slice(1);

export function AuditPage() {
  const org = useOrg();
  const trpc = useTRPC();
  const pathname = usePathname();
  const params = useSearchParams();
  const f = readAuditUrl(params);
  const anchor = useRangeAnchor(f.range);
  const filter = auditApiFilter(f, anchor);
  const filtered = auditFiltered(f);
  // "Show event #n" (from verify): the list starts at that event instead of the newest.
  const fromSeq = Number(params.get("seq")) || undefined;
  const envs = useQuery(trpc.environments.list.queryOptions({ org: org.slug }));
  const verify = useAuditVerify();

  // The browser's own history (which Next's useSearchParams follows): it changes at once, so filters
  // chosen in quick succession build on each other, and no server round trip is made for a filter.
  const go = (qs: string) => window.history.replaceState(null, "", qs ? `${pathname}?${qs}` : pathname);
  const set = (changes: Partial<Record<AuditUrlKey | "seq", string>>) => {
    const next = new URLSearchParams(window.location.search);
    for (const [k, v] of Object.entries(changes)) {
      if (v) next.set(k, v);
      else next.delete(k);
    }
    go(next.toString());
  };
  const clear = () => go(fromSeq ? `seq=${fromSeq}` : "");
  const exportHref = (format: "csv" | "json") => `/api/v1/audit/export?${auditQueryString({ format, org: org.slug, ...filter })}`;

  const select = (key: AuditUrlKey, label: string, options: React.ReactNode) => (
    <div>
      <label htmlFor={`audit-${key}`} className="mb-1 block text-xs font-medium text-slate-500">
        {label}
      </label>
      <select id={`audit-${key}`} value={f[key] ?? ""} onChange={(e) => set({ [key]: e.target.value })} className={controlClass()}>
        {options}
      </select>
    </div>
  );

  return (
    <>
      <PageHeader
        title="Audit"
        description="Who did what, when, from where, with what result: every change in the organization, newest first. The record is append-only and chained; verify proves nothing was edited."
        actions={
          <>
            <AuditVerifyButton verify={verify} />
            <a href={exportHref("csv")} download className="inline-flex items-center gap-1.5 rounded-md bg-white px-3.5 py-2 text-sm font-medium text-slate-800 shadow-sm ring-1 ring-inset ring-slate-300 hover:bg-slate-50">
              <Download className="h-4 w-4" /> Export CSV
            </a>
            <a href={exportHref("json")} download className="inline-flex items-center gap-1.5 rounded-md bg-white px-3.5 py-2 text-sm font-medium text-slate-800 shadow-sm ring-1 ring-inset ring-slate-300 hover:bg-slate-50">
              <Download className="h-4 w-4" /> Export JSON
            </a>
          </>
        }
      />
      <AuditVerifyResult verify={verify} />
      <Card>
        <div role="search" aria-label="Filter events" className="-mx-5 -mt-4 grid grid-cols-2 items-end gap-3 border-b border-slate-100 px-5 py-3 md:grid-cols-4 lg:grid-cols-6">
          <div className="col-span-2">
            <DebouncedInput id="audit-q" label="Search" placeholder="Words in the summary, actor, target…" value={f.q ?? ""} onCommit={(q) => set({ q })} type="search" />
          </div>
          <div>
            <DebouncedInput id="audit-actor" label="Actor" placeholder="an email, a token, system" value={f.actor ?? ""} onCommit={(actor) => set({ actor })} />
          </div>
          {select(
            "action",
            "Action",
            <>
              <option value="">All</option>
              {FAMILIES.map((fam) => (
                <optgroup key={fam.family} label={fam.label}>
                  <option value={fam.family}>Any {fam.label.toLowerCase()} action</option>
                  {fam.actions.map((a) => (
                    <option key={a} value={a}>
                      {capital(auditActionTitle(a))}
                    </option>
                  ))}
                </optgroup>
              ))}
            </>,
          )}
          {select(
            "targetKind",
            "Target kind",
            <>
              <option value="">All</option>
              {AUDIT_TARGET_KIND_NAMES.map((k) => (
                <option key={k} value={k}>
                  {AUDIT_TARGET_KINDS[k].title}
                </option>
              ))}
            </>,
          )}
          <div>
            <DebouncedInput id="audit-target" label="Target name" placeholder="name or id" value={f.target ?? ""} onCommit={(target) => set({ target })} />
          </div>
          {select(
            "environment",
            "Environment",
            <>
              <option value="">All</option>
              {(envs.data ?? []).map((e) => (
                <option key={e.name} value={e.name}>
                  {e.name}
                </option>
              ))}
              {f.environment && !envs.data?.some((e) => e.name === f.environment) && <option value={f.environment}>{f.environment}</option>}
            </>,
          )}
          {select(
            "result",
            "Result",
            <>
              <option value="">All</option>
              {AUDIT_RESULTS.map((r) => (
                <option key={r} value={r}>
                  {capital(r)}
                </option>
              ))}
            </>,
          )}
          {select(
            "range",
            "Time",
            <>
              <option value="">Any time</option>
              {Object.entries(AUDIT_RANGES).map(([k, r]) => (
                <option key={k} value={k}>
                  {r.label}
                </option>
              ))}
              <option value="custom">Custom…</option>
            </>,
          )}
          {f.range === "custom" && (
            <>
              <DateTimeInput id="audit-from" label="From" value={f.from} onChange={(from) => set({ from })} />
              <DateTimeInput id="audit-to" label="To" value={f.to} onChange={(to) => set({ to })} />
            </>
          )}
          {filtered && (
            <button type="button" onClick={clear} className="pb-2 text-sm text-indigo-600 hover:underline">
              Clear filters
            </button>
          )}
        </div>
        {fromSeq && (
          <div className="-mx-5 flex items-center gap-2 border-b border-slate-100 bg-amber-50 px-5 py-2 text-sm text-amber-900">
            From event #{fromSeq} down, not live.
            <button type="button" onClick={() => set({ seq: "" })} className="font-medium underline">
              Show the newest
            </button>
          </div>
        )}
        {f.component && (
          <div className="-mx-5 flex items-center gap-2 border-b border-slate-100 px-5 py-2 text-sm text-slate-600">
            Only component <span className="font-mono text-xs">{f.component}</span> and its jobs
            <button type="button" aria-label="Show every component" onClick={() => set({ component: "" })} className="rounded p-0.5 hover:bg-slate-100">
              <X className="h-3.5 w-3.5" />
            </button>
          </div>
        )}
        <div className="-mx-5 -mb-4">
          <AuditTimeline
            key={fromSeq ?? "newest"}
            filter={filter}
            fromSeq={fromSeq}
            label="Audit events"
            empty={
              filtered
                ? {
                    title: "No events match these filters",
                    description: "Try other filters, a longer time range, or clear them.",
                    action: (
                      <button type="button" onClick={clear} className="text-sm font-medium text-indigo-600 hover:underline">
                        Clear filters
                      </button>
                    ),
                  }
                : { title: "No events yet", description: "Every change anyone makes in the organization is recorded here." }
            }
          />
        </div>
      </Card>
    </>
  );
}

/** When a preset range was chosen (or the page opened): "last 7 days" counts back from here. */
function useRangeAnchor(range: string | undefined): number {
  const [anchor, setAnchor] = useState(() => Date.now());
  useEffect(() => setAnchor(Date.now()), [range]);
  return anchor;
}

/** A text filter that reaches the URL (and the query) once typing pauses. */
function DebouncedInput({ id, label, value, onCommit, placeholder, type = "text" }: { id: string; label: string; value: string; onCommit: (v: string) => void; placeholder?: string; type?: string }) {
  const [text, setText] = useState(value);
  const commit = useRef(onCommit);
  commit.current = onCommit;
  useEffect(() => setText(value), [value]);
  useEffect(() => {
    if (text.trim() === value) return;
    const t = setTimeout(() => commit.current(text.trim()), 350);
    return () => clearTimeout(t);
  }, [text, value]);
  return (
    <>
      <label htmlFor={id} className="mb-1 block text-xs font-medium text-slate-500">
        {label}
      </label>
      <input id={id} type={type} value={text} placeholder={placeholder} onChange={(e) => setText(e.target.value)} className={controlClass()} />
    </>
  );
}

/** A local date and time, kept in the URL as an ISO instant so a shared link means the same moment everywhere. */
function DateTimeInput({ id, label, value, onChange }: { id: string; label: string; value: string | undefined; onChange: (iso: string) => void }) {
  const d = value ? new Date(value) : null;
  const local = d && !Number.isNaN(d.getTime()) ? new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16) : "";
  return (
    <div>
      <label htmlFor={id} className="mb-1 block text-xs font-medium text-slate-500">
        {label}
      </label>
      <input id={id} type="datetime-local" value={local} onChange={(e) => onChange(e.target.value ? new Date(e.target.value).toISOString() : "")} className={controlClass()} />
    </div>
  );
}
