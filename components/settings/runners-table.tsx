"use client";
// The Runners list's columns: one row per runner, hosted and self-hosted, revoked ones kept for their history.
import Link from "next/link";
import { Badge } from "@/components/ui/badge";
import type { Column } from "@/components/ui/data-table";
import { RunnerActionButtons } from "./runner-actions";
import { enginesText, Labels, LastSeen, RunnerStatusBadge, type RunnerView } from "./runner-ui";

export function runnerColumns(slug: string, admin: boolean, actions: { rotate: (r: RunnerView) => void; revoke: (r: RunnerView) => void }, now: number): (Column<RunnerView> | false)[] {
  return [
    {
      id: "name",
      header: "Runner",
      className: "min-w-44 max-w-xs whitespace-normal!",
      cell: (r) => (
        <>
          <div className="flex flex-wrap items-center gap-1.5">
            <Link href={`/o/${slug}/settings/runners/${r.name}`} className="font-medium break-all text-indigo-700 hover:underline">
              {r.name}
            </Link>
            {r.isDefault && <Badge tone="indigo">default</Badge>}
          </div>
          <div className="text-xs text-slate-500">{r.kind === "hosted" ? "Planton-hosted" : "self-hosted"}</div>
          <Labels labels={r.labels} />
        </>
      ),
    },
    { id: "status", header: "Status", cell: (r) => <RunnerStatusBadge status={r.status} /> },
    { id: "lastSeen", header: "Last seen", className: "whitespace-nowrap", cell: (r) => <LastSeen at={r.lastSeenAt} now={now} /> },
    { id: "version", header: "Version", className: "min-w-24 max-w-40 whitespace-normal! break-words", cellClassName: "font-mono text-xs", cell: (r) => r.version ?? <span className="text-slate-400">—</span> },
    { id: "engines", header: "Engines", className: "min-w-32 whitespace-normal!", cell: (r) => enginesText(r.engines) ?? <span className="text-slate-400">not reported</span> },
    {
      id: "jobs",
      header: "Running",
      headerTitle: "Jobs it runs now, of how many it runs at once",
      cell: (r) => (
        <span className="tabular-nums" data-testid="runner-jobs">
          {r.running} of {r.capacity}
        </span>
      ),
    },
    {
      id: "connections",
      header: "Named by",
      headerTitle: "Connections that name this runner",
      className: "min-w-28 whitespace-normal! break-words",
      cell: (r) => (r.connections.length ? r.connections.join(", ") : <span className="text-slate-400">{r.isDefault ? "default for the rest" : "no connection"}</span>),
    },
    admin && {
      id: "actions",
      header: "Actions",
      className: "text-right",
      cell: (r) => (r.kind === "hosted" ? <span className="text-xs text-slate-400">run by Planton</span> : r.revokedAt ? <span className="text-xs text-slate-400">revoked</span> : <RunnerActionButtons runner={r} actions={actions} />),
    },
  ];
}
