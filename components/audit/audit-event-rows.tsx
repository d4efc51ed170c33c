"use client";
import { Fragment, useState } from "react";
import Link from "next/link";
import { ChevronRight, CircleAlert, CircleCheck } from "lucide-react";
import { AUDIT_TARGET_KINDS } from "@/lib/audit";
import type { AuditEventView } from "@/lib/api/audit-schemas";
import { Badge, envTone } from "@/components/ui/badge";
import { cn } from "@/components/ui/cn";
import { Table, Tbody, Td, Th } from "@/components/ui/table";
import { relativeTime } from "@/components/ui/time";
import { AuditChanges } from "./audit-changes";

const kindTitle = (kind: string) => (AUDIT_TARGET_KINDS as Record<string, { title: string }>)[kind]?.title ?? kind;

/** Audit events as a timeline, newest first; each row opens to its full detail. The Audit page and the Activity tabs show these. */
export function AuditEventRows({ events, label, now, openSeq }: { events: AuditEventView[]; label: string; now: number; openSeq?: number }) {
  const [open, setOpen] = useState<Set<string>>(() => new Set(events.filter((e) => e.seq === openSeq).map((e) => e.id)));
  const toggle = (id: string) =>
    setOpen((s) => {
      const next = new Set(s);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  return (
    <Table label={label}>
      <thead className="bg-slate-50">
        <tr>
          <Th className="w-8 pr-0">
            <span className="sr-only">Details</span>
          </Th>
          <Th>When</Th>
          <Th>Actor</Th>
          <Th>Event</Th>
          <Th>Target</Th>
          <Th>Environment</Th>
          <Th>Result</Th>
        </tr>
      </thead>
      <Tbody>
        {events.map((e) => {
          const expanded = open.has(e.id);
          const failed = e.result === "failure";
          return (
            <Fragment key={e.id}>
              <tr data-audit-seq={e.seq} data-action={e.action} data-result={e.result} className={cn("align-top", failed ? "bg-rose-50/70 hover:bg-rose-50" : "hover:bg-slate-50", expanded && "bg-slate-50")}>
                <Td className="pr-0">
                  <button
                    type="button"
                    aria-expanded={expanded}
                    aria-controls={`audit-detail-${e.id}`}
                    aria-label={`Details of event ${e.seq}: ${e.actorLabel} ${e.actionTitle}`}
                    onClick={() => toggle(e.id)}
                    className="rounded p-0.5 text-slate-500 hover:bg-slate-200 hover:text-slate-800"
                  >
                    <ChevronRight className={cn("h-4 w-4 transition-transform", expanded && "rotate-90")} />
                  </button>
                </Td>
                <Td className="text-slate-600">
                  <time dateTime={new Date(e.at).toISOString()} title={new Date(e.at).toLocaleString()}>
                    {relativeTime(e.at, now)}
                  </time>
                </Td>
                <Td className="max-w-56 truncate font-medium text-slate-800" title={e.actorLabel}>
                  {e.actorLabel}
                </Td>
                <Td className="min-w-60 whitespace-normal!">
                  <div className="font-medium text-slate-900">{e.actionTitle[0].toUpperCase() + e.actionTitle.slice(1)}</div>
                  <div className="line-clamp-2 text-xs text-slate-500 [overflow-wrap:anywhere]" title={e.summary}>
                    {e.summary}
                  </div>
                </Td>
                <Td className="max-w-48">
                  <TargetCell event={e} />
                </Td>
                <Td>{e.environment ? <Badge tone={envTone(e.environment)}>{e.environment}</Badge> : <span className="text-slate-400">—</span>}</Td>
                <Td>
                  {failed ? (
                    <Badge tone="red">
                      <CircleAlert className="h-3 w-3" /> Failure
                    </Badge>
                  ) : (
                    <span className="inline-flex items-center gap-1 text-xs text-emerald-700">
                      <CircleCheck className="h-3.5 w-3.5" /> Success
                    </span>
                  )}
                </Td>
              </tr>
              {expanded && (
                <tr className="bg-slate-50">
                  <td colSpan={7} id={`audit-detail-${e.id}`} className="px-4 pb-4 pt-1">
                    <AuditEventDetail event={e} />
                  </td>
                </tr>
              )}
            </Fragment>
          );
        })}
      </Tbody>
    </Table>
  );
}

function TargetCell({ event: e }: { event: AuditEventView }) {
  const name = e.targetName ?? e.targetId;
  return (
    <div className="min-w-0">
      {name ? (
        e.targetHref ? (
          <Link href={e.targetHref} className="block truncate font-medium text-indigo-700 hover:underline" title={e.targetId ?? undefined}>
            {name}
          </Link>
        ) : (
          <span className="block truncate font-medium text-slate-800" title={e.targetId ?? undefined}>
            {name}
          </span>
        )
      ) : (
        <span className="text-slate-400">—</span>
      )}
      <div className="truncate text-xs text-slate-500" title={e.targetId ?? undefined}>
        {kindTitle(e.targetKind)}
        {e.targetName && e.targetId && e.targetId !== e.targetName && <span className="font-mono"> · {e.targetId.slice(0, 4)}…{e.targetId.slice(-6)}</span>}
      </div>
    </div>
  );
}

/** Everything the record keeps of one event. */
function AuditEventDetail({ event: e }: { event: AuditEventView }) {
  const rows: [string, React.ReactNode][] = [
    ["When", <>{new Date(e.at).toLocaleString()} <span className="font-mono text-xs text-slate-500">({new Date(e.at).toISOString()})</span></>],
    ["Actor", <>{e.actorLabel}{e.actorId && <span className="ml-1 font-mono text-xs text-slate-500">{e.actorId}</span>}</>],
    ["Action", <code key="a" className="text-xs">{e.action}</code>],
    [
      "Target",
      <>
        {kindTitle(e.targetKind)} {e.targetName && <span className="font-medium">{e.targetName}</span>} {e.targetId && <span className="font-mono text-xs text-slate-500">{e.targetId}</span>}
        {e.targetHref && (
          <Link href={e.targetHref} className="ml-2 font-medium text-indigo-700 hover:underline">
            Open the {kindTitle(e.targetKind).toLowerCase()}
          </Link>
        )}
      </>,
    ],
    ["Client address", e.clientAddress ?? <span className="text-slate-400">not recorded (the server or a runner acted)</span>],
    ["Sequence", <span key="s" className="font-mono">#{e.seq}</span>],
    ["Hash", <code key="h" className="break-all text-xs">{e.hash}</code>],
    ["Previous hash", <code key="p" className="break-all text-xs">{e.prevHash}</code>],
  ];
  return (
    <div className="grid gap-4 rounded-md bg-white p-4 ring-1 ring-slate-200 lg:grid-cols-2" role="region" aria-label={`Event ${e.seq}`}>
      <div>
        <p className="mb-3 text-sm text-slate-800 [overflow-wrap:anywhere]">{e.summary}</p>
        <dl className="space-y-1.5 text-sm">
          {rows.map(([k, v]) => (
            <div key={k} className="grid grid-cols-[8rem_1fr] gap-2">
              <dt className="text-slate-500">{k}</dt>
              <dd className="min-w-0 text-slate-800">{v}</dd>
            </div>
          ))}
        </dl>
      </div>
      <div className="min-w-0">
        <h4 className="mb-2 text-xs font-semibold uppercase tracking-wide text-slate-500">Changes</h4>
        <AuditChanges changes={e.changes} />
      </div>
    </div>
  );
}
