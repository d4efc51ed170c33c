"use client";
import { useEffect, useRef, useState, type ReactNode } from "react";
import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { ScrollText } from "lucide-react";
import type { AuditFilter } from "@/lib/api/audit-schemas";
import { encodeAuditCursor } from "@/lib/audit";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { Button } from "@/components/ui/button";
import { EmptyState, ErrorState, LoadingState } from "@/components/ui/page";
import { AuditEventRows } from "./audit-event-rows";

const PAGE = 50;
/** How often the newest page is asked again, so new events appear without a reload. */
const LIVE_MS = 5000;

/**
 * The events of a filter, newest first: the newest page polled every few seconds (live), older pages
 * fetched by keyset cursor as the end of the list scrolls into view or "Load more" is pressed.
 * With `fromSeq` the list starts at that event (opened) and is not live.
 */
export function AuditTimeline({ filter, label, empty, fromSeq }: { filter: AuditFilter; label: string; empty: { title: string; description?: ReactNode; action?: ReactNode }; fromSeq?: number }) {
  const org = useOrg();
  const trpc = useTRPC();
  const input = { org: org.slug, ...filter, limit: PAGE };
  const start = fromSeq ? encodeAuditCursor(fromSeq + 1) : undefined;
  const head = useQuery({ ...trpc.audit.list.queryOptions(input), refetchInterval: LIVE_MS, enabled: !start });
  const list = useInfiniteQuery(trpc.audit.list.infiniteQueryOptions(input, { initialCursor: start, getNextPageParam: (last) => last.nextCursor ?? undefined }));
  const now = useMinuteClock();

  const newest = (!start && head.data?.events) || [];
  const older = list.data?.pages.flatMap((p) => p.events) ?? [];
  const oldestLive = newest.at(-1)?.seq ?? Infinity;
  // More new events arrived between two polls than the newest page holds: start the older pages again below it.
  const gap = newest.length === PAGE && older.length > 0 && oldestLive > older[0].seq;
  const { refetch } = list;
  useEffect(() => {
    if (gap) void refetch();
  }, [gap, refetch]);
  const events = [...newest, ...older.filter((e) => e.seq < oldestLive)];

  const sentinel = useRef<HTMLDivElement>(null);
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = list;
  useEffect(() => {
    const el = sentinel.current;
    if (!el || !hasNextPage) return;
    const io = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting) && !isFetchingNextPage) void fetchNextPage();
    }, { rootMargin: "400px" });
    io.observe(el);
    return () => io.disconnect();
  }, [hasNextPage, isFetchingNextPage, fetchNextPage]);

  if ((!start && head.isPending) || list.isPending) return <LoadingState label="Loading events…" />;
  if ((!start && head.error) || list.error) return <ErrorState error={list.error ?? head.error} retry={() => void Promise.all([head.refetch(), list.refetch()])} />;
  if (events.length === 0) return <EmptyState icon={<ScrollText className="h-8 w-8" />} {...empty} />;
  return (
    <>
      <AuditEventRows events={events} label={label} now={now} openSeq={fromSeq} />
      <div ref={sentinel} className="flex items-center justify-between border-t border-slate-100 px-5 py-3 text-sm text-slate-500">
        <span aria-live="polite">
          {events.length} {events.length === 1 ? "event" : "events"} shown{start ? ` from event #${fromSeq}` : " · new events appear as they happen"}
        </span>
        {list.hasNextPage ? (
          <Button variant="secondary" size="sm" busy={list.isFetchingNextPage} onClick={() => void list.fetchNextPage()}>
            Load more
          </Button>
        ) : (
          <span>That is all of them.</span>
        )}
      </div>
    </>
  );
}

/** "3 minutes ago" stays true without re-rendering a long list every second. */
function useMinuteClock(): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 30_000);
    return () => clearInterval(t);
  }, []);
  return now;
}
