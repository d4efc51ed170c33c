"use client";
import Link from "next/link";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useQuery } from "@tanstack/react-query";
import { isGone } from "@/lib/component-lifecycle";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { Badge, envTone } from "@/components/ui/badge";
import { PageHeader, QueryState } from "@/components/ui/page";
import { Tabs } from "@/components/ui/tabs";
import { ActivityTab } from "@/components/audit/activity-tab";
import { ComponentJobs } from "@/components/jobs/component-jobs";
import { RunJobButton } from "@/components/jobs/run-job-dialog";
import { ComponentBanner } from "./component-banner";
import { ConfigurationTab } from "./configuration-tab";
import { DeleteButton, ForgetButton } from "./delete-dialogs";
import { ComponentStatusBadge, type ComponentView } from "./component-ui";
import { StateTab } from "./state-tab";
import { VersionsTab } from "./versions-tab";

type Tab = "configuration" | "versions" | "jobs" | "state" | "activity";
const TABS: Tab[] = ["configuration", "versions", "jobs", "state", "activity"];

/** While a job of the component may change its status (deploying, deleting), the page keeps asking. */
export const componentRefetch = (q: { state: { data?: ComponentView } }) => {
  const c = q.state.data;
  return c && (c.status === "deleting" || (c.lastJob && c.lastJob.status !== "completed")) ? 3000 : false;
};

export function ComponentDetail({ id }: { id: string }) {
  const org = useOrg();
  const trpc = useTRPC();
  const params = useSearchParams();
  const router = useRouter();
  const pathname = usePathname();
  const asked = params.get("tab") as Tab | null;
  const tab: Tab = asked && TABS.includes(asked) ? asked : "configuration";
  const component = useQuery({ ...trpc.components.get.queryOptions({ org: org.slug, id }), refetchInterval: componentRefetch });

  return (
    <QueryState query={component} loading="Loading component…">
      {(c) => (
        <>
          <PageHeader
            breadcrumb={
              <span className="flex items-center gap-1">
                <Link href={`/o/${org.slug}/components`} className="hover:underline">
                  Infra Components
                </Link>
                {isGone(c.status) && (
                  <>
                    <span aria-hidden>/</span>
                    <Link href={`/o/${org.slug}/components?show=gone`} className="hover:underline">
                      Deleted components
                    </Link>
                  </>
                )}
              </span>
            }
            title={
              <span className="flex items-center gap-3">
                {c.name} <Badge tone={envTone(c.environment)}>{c.environment}</Badge>
                <ComponentStatusBadge status={c.status} />
              </span>
            }
            description={
              <span>
                <span className="font-mono">{c.kind}</span> · <span className="font-mono text-slate-500">{c.id}</span> · version {c.specVersion}
                {c.description && <> · {c.description}</>}
              </span>
            }
            actions={
              org.can("engineer") &&
              !isGone(c.status) && (
                <>
                  <ForgetButton component={c} />
                  {c.status !== "delete_failed" && <DeleteButton component={c} />}
                  {c.status !== "deleting" && <RunJobButton componentId={id} />}
                </>
              )
            }
          />
          <ComponentBanner component={c} />
          <Tabs<Tab>
            label="Component sections"
            value={tab}
            onChange={(t) => router.replace(`${pathname}?tab=${t}`)}
            tabs={[
              { id: "configuration", label: "Configuration" },
              { id: "versions", label: "Versions", count: c.specVersion },
              { id: "jobs", label: "Infra Jobs" },
              { id: "state", label: "State" },
              { id: "activity", label: "Activity" },
            ]}
          />
          <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`}>
            {tab === "configuration" && <ConfigurationTab component={c} />}
            {tab === "versions" && <VersionsTab component={c} selected={Number(params.get("version")) || null} />}
            {tab === "jobs" && <ComponentJobs componentId={id} readOnly={isGone(c.status)} />}
            {tab === "state" && <StateTab componentId={id} configuredBackend={c.stateBackend} />}
            {tab === "activity" && <ActivityTab filter={{ component: id }} what={`${c.name} and its jobs`} />}
          </div>
        </>
      )}
    </QueryState>
  );
}
