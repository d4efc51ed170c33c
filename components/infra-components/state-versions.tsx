"use client";
import { useState } from "react";
import Link from "next/link";
import { useMutation, useQuery } from "@tanstack/react-query";
import { History } from "lucide-react";
import { formatBytes } from "@/lib/display";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { useDeleteDialog } from "@/components/settings/delete-dialog";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, EmptyState, QueryState } from "@/components/ui/page";
import { Table, Tbody, Td, Th } from "@/components/ui/table";
import { relativeTime } from "@/components/ui/time";

interface VersionRow {
  id: string;
  serial: number;
  checksum: string;
  createdAt: Date | string;
}

/**
 * A component's state versions as Planton-managed storage keeps them, newest first: pick two to compare; an admin can
 * roll back to one. `movedTo`: the state lives on that backend now (moved off Planton-managed storage); these are the
 * versions kept from before, for the move's rollback, and none can be rolled back to here.
 */
export function StateVersions({ componentId, movedTo = null }: { componentId: string; movedTo?: string | null }) {
  const org = useOrg();
  const trpc = useTRPC();
  const versions = useQuery({ ...trpc.components.stateVersions.queryOptions({ org: org.slug, id: componentId }), refetchInterval: 5_000 });
  const [picked, setPicked] = useState<string[]>([]);
  const rollback = useMutation(trpc.components.stateRollback.mutationOptions());
  const { ask, dialog } = useDeleteDialog<VersionRow, { org: string; id: string; versionId: string }>({
    title: (v) => `Roll back to serial ${v.serial}?`,
    description: (v) => (
      <>
        The state is written again with the content of serial {v.serial} (checksum <span className="font-mono">{v.checksum.slice(0, 12)}</span>) as a new version at the next serial; no version is
        deleted. This component&apos;s queued jobs wait until it is done, and the rollback is recorded in the audit log.
      </>
    ),
    confirmLabel: "Roll back",
    mutation: rollback,
    variables: (v) => ({ org: org.slug, id: componentId, versionId: v.id }),
    refresh: [trpc.components.stateVersions.queryKey(), trpc.components.state.queryKey()],
    done: (v) => `Rolled back to the content of serial ${v.serial}.`,
  });
  const toggle = (id: string) => setPicked((p) => (p.includes(id) ? p.filter((x) => x !== id) : [...p, id].slice(-2)));

  return (
    <Card
      title="Versions"
      description={
        movedTo
          ? `This state lives on ${movedTo} now: these are the versions kept on Planton-managed storage from before it moved (for the move's rollback). Pick two to compare them.`
          : "Every content this state has had, newest first. Pick two to see what changed between them."
      }
    >
      <QueryState query={versions} loading="Loading versions…">
        {(list) =>
          list.length === 0 ? (
            <EmptyState icon={<History className="h-8 w-8" />} title="No versions yet" description="Each job that writes this state adds a version here." />
          ) : (
            <>
              <div className="-mx-5 -mt-4">
                <Table label="State versions">
                  <thead className="bg-slate-50">
                    <tr>
                      <Th className="w-10">
                        <span className="sr-only">Compare</span>
                      </Th>
                      <Th>Serial</Th>
                      <Th>Written</Th>
                      <Th>By</Th>
                      <Th>Size</Th>
                      <Th>Checksum</Th>
                      {org.can("admin") && (
                        <Th>
                          <span className="sr-only">Actions</span>
                        </Th>
                      )}
                    </tr>
                  </thead>
                  <Tbody>
                    {list.map((v) => (
                      <tr key={v.id} data-testid="state-version">
                        <Td>
                          <input
                            type="checkbox"
                            className="h-4 w-4 rounded border-slate-300"
                            checked={picked.includes(v.id)}
                            onChange={() => toggle(v.id)}
                            aria-label={`Compare serial ${v.serial}`}
                          />
                        </Td>
                        <Td>
                          {v.serial} {v.current && <Badge tone="green">current</Badge>}
                        </Td>
                        <Td title={new Date(v.createdAt).toISOString()}>{relativeTime(v.createdAt)}</Td>
                        <Td>
                          {v.jobId ? (
                            <Link href={`/o/${org.slug}/jobs/${v.jobId}`} className="font-mono text-xs text-indigo-700 hover:underline">
                              {v.jobId}
                            </Link>
                          ) : v.restoredFrom ? (
                            <span className="text-xs">rollback by {v.actorLabel}</span>
                          ) : v.actorLabel ? (
                            <span className="text-xs">{v.actorLabel}</span>
                          ) : (
                            <span className="text-xs text-slate-500">before versions were kept</span>
                          )}
                        </Td>
                        <Td>{formatBytes(v.size)}</Td>
                        <Td className="font-mono text-xs" title={v.checksum}>
                          {v.checksum.slice(0, 12)}
                        </Td>
                        {org.can("admin") && (
                          <Td className="text-right">
                            {!v.current && !movedTo && (
                              <Button size="sm" variant="secondary" onClick={() => ask(v)}>
                                Roll back to this version
                              </Button>
                            )}
                          </Td>
                        )}
                      </tr>
                    ))}
                  </Tbody>
                </Table>
              </div>
              {picked.length === 2 ? (
                <StateDiff
                  componentId={componentId}
                  // The older of the two is the base: the list is newest first.
                  fromId={list.findIndex((v) => v.id === picked[0]) > list.findIndex((v) => v.id === picked[1]) ? picked[0] : picked[1]}
                  toId={list.findIndex((v) => v.id === picked[0]) > list.findIndex((v) => v.id === picked[1]) ? picked[1] : picked[0]}
                />
              ) : (
                <p className="mt-4 text-sm text-slate-500">{list.length > 1 ? "Pick two versions to compare them." : "A second version appears when the state is written again."}</p>
              )}
            </>
          )
        }
      </QueryState>
      {dialog}
    </Card>
  );
}

