"use client";
// One runner (Settings → Runners → a runner): its state, engines and labels, the connections that
// name it, and the jobs it runs now and ran lately, each linking to its job page.
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { ChevronRight } from "lucide-react";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { Badge } from "@/components/ui/badge";
import { Card, ErrorState, LoadingState, PageHeader } from "@/components/ui/page";
import { RunnerActionButtons, useRunnerActions } from "./runner-actions";
import { enginesText, Labels, LastSeen, RUNNER_REFRESH_MS, RunnerJobsTable, RunnerStatusBadge } from "./runner-ui";

export function RunnerDetailPage({ name }: { name: string }) {
  const org = useOrg();
  const trpc = useTRPC();
  // Status is time-based and nothing pushes it: refetched on an interval (see RUNNER_REFRESH_MS).
  const runner = useQuery({ ...trpc.runners.get.queryOptions({ org: org.slug, runner: name }), refetchInterval: RUNNER_REFRESH_MS });
  const actions = useRunnerActions();
  const r = runner.data;
  if (runner.isPending) return <LoadingState label="Loading runner…" />;
  if (runner.error || !r) return <ErrorState error={runner.error} retry={() => runner.refetch()} />;

  return (
    <>
      <PageHeader
        breadcrumb={
          <span className="flex items-center gap-1">
            <Link href={`/o/${org.slug}/settings/runners`} className="hover:underline">
              Runners
            </Link>
            <ChevronRight className="h-3.5 w-3.5" />
            <span>{r.name}</span>
          </span>
        }
        title={
          <span className="flex flex-wrap items-center gap-3">
            {r.name}
            <RunnerStatusBadge status={r.status} />
            {r.isDefault && <Badge tone="indigo">default runner</Badge>}
          </span>
        }
        description={r.kind === "hosted" ? "A Planton-hosted runner: it takes the jobs no connection or default names a runner for." : "A runner of your own."}
        actions={<RunnerActionButtons runner={r} actions={actions} size="md" />}
      />
      <dl className="mb-6 grid grid-cols-2 gap-x-6 gap-y-3 rounded-lg bg-white px-5 py-4 text-sm shadow-sm ring-1 ring-slate-200 sm:grid-cols-4">
        <Meta label="Last seen">
          <LastSeen at={r.lastSeenAt} now={runner.dataUpdatedAt} />
        </Meta>
        <Meta label="Version">{r.version ?? "—"}</Meta>
        <Meta label="Running">
          {r.running} of {r.capacity} jobs
        </Meta>
        <Meta label="Registered">
          <span title={new Date(r.createdAt).toLocaleString()}>{new Date(r.createdAt).toLocaleDateString()}</span>
        </Meta>
        <Meta label="Engines">{enginesText(r.engines) ?? "not reported yet"}</Meta>
        <Meta label="Named by">{r.connections.length ? r.connections.join(", ") : r.isDefault ? "no connection; the default for the rest" : "no connection"}</Meta>
        <Meta label="Labels">{Object.keys(r.labels).length ? <Labels labels={r.labels} /> : "none"}</Meta>
        {r.revokedAt && <Meta label="Revoked">{new Date(r.revokedAt).toLocaleString()}</Meta>}
      </dl>
      <div className="space-y-6">
        <Card flush title="Running jobs">
          <RunnerJobsTable label="Running jobs" jobs={r.runningJobs} empty="It runs no jobs now" />
        </Card>
        <Card flush title="Recent jobs" description="The last jobs it claimed in this organization.">
          <RunnerJobsTable label="Recent jobs" jobs={r.recentJobs} empty="It has run no jobs of this organization" />
        </Card>
      </div>
      {actions.dialogs}
    </>
  );
}

function Meta({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div className="min-w-0">
      <dt className="text-xs text-slate-500">{label}</dt>
      <dd className="mt-0.5 break-words text-slate-900">{children}</dd>
    </div>
  );
}
