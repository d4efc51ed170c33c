"use client";
import Link from "next/link";
import { Badge, envTone } from "@/components/ui/badge";
import { cn } from "@/components/ui/cn";
import { Table, Tbody, Td, Th } from "@/components/ui/table";
import { relativeTime } from "@/components/ui/time";
import { useOrg } from "@/components/shell/org-context";
import type { JobActions } from "@/lib/job-actions";
import type { JobResult, JobStatus } from "@/lib/runner-protocol";
import { ApproveButton } from "./approve-dialog";
import { elapsed, operationLabel, ResultBadge, StatusBadge, useNow } from "./job-ui";

export interface JobSummary {
  id: string;
  operation: string;
  status: JobStatus;
  result: JobResult;
  versionMessage: string;
  componentId: string;
  componentName: string;
  environment: string;
  createdByLabel: string;
  cancelRequestedAt: Date | string | null;
  createdAt: Date | string;
  startedAt: Date | string | null;
  completedAt: Date | string | null;
  actions: JobActions;
}

/** Jobs as rows: those awaiting approval stand out and can be approved in place. */
export function JobsTable({ jobs, label, showComponent = true }: { jobs: JobSummary[]; label: string; showComponent?: boolean }) {
  const org = useOrg();
  const now = useNow(jobs.some((j) => j.status === "running"));
  return (
    <Table label={label}>
      <thead className="bg-slate-50">
        <tr>
          <Th>Job</Th>
          {showComponent && <Th>Component</Th>}
          <Th>Operation</Th>
          <Th>Status</Th>
          <Th>Started by</Th>
          <Th>Created</Th>
          <Th>Duration</Th>
        </tr>
      </thead>
      <Tbody>
        {jobs.map((j) => (
          <tr key={j.id} className={cn(j.status === "awaiting_approval" ? "bg-amber-50/70 hover:bg-amber-50" : "hover:bg-slate-50")} data-job-id={j.id} data-status={j.status}>
            <Td>
              <Link href={`/o/${org.slug}/jobs/${j.id}`} className="font-mono text-xs font-medium text-indigo-700 hover:underline" title={j.id}>
                {j.id.slice(0, 4)}…{j.id.slice(-8)}
              </Link>
              {j.versionMessage && <div className="max-w-56 truncate text-xs text-slate-500" title={j.versionMessage}>{j.versionMessage}</div>}
            </Td>
            {showComponent && (
              <Td>
                <Link href={`/o/${org.slug}/components/${j.componentId}?tab=jobs`} className="font-medium text-slate-800 hover:underline">
                  {j.componentName}
                </Link>{" "}
                <Badge tone={envTone(j.environment)}>{j.environment}</Badge>
              </Td>
            )}
            <Td>{operationLabel(j.operation)}</Td>
            <Td>
              <span className="flex items-center gap-1">
                <StatusBadge status={j.status} />
                {j.result !== "tbd" && <ResultBadge result={j.result} />}
                <ApproveButton size="sm" job={j} />
              </span>
              {j.cancelRequestedAt && j.status === "running" && <div className="mt-0.5 text-xs text-slate-500">cancelling…</div>}
            </Td>
            <Td className="max-w-32 truncate" title={j.createdByLabel}>
              {j.createdByLabel}
            </Td>
            <Td title={new Date(j.createdAt).toLocaleString()}>{relativeTime(j.createdAt, now)}</Td>
            <Td className="tabular-nums">{elapsed(j.startedAt, j.completedAt, now) ?? <span className="text-slate-400">—</span>}</Td>
          </tr>
        ))}
      </Tbody>
    </Table>
  );
}
