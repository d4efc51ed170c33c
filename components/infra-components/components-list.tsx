"use client";
import Link from "next/link";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useQuery } from "@tanstack/react-query";
import { Archive, Boxes, Plus } from "lucide-react";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { Badge, envTone } from "@/components/ui/badge";
import { Card, EmptyState, PageHeader, QueryState } from "@/components/ui/page";
import { Table, Tbody, Td, Th } from "@/components/ui/table";
import { controlClass } from "@/components/ui/field";
import { relativeTime } from "@/components/ui/time";
import { Tabs } from "@/components/ui/tabs";
import { ComponentStatusBadge, JobRef, type ComponentView } from "./component-ui";

type Show = "current" | "gone";

export function ComponentsList() {
  const org = useOrg();
  const trpc = useTRPC();
  const router = useRouter();
  const pathname = usePathname();
  const params = useSearchParams();
  const environment = params.get("environment") ?? "";
  const kind = params.get("kind") ?? "";
  const show: Show = params.get("show") === "gone" ? "gone" : "current";
  const envs = useQuery(trpc.environments.list.queryOptions({ org: org.slug }));
  const kinds = useQuery(trpc.catalog.kinds.queryOptions({ org: org.slug }));
  const list = useQuery({
    ...trpc.components.list.queryOptions({ org: org.slug, environment: environment || undefined, kind: kind || undefined, show }),
    // A component being created or deleted changes status when its job ends: keep the list current meanwhile.
    refetchInterval: (q) => (q.state.data?.components.some((c) => c.status === "deleting" || (c.lastJob && c.lastJob.status !== "completed")) ? 3000 : false),
  });

  const setFilter = (key: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value);
    else next.delete(key);
    router.replace(`${pathname}?${next}`);
  };
  const filtered = !!(environment || kind);

  return (
    <>
      <PageHeader
        title="Infra Components"
        description="The infrastructure your organization runs, one component per resource and environment."
        actions={
          org.can("engineer") && (
            <Link href={`/o/${org.slug}/components/new`} className="inline-flex items-center gap-1.5 rounded-md bg-indigo-600 px-3.5 py-2 text-sm font-medium text-white shadow-sm hover:bg-indigo-500">
              <Plus className="h-4 w-4" /> New component
            </Link>
          )
        }
      />
      <Tabs<Show>
        label="Which components"
        value={show}
        onChange={(v) => setFilter("show", v === "gone" ? "gone" : "")}
        tabs={[
          { id: "current", label: "Components" },
          { id: "gone", label: "Deleted components" },
        ]}
      />
      <div role="tabpanel" id={`panel-${show}`} aria-labelledby={`tab-${show}`}>
        <Card>
          <div className="-mx-5 -mt-4 mb-0 flex flex-wrap items-end gap-3 border-b border-slate-100 px-5 py-3">
            <div>
              <label htmlFor="filter-env" className="mb-1 block text-xs font-medium text-slate-500">
                Environment
              </label>
              <select id="filter-env" value={environment} onChange={(e) => setFilter("environment", e.target.value)} className={controlClass() + " w-44"}>
                <option value="">All environments</option>
                {envs.data?.map((e) => (
                  <option key={e.id} value={e.name}>
                    {e.name}
                  </option>
                ))}
              </select>
            </div>
            <div>
              <label htmlFor="filter-kind" className="mb-1 block text-xs font-medium text-slate-500">
                Kind
              </label>
              <select id="filter-kind" value={kind} onChange={(e) => setFilter("kind", e.target.value)} className={controlClass() + " w-52"}>
                <option value="">All kinds</option>
                {kinds.data?.map((k) => (
                  <option key={k.kind} value={k.kind}>
                    {k.title}
                  </option>
                ))}
              </select>
            </div>
            {filtered && (
              <button type="button" onClick={() => router.replace(show === "gone" ? `${pathname}?show=gone` : pathname)} className="pb-2 text-sm text-indigo-600 hover:underline">
                Clear filters
              </button>
            )}
          </div>
          <div className="-mx-5 -mb-4">
            <QueryState query={list} loading="Loading components…">
              {({ components: rows }) =>
                rows.length === 0 ? (
                  show === "gone" ? (
                    <EmptyState
                      icon={<Archive className="h-8 w-8" />}
                      title={filtered ? "No deleted components match these filters" : "No deleted components"}
                      description="A component whose destroy job succeeded, or that an admin forgot, is listed here with who removed it and when; its jobs, versions and state history stay readable."
                    />
                  ) : (
                    <EmptyState
                      icon={<Boxes className="h-8 w-8" />}
                      title={filtered ? "No components match these filters" : "No Infra Components yet"}
                      description={filtered ? "Try another environment or kind, or clear the filters." : "A component is one piece of infrastructure in one environment. Create one and its first update job deploys it."}
                      action={
                        !filtered && org.can("engineer") ? (
                          <Link href={`/o/${org.slug}/components/new`} className="text-sm font-medium text-indigo-600 hover:underline">
                            Create your first component
                          </Link>
                        ) : undefined
                      }
                    />
                  )
                ) : show === "gone" ? (
                  <GoneTable rows={rows} />
                ) : (
                  <CurrentTable rows={rows} />
                )
              }
            </QueryState>
          </div>
        </Card>
      </div>
    </>
  );
}

