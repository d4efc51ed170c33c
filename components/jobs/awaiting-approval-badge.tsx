"use client";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";

/** The navigation's count of jobs waiting for an approval; polled so it stays current. */
export function AwaitingApprovalBadge() {
  const org = useOrg();
  const trpc = useTRPC();
  const count = useQuery({ ...trpc.jobs.awaitingApprovalCount.queryOptions({ org: org.slug }), refetchInterval: 5000 });
  if (!count.data) return null;
  return (
    <span className="rounded-full bg-amber-400 px-1.5 text-xs font-semibold text-slate-900" title={`${count.data} awaiting approval`} aria-label={`${count.data} awaiting approval`}>
      {count.data}
    </span>
  );
}
