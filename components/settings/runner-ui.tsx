"use client";
// Small pieces the Runners list and a runner's page share: the status badge, engines and labels in
// words, the labels field's parsing, and a runner's jobs as a table linking to the job pages.
import Link from "next/link";
import type { z } from "zod";
import type { runnerJobSchema, runnerSchema } from "@/lib/api/runner-schemas";
import type { Provisioner } from "@/lib/catalog";
import { ENGINE_TITLES, type RunnerStatus } from "@/lib/runner-routing";
import type { JobResult, JobStatus } from "@/lib/runner-protocol";
import { useOrg } from "@/components/shell/org-context";
import { Badge, envTone, type BadgeTone } from "@/components/ui/badge";
import { DataTable } from "@/components/ui/data-table";
import { EmptyState } from "@/components/ui/page";
import { relativeTime } from "@/components/ui/time";
import { operationLabel, ResultBadge, StatusBadge } from "@/components/jobs/job-ui";

export type RunnerView = z.output<typeof runnerSchema>;
export type RunnerJobView = z.output<typeof runnerJobSchema>;

/**
 * A runner's status is time-based (offline once it has not been seen for a minute), and nothing
 * notifies the page when a runner claims or heartbeats, so the Runners pages refetch on this interval.
 */
export const RUNNER_REFRESH_MS = 3_000;

const STATUS_TONE: Record<RunnerStatus, BadgeTone> = { online: "green", busy: "blue", offline: "gray", revoked: "red" };

export function RunnerStatusBadge({ status }: { status: RunnerStatus }) {
  return (
    <span data-testid="runner-status">
      <Badge tone={STATUS_TONE[status]}>{status}</Badge>
    </span>
  );
}

/** "builtin engine 0.1.0, OpenTofu 1.9.0", or null when the runner has reported none. */
export function enginesText(engines: RunnerView["engines"]): string | null {
  const parts = Object.entries(engines).map(([p, v]) => `${ENGINE_TITLES[p as Provisioner] ?? p}${v ? ` ${v}` : ""}`);
  return parts.length ? parts.join(", ") : null;
}

export function LastSeen({ at, now }: { at: RunnerView["lastSeenAt"]; now?: number }) {
  if (!at) return <span className="text-slate-400">never</span>;
  return <span title={new Date(at).toLocaleString()}>{relativeTime(at, now)}</span>;
}

export function Labels({ labels }: { labels: Record<string, string> }) {
  const entries = Object.entries(labels);
  if (!entries.length) return null;
  return (
    <div className="mt-1 flex flex-wrap gap-1">
      {entries.map(([k, v]) => (
        <Badge key={k} className="font-mono">
          {k}={v}
        </Badge>
      ))}
    </div>
  );
}

/** The register dialog's labels, typed as `region=eu, gpu=yes`: the labels, or the words of what is wrong. */
export function parseLabels(text: string): { labels: Record<string, string> } | { error: string } {
  const labels: Record<string, string> = {};
  for (const part of text.split(",").map((p) => p.trim()).filter(Boolean)) {
    const m = part.match(/^([A-Za-z0-9_.\/-]+)=(.*)$/);
    if (!m) return { error: `Write each label as key=value, separated by commas (like region=eu, gpu=yes); "${part}" is not one` };
    labels[m[1]] = m[2].trim();
  }
  return { labels };
}

/** A runner's jobs, each linking to its job page. */
export function RunnerJobsTable({ label, jobs, empty }: { label: string; jobs: RunnerJobView[]; empty: string }) {
  const org = useOrg();
  if (!jobs.length) return <EmptyState title={empty} />;
  return (
    <DataTable
      label={label}
      rows={jobs}
      rowKey={(j) => j.id}
      columns={[
        {
          id: "job",
          header: "Job",
          cell: (j) => (
            <Link href={`/o/${org.slug}/jobs/${j.id}`} className="font-mono text-xs text-indigo-700 hover:underline">
              {j.id}
            </Link>
          ),
        },
        { id: "component", header: "Component", cellClassName: "font-medium text-slate-900", cell: (j) => j.component },
        { id: "environment", header: "Environment", cell: (j) => <Badge tone={envTone(j.environment)}>{j.environment}</Badge> },
        { id: "operation", header: "Operation", cell: (j) => operationLabel(j.operation) },
        { id: "status", header: "Status", cell: (j) => <StatusBadge status={j.status as JobStatus} /> },
        { id: "result", header: "Result", cell: (j) => <ResultBadge result={(j.result ?? "tbd") as JobResult} /> },
        { id: "created", header: "Created", title: (j) => new Date(j.createdAt).toLocaleString(), cell: (j) => relativeTime(j.createdAt) },
      ]}
    />
  );
}