function NameCell({ c }: { c: ComponentView }) {
  const org = useOrg();
  return (
    <Td>
      <Link href={`/o/${org.slug}/components/${c.id}`} className="font-medium text-indigo-700 hover:underline">
        {c.name}
      </Link>
      {c.description && <div className="max-w-xs truncate text-xs text-slate-500">{c.description}</div>}
    </Td>
  );
}

function CurrentTable({ rows }: { rows: ComponentView[] }) {
  return (
    <Table label="Infra Components">
      <thead className="bg-slate-50">
        <tr>
          <Th>Name</Th>
          <Th>Status</Th>
          <Th>Kind</Th>
          <Th>Environment</Th>
          <Th>Version</Th>
          <Th>Last job</Th>
          <Th>Created</Th>
        </tr>
      </thead>
      <Tbody>
        {rows.map((c) => (
          <tr key={c.id} className="hover:bg-slate-50" data-component={c.name}>
            <NameCell c={c} />
            <Td>
              <ComponentStatusBadge status={c.status} />
            </Td>
            <Td>{c.kind}</Td>
            <Td>
              <Badge tone={envTone(c.environment)}>{c.environment}</Badge>
            </Td>
            <Td className="tabular-nums">v{c.specVersion}</Td>
            <Td>{c.lastJob ? <JobRef job={c.lastJob} /> : <span className="text-slate-400">none yet</span>}</Td>
            <Td title={new Date(c.createdAt).toLocaleString()}>{relativeTime(c.createdAt)}</Td>
          </tr>
        ))}
      </Tbody>
    </Table>
  );
}

function GoneTable({ rows }: { rows: ComponentView[] }) {
  return (
    <Table label="Deleted components">
      <thead className="bg-slate-50">
        <tr>
          <Th>Name</Th>
          <Th>Status</Th>
          <Th>Kind</Th>
          <Th>Environment</Th>
          <Th>Last version</Th>
          <Th>Removed by</Th>
          <Th>Removed</Th>
        </tr>
      </thead>
      <Tbody>
        {rows.map((c) => (
          <tr key={c.id} className="hover:bg-slate-50" data-component={c.name}>
            <NameCell c={c} />
            <Td>
              <ComponentStatusBadge status={c.status} />
            </Td>
            <Td>{c.kind}</Td>
            <Td>
              <Badge tone={envTone(c.environment)}>{c.environment}</Badge>
            </Td>
            <Td className="tabular-nums">v{c.specVersion}</Td>
            <Td>{c.deletedBy ?? <span className="text-slate-400">unknown</span>}</Td>
            <Td title={c.deletedAt ? new Date(c.deletedAt).toLocaleString() : undefined}>{c.deletedAt ? relativeTime(c.deletedAt) : "—"}</Td>
          </tr>
        ))}
      </Tbody>
    </Table>
  );
}
