"use client";
import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { History, ListOrdered } from "lucide-react";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { Button } from "@/components/ui/button";
import { Card, EmptyState, ErrorState, LoadingState } from "@/components/ui/page";
import Link from "next/link";
import { relativeTime } from "@/components/ui/time";
import { operationLabel } from "./job-ui";
import { JobsTable } from "./jobs-table";
import { RunJobButton } from "./run-job-dialog";

/** A component's Infra Jobs tab: its queue (oldest first, the order runners take them) and every job, newest first; `readOnly` for a deleted or forgotten one. */
export function ComponentJobs({ componentId, readOnly = false }: { componentId: string; readOnly?: boolean }) {
  const org = useOrg();
  const trpc = useTRPC();
  const live = (q: { state: { data?: { pages?: { jobs: { status: string }[] }[]; jobs?: { status: string }[] } } }) => {
    const d = q.state.data;
    const jobs = d?.pages ? d.pages.flatMap((p) => p.jobs) : (d?.jobs ?? []);
    return jobs.some((j) => j.status !== "completed") ? 2000 : 10000;
  };
  const queue = useQuery({ ...trpc.jobs.list.queryOptions({ org: org.slug, componentId, status: "queued", limit: 50 }), refetchInterval: live });
  const list = useInfiniteQuery({
    ...trpc.jobs.list.infiniteQueryOptions({ org: org.slug, componentId, limit: 20 }, { getNextPageParam: (last) => last.nextCursor ?? undefined }),
    refetchInterval: live,
  });
  const jobs = list.data?.pages.flatMap((p) => p.jobs) ?? [];
  const queued = [...(queue.data?.jobs ?? [])].reverse();

  return (
    <div className="space-y-6">
      <Card title="Queue" description="Jobs of this component run one at a time, oldest first." actions={readOnly ? undefined : <RunJobButton componentId={componentId} />}>
        {queue.isPending ? (
          <LoadingState label="Loading the queue…" />
        ) : queue.error ? (
          <ErrorState error={queue.error} retry={() => queue.refetch()} />
        ) : queued.length === 0 ? (
          <p className="flex items-center gap-2 text-sm text-slate-500">
            <ListOrdered className="h-4 w-4" /> Nothing is queued.
          </p>
        ) : (
          <ol className="space-y-1 text-sm" aria-label="Queue">
            {queued.map((j, i) => (
              <li key={j.id} className="flex items-center gap-3">
                <span className="w-6 text-right font-mono text-slate-400">{i + 1}.</span>
                <Link href={`/o/${org.slug}/jobs/${j.id}`} className="font-mono text-xs text-indigo-700 hover:underline">
                  {j.id}
                </Link>
                <span>{operationLabel(j.operation)}</span>
                <span className="text-slate-500">
                  by {j.createdByLabel}, {relativeTime(j.createdAt)}
                </span>
              </li>
            ))}
          </ol>
        )}
      </Card>
      <Card title="Infra Jobs" description="Every job that ran for this component, newest first.">
        <div className="-mx-5 -my-4">
          {list.isPending ? (
            <LoadingState label="Loading jobs…" />
          ) : list.error ? (
            <ErrorState error={list.error} retry={() => list.refetch()} />
          ) : jobs.length === 0 ? (
            <EmptyState icon={<History className="h-8 w-8" />} title="No Infra Jobs yet" description="Jobs that refresh, preview, update or destroy this component will be listed here with their results." />
          ) : (
            <>
              <JobsTable jobs={jobs} label="Component jobs" showComponent={false} />
              {list.hasNextPage && (
                <div className="flex justify-end border-t border-slate-100 px-5 py-3">
                  <Button variant="secondary" size="sm" busy={list.isFetchingNextPage} onClick={() => list.fetchNextPage()}>
                    Load more
                  </Button>
                </div>
              )}
            </>
          )}
        </div>
      </Card>
    </div>
  );
}