function StateDiff({ componentId, fromId, toId }: { componentId: string; fromId: string; toId: string }) {
  const org = useOrg();
  const trpc = useTRPC();
  const diff = useQuery(trpc.components.stateDiff.queryOptions({ org: org.slug, id: componentId, fromId, toId }));
  return (
    <section className="mt-4 space-y-3 text-sm" aria-label="Differences between the picked versions">
      <QueryState query={diff} loading="Comparing versions…">
        {(d) => (
          <>
            <h3 className="font-medium">
              From serial {d.from.serial} to serial {d.to.serial}
            </h3>
            {d.added.length + d.removed.length + d.changed.length === 0 ? (
              <p className="text-slate-600">No resource differs between these versions.</p>
            ) : (
              <ul className="space-y-2" data-testid="state-diff">
                {d.added.map((a) => (
                  <li key={`+${a}`} className="font-mono text-xs">
                    <Badge tone="green">added</Badge> {a}
                  </li>
                ))}
                {d.removed.map((a) => (
                  <li key={`-${a}`} className="font-mono text-xs">
                    <Badge tone="red">removed</Badge> {a}
                  </li>
                ))}
                {d.changed.map((c) => (
                  <li key={`~${c.address}`} className="font-mono text-xs">
                    <Badge tone="yellow">changed</Badge> {c.address}
                    <ul className="mt-1 ml-6 space-y-0.5 break-all text-slate-600">
                      {c.attributes.map((a) => (
                        <li key={a.name}>
                          {a.name}: {a.sensitive ? <Badge tone="yellow">sensitive</Badge> : `${JSON.stringify(a.from)} → ${JSON.stringify(a.to)}`}
                        </li>
                      ))}
                    </ul>
                  </li>
                ))}
              </ul>
            )}
          </>
        )}
      </QueryState>
    </section>
  );
}
