"use client";
// A component's spec versions, newest first: who saved each and when, the field-level diff from the
// version before, and the jobs that ran it. `?tab=versions&version=N` opens one (the job page links here).
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { GitCommitVertical, History } from "lucide-react";
import { isGone } from "@/lib/component-lifecycle";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { cn } from "@/components/ui/cn";
import { Card, EmptyState, QueryState } from "@/components/ui/page";
import { relativeTime } from "@/components/ui/time";
import { AuditChanges } from "@/components/audit/audit-changes";
import { JobRef, versionHref, type ComponentVersion, type ComponentView } from "./component-ui";

export function VersionsTab({ component: c, selected }: { component: ComponentView; selected: number | null }) {
  const org = useOrg();
  const trpc = useTRPC();
  const versions = useQuery(trpc.components.versions.queryOptions({ org: org.slug, id: c.id }));
  return (
    <QueryState query={versions} loading="Loading versions…">
      {({ versions: list }) => {
        if (list.length === 0)
          return (
            <Card>
              <EmptyState icon={<History className="h-8 w-8" />} title="No versions recorded" description="Each save of the component's configuration records a version with its diff; none is recorded for this one." />
            </Card>
          );
        const shown = list.find((v) => v.version === selected) ?? list[0];
        const missing = selected !== null && shown.version !== selected;
        return (
          <div className="grid gap-6 lg:grid-cols-3">
            <nav aria-label="Versions" className="lg:col-span-1">
              <ol className="overflow-hidden rounded-lg bg-white shadow-sm ring-1 ring-slate-200">
                {list.map((v) => {
                  const current = v.version === shown.version;
                  const fields = Object.keys(v.changes);
                  return (
                    <li key={v.version} className="border-b border-slate-100 last:border-0">
                      <Link
                        href={versionHref(org.slug, c.id, v.version)}
                        replace
                        scroll={false}
                        aria-current={current ? "true" : undefined}
                        className={cn("block px-4 py-3 text-sm hover:bg-slate-50 focus:outline-none focus-visible:ring-2 focus-visible:ring-inset focus-visible:ring-indigo-500", current && "bg-indigo-50 hover:bg-indigo-50")}
                      >
                        <span className="flex items-center justify-between gap-2">
                          <span className={cn("font-semibold", current ? "text-indigo-800" : "text-slate-900")}>
                            Version {v.version}
                            {v.version === c.specVersion && <span className="ml-2 rounded-full bg-slate-100 px-1.5 py-0.5 text-xs font-medium text-slate-600">{isGone(c.status) ? "last" : "current"}</span>}
                          </span>
                          <span className="text-xs text-slate-500" title={new Date(v.createdAt).toLocaleString()}>
                            {relativeTime(v.createdAt)}
                          </span>
                        </span>
                        <span className="mt-0.5 block text-xs text-slate-600">by {v.createdByLabel}</span>
                        <span className="mt-0.5 block truncate font-mono text-xs text-slate-500">{v.version === 1 ? "created" : fields.length ? fields.join(", ") : "no field changed"}</span>
                      </Link>
                    </li>
                  );
                })}
              </ol>
            </nav>
            <div className="space-y-6 lg:col-span-2">
              {missing && (
                <p role="status" className="rounded-md bg-amber-50 p-3 text-sm text-amber-900 ring-1 ring-amber-200">
                  {c.name} has no version {selected}; its versions are 1 to {list[0].version}. Showing version {shown.version}.
                </p>
              )}
              <VersionDetail component={c} version={shown} />
            </div>
          </div>
        );
      }}
    </QueryState>
  );
}

function VersionDetail({ component: c, version: v }: { component: ComponentView; version: ComponentVersion }) {
  const org = useOrg();
  const trpc = useTRPC();
  // The jobs' where-they-are, to show beside each id; a component's jobs fit in one page.
  const jobs = useQuery({ ...trpc.jobs.list.queryOptions({ org: org.slug, componentId: c.id, limit: 200 }), enabled: v.jobIds.length > 0 });
  const byId = new Map((jobs.data?.jobs ?? []).map((j) => [j.id, j]));
  const spec = Object.entries(v.spec);
  return (
    <>
      <Card
        title={
          <span className="flex items-center gap-2" data-testid="version-title">
            <GitCommitVertical className="h-4 w-4 text-slate-400" /> Version {v.version}
          </span>
        }
        description={
          <>
            Saved by <span className="font-medium text-slate-700">{v.createdByLabel}</span>, <span title={new Date(v.createdAt).toLocaleString()}>{relativeTime(v.createdAt)}</span> ({new Date(v.createdAt).toLocaleString()})
          </>
        }
      >
        <h3 className="mb-2 text-sm font-semibold text-slate-900">{v.version === 1 ? "As created" : `Changes from version ${v.version - 1}`}</h3>
        {Object.keys(v.changes).length === 0 ? <p className="text-sm text-slate-500">No field changed.</p> : <AuditChanges changes={v.changes} />}
        <h3 className="mb-2 mt-6 text-sm font-semibold text-slate-900">Jobs that ran this version</h3>
        {v.jobIds.length === 0 ? (
          <p className="text-sm text-slate-500">No job ran this version{v.version === c.specVersion && !isGone(c.status) ? " yet" : ""}.</p>
        ) : (
          <ul aria-label={`Jobs of version ${v.version}`} className="space-y-1.5 text-sm">
            {v.jobIds.map((id) => {
              const j = byId.get(id);
              return (
                <li key={id} className="flex flex-wrap items-center gap-2">
                  <span className="font-mono text-xs text-slate-500">{id}</span>
                  {j ? (
                    <JobRef job={{ id: j.id, operation: j.operation, status: j.status, result: j.result, specVersion: v.version, createdAt: j.createdAt }} />
                  ) : (
                    <Link href={`/o/${org.slug}/jobs/${id}`} className="font-medium text-indigo-700 hover:underline">
                      Open
                    </Link>
                  )}
                </li>
              );
            })}
          </ul>
        )}
      </Card>
      <Card title={`Configuration at version ${v.version}`} description="The whole configuration this version recorded.">
        <dl className="divide-y divide-slate-100 text-sm">
          <Row label="Description">{v.description || <span className="text-slate-400">none</span>}</Row>
          <Row label="Connection">{v.connection ?? <span className="text-slate-400">none</span>}</Row>
          <Row label="State backend">{v.stateBackend ?? <span className="text-slate-400">the organization&apos;s default</span>}</Row>
          {v.customModuleId && <Row label="Custom module">{v.customModuleId}</Row>}
          {spec.map(([k, val]) => (
            <Row key={k} label={`spec.${k}`} mono>
              {JSON.stringify(val)}
            </Row>
          ))}
        </dl>
      </Card>
    </>
  );
}

function Row({ label, children, mono }: { label: string; children: React.ReactNode; mono?: boolean }) {
  return (
    <div className="grid grid-cols-3 gap-4 py-2">
      <dt className={cn("text-slate-500", mono && "font-mono")}>{label}</dt>
      <dd className={cn("col-span-2 break-all text-slate-900", mono && "font-mono")}>{children}</dd>
    </div>
  );
}
