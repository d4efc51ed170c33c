"use client";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { Hand, History } from "lucide-react";
import { JOB_RESULTS, JOB_STATUSES, OPERATIONS } from "@/lib/runner-protocol";
import { COMPONENT_STATUS_WORDS, isGone } from "@/lib/component-lifecycle";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { Button } from "@/components/ui/button";
import { controlClass } from "@/components/ui/field";
import { Card, EmptyState, ErrorState, LoadingState, PageHeader } from "@/components/ui/page";
import { operationLabel, STATUS_LABEL } from "./job-ui";
import { JobsTable } from "./jobs-table";
import { RunJobButton } from "./run-job-dialog";

const FILTERS = ["status", "result", "operation", "environment", "componentId", "createdBy"] as const;
type Filter = (typeof FILTERS)[number];

export function JobsList() {
  const org = useOrg();
  const trpc = useTRPC();
  const router = useRouter();
  const pathname = usePathname();
  const params = useSearchParams();
  const f = Object.fromEntries(FILTERS.map((k) => [k, params.get(k) ?? ""])) as Record<Filter, string>;
  const filtered = FILTERS.some((k) => f[k]);
  const envs = useQuery(trpc.environments.list.queryOptions({ org: org.slug }));
  // Deleted components too: their jobs stay, and can be looked for.
  const components = useQuery(trpc.components.list.queryOptions({ org: org.slug, show: "all" }));
  const starters = useQuery(trpc.jobs.starters.queryOptions({ org: org.slug }));
  const awaiting = useQuery({ ...trpc.jobs.awaitingApprovalCount.queryOptions({ org: org.slug }), refetchInterval: 5000 });
  const input = {
    org: org.slug,
    limit: 25,
    status: (f.status || undefined) as (typeof JOB_STATUSES)[number] | undefined,
    result: (f.result || undefined) as (typeof JOB_RESULTS)[number] | undefined,
    operation: (f.operation || undefined) as (typeof OPERATIONS)[number] | undefined,
    environment: f.environment || undefined,
    componentId: f.componentId || undefined,
    createdBy: f.createdBy || undefined,
  };
  const list = useInfiniteQuery({
    ...trpc.jobs.list.infiniteQueryOptions(input, { getNextPageParam: (last) => last.nextCursor ?? undefined }),
    // Live rows: poll quickly while anything shown is still moving, slowly otherwise (new jobs appear).
    refetchInterval: (q) => (q.state.data?.pages.some((p) => p.jobs.some((j) => j.status !== "completed")) ? 2000 : 10000),
  });
  const jobs = list.data?.pages.flatMap((p) => p.jobs) ?? [];

  const setFilter = (key: Filter, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value);
    else next.delete(key);
    router.replace(`${pathname}?${next}`);
  };
  const select = (key: Filter, label: string, options: { value: string; label: string }[], width = "w-36") => (
    <div className={width}>
      <label htmlFor={`filter-${key}`} className="mb-1 block text-xs font-medium text-slate-500">
        {label}
      </label>
      <select id={`filter-${key}`} value={f[key]} onChange={(e) => setFilter(key, e.target.value)} className={controlClass()}>
        <option value="">All</option>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );

  return (
    <>
      <PageHeader title="Infra Jobs" description="Every job of the organization, newest first. Rows update as jobs move." actions={<RunJobButton />} />
      {!!awaiting.data && f.status !== "awaiting_approval" && (
        <div role="status" className="mb-4 flex items-center gap-3 rounded-lg bg-amber-50 px-4 py-3 text-sm text-amber-900 ring-1 ring-amber-200">
          <Hand className="h-4 w-4" />
          <span className="flex-1">
            {awaiting.data} {awaiting.data === 1 ? "job is" : "jobs are"} waiting for an approval.
          </span>
          <button type="button" className="font-medium underline" onClick={() => setFilter("status", "awaiting_approval")}>
            Show {awaiting.data === 1 ? "it" : "them"}
          </button>
        </div>
      )}
      <Card>
        <div className="-mx-5 -mt-4 flex flex-wrap items-end gap-3 border-b border-slate-100 px-5 py-3">
          {select("status", "Status", JOB_STATUSES.map((s) => ({ value: s, label: STATUS_LABEL[s] })), "w-40")}
          {select("result", "Result", JOB_RESULTS.filter((r) => r !== "tbd").map((r) => ({ value: r, label: r })), "w-28")}
          {select("operation", "Operation", OPERATIONS.map((o) => ({ value: o, label: operationLabel(o) })), "w-32")}
          {select("environment", "Environment", (envs.data ?? []).map((e) => ({ value: e.name, label: e.name })), "w-28")}
          {select("componentId", "Component", (components.data?.components ?? []).map((c) => ({ value: c.id, label: `${c.name} (${c.environment}${isGone(c.status) ? `, ${COMPONENT_STATUS_WORDS[c.status].label.toLowerCase()}` : ""})` })), "w-40")}
          {select("createdBy", "Started by", (starters.data ?? []).map((s) => ({ value: s, label: s })), "w-40")}
          {filtered && (
            <button type="button" onClick={() => router.replace(pathname)} className="pb-2 text-sm text-indigo-600 hover:underline">
              Clear filters
            </button>
          )}
        </div>
        <div className="-mx-5 -mb-4">
          {list.isPending ? (
            <LoadingState label="Loading jobs…" />
          ) : list.error ? (
            <ErrorState error={list.error} retry={() => list.refetch()} />
          ) : jobs.length === 0 ? (
            <EmptyState
              icon={<History className="h-8 w-8" />}
              title={filtered ? "No jobs match these filters" : "No Infra Jobs yet"}
              description={filtered ? "Try other filters, or clear them." : "A job refreshes, previews, updates or destroys a component. Run one from here or from a component's page."}
              action={!filtered ? <RunJobButton variant="secondary" /> : undefined}
            />
          ) : (
            <>
              <JobsTable jobs={jobs} label="Infra Jobs" />
              <div className="flex items-center justify-between border-t border-slate-100 px-5 py-3 text-sm text-slate-500">
                <span>
                  {jobs.length} {jobs.length === 1 ? "job" : "jobs"} shown
                </span>
                {list.hasNextPage ? (
                  <Button variant="secondary" size="sm" busy={list.isFetchingNextPage} onClick={() => list.fetchNextPage()}>
                    Load more
                  </Button>
                ) : (
                  <span>That is all of them.</span>
                )}
              </div>
            </>
          )}
        </div>
      </Card>
    </>
  );
}
