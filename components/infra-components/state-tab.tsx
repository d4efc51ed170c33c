"use client";
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { Database, Lock, LockOpen } from "lucide-react";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { Badge } from "@/components/ui/badge";
import { Card, EmptyState, QueryState } from "@/components/ui/page";
import { Table, Tbody, Td, Th } from "@/components/ui/table";
import { relativeTime } from "@/components/ui/time";
import { StateVersions } from "./state-versions";

/** A Pulumi checkpoint's serial is its deployment time in milliseconds: shown as that time, in UTC. */
const utcTime = (ms: number) => `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC`;

/** Where a component's state lives, who holds its lock, and what it records. Refreshes while a job may be writing it. */
export function StateTab({ componentId, configuredBackend }: { componentId: string; configuredBackend: string | null }) {
  const org = useOrg();
  const trpc = useTRPC();
  // A state on another backend is read from it through its store (a request to S3, HCP Terraform…): asked less often.
  const state = useQuery({ ...trpc.components.state.queryOptions({ org: org.slug, id: componentId }), refetchInterval: (q) => (q.state.data && !q.state.data.planton ? 30_000 : 5_000) });
  return (
    <QueryState query={state} loading="Loading state…">
      {(s) =>
        !s ? (
          <Card title="State" description="Where this component's IaC state is kept.">
            <p className="text-sm text-slate-600">
              Backend: <span className="font-medium">{configuredBackend ?? "the organization's default for the module's provisioner"}</span>
            </p>
            <EmptyState icon={<Database className="h-8 w-8" />} title="No state yet" description="The first job that refreshes, applies or imports writes this component's state." />
          </Card>
        ) : (
          <div className="space-y-6">
            <Card
              title="State"
              description={s.format === "pulumi" ? "A Pulumi checkpoint, one stack per component." : s.format === "opentofu" ? "OpenTofu version-4 state, one file per component." : "Where this component's state is kept."}
            >
              <dl className="grid gap-4 text-sm sm:grid-cols-3">
                <Item label="Backend">
                  {s.backend.name ?? s.backend.id} <span className="text-slate-500">({s.backend.kind})</span>
                </Item>
                <Item label="Key">
                  <span className="font-mono text-xs">{s.key}</span>
                </Item>
                <Item label="Last written">{s.updatedAt ? relativeTime(s.updatedAt) : <span className="text-slate-500">not recorded by {s.backend.name}</span>}</Item>
                <Item label="Lineage">
                  <span className="font-mono text-xs">{s.lineage ?? "—"}</span>
                </Item>
                <Item label="Serial">
                  {s.serial ?? "—"}
                  {s.format === "pulumi" && s.serial ? <span className="text-slate-500"> (deployed {utcTime(s.serial)})</span> : null}
                </Item>
                <Item label="Lock">
                  {s.lock ? (
                    <span className="inline-flex items-center gap-1 text-amber-700">
                      <Lock className="h-3.5 w-3.5" /> held
                      {s.lockedByJob && (
                        <>
                          {" "}by{" "}
                          <Link href={`/o/${org.slug}/jobs/${s.lockedByJob}`} className="font-mono text-xs text-indigo-700 hover:underline">
                            {s.lockedByJob}
                          </Link>
                        </>
                      )}
                    </span>
                  ) : (
                    <span className="inline-flex items-center gap-1 text-slate-600">
                      <LockOpen className="h-3.5 w-3.5" /> unlocked
                    </span>
                  )}
                </Item>
              </dl>
              {s.unreadable && (
                <p role="alert" className="mt-4 text-sm text-red-700">
                  {s.unreadable}. Check the backend&apos;s access in Settings → State Backends.
                </p>
              )}
              {s.lock && (
                <pre className="mt-4 overflow-x-auto rounded-md bg-slate-900 p-3 text-xs text-slate-100">
                  {Object.entries(s.lock)
                    .map(([k, v]) => `${`${k}:`.padEnd(11)}${String(v)}`)
                    .join("\n")}
                </pre>
              )}
            </Card>
            <StateVersions componentId={componentId} movedTo={s.planton ? null : s.backend.name} />
            <Card title="Resources" description={`${s.resources.length} managed resource${s.resources.length === 1 ? "" : "s"}.`}>
              {s.resources.length === 0 ? (
                <EmptyState title="No resources" description="The state is empty: nothing exists, or everything was destroyed." />
              ) : (
                <div className="-mx-5 -my-4">
                  <Table label="Resources in state">
                    <thead className="bg-slate-50">
                      <tr>
                        <Th>Address</Th>
                        <Th>Instances</Th>
                        <Th>Id</Th>
                        <Th>Provider</Th>
                      </tr>
                    </thead>
                    <Tbody>
                      {s.resources.map((r) => (
                        <tr key={r.address}>
                          <Td className="font-mono text-xs">{r.address}</Td>
                          <Td>{r.instances}</Td>
                          <Td className="max-w-xs truncate font-mono text-xs">{r.id ?? "—"}</Td>
                          <Td className="font-mono text-xs text-slate-500">{r.provider.replace(/^provider\["(.*)"\]$/, "$1")}</Td>
                        </tr>
                      ))}
                    </Tbody>
                  </Table>
                </div>
              )}
            </Card>
            {s.outputs.length > 0 && (
              <Card title="Outputs">
                <dl className="divide-y divide-slate-100 text-sm">
                  {s.outputs.map((o) => (
                    <div key={o.name} className="grid grid-cols-3 gap-4 py-2">
                      <dt className="font-mono text-slate-500">{o.name}</dt>
                      <dd className="col-span-2 font-mono">{o.sensitive ? <Badge tone="yellow">sensitive</Badge> : JSON.stringify(o.value)}</dd>
                    </div>
                  ))}
                </dl>
              </Card>
            )}
          </div>
        )
      }
    </QueryState>
  );
}

function Item({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div>
      <dt className="text-slate-500">{label}</dt>
      <dd className="mt-0.5 font-medium">{children}</dd>
    </div>
  );
}
