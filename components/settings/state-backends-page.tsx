"use client";
// Settings → State Backends: the organization's backends, the default per provisioner, and what is
// still on Planton-managed storage (with the way to the move-off wizard). Admins act; others read.
import { useState } from "react";
import Link from "next/link";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ArrowRight, CheckCircle2, Database, Pencil, Plus, Trash2 } from "lucide-react";
import { toast } from "sonner";
import { useTRPC } from "@/lib/trpc/client";
import { PROVISIONERS } from "@/lib/catalog";
import { STATE_ROWS_SHOWN } from "@/lib/state-moves";
import { formatBytes } from "@/lib/display";
import { STATE_BACKEND_KINDS, type StateBackendKind } from "@/lib/state-backend-kinds";
import { useOrg } from "@/components/shell/org-context";
import { Badge, envTone } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { DataTable, QueryTable } from "@/components/ui/data-table";
import { messageOf } from "@/components/ui/errors";
import { SelectField } from "@/components/ui/field";
import { Card, EmptyState, PageHeader, QueryState } from "@/components/ui/page";
import { useDeleteDialog } from "./delete-dialog";
import { StateBackendForm, type BackendRowView } from "./state-backend-form";
import { FormAlert, RoleNote } from "./shared";

interface Backend extends BackendRowView {
  id: string;
  defaultFor: string[];
}

const titleOf = (kind: string) => STATE_BACKEND_KINDS[kind as StateBackendKind]?.title ?? kind;
const configWords = (config: Record<string, unknown>) =>
  Object.entries(config)
    .filter(([, v]) => v !== "" && v !== undefined && v !== null)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(" ");

export function StateBackendsPage() {
  const org = useOrg();
  const trpc = useTRPC();
  const list = useQuery(trpc.stateBackends.list.queryOptions({ org: org.slug }));
  const [editing, setEditing] = useState<Backend | "new" | null>(null);
  const admin = org.can("admin");
  const remove = useDeleteDialog<Backend, { org: string; name: string }>({
    title: (b) => `Delete ${b.name}?`,
    description: "Only the backend's settings are deleted; the states in it are not touched. A backend that keeps components' state, or is a default, cannot be deleted.",
    confirmLabel: "Delete backend",
    mutation: useMutation(trpc.stateBackends.delete.mutationOptions()),
    variables: (b) => ({ org: org.slug, name: b.name }),
    refresh: [trpc.stateBackends.list.queryKey()],
    done: (b) => `Deleted state backend ${b.name}`,
  });

  return (
    <>
      <PageHeader
        title="State Backends"
        description="Where your components' state lives. New components keep theirs in the default for their provisioner; credentials come from a connection."
        actions={
          admin && (
            <Button onClick={() => setEditing("new")}>
              <Plus className="h-4 w-4" /> New state backend
            </Button>
          )
        }
      />
      <RoleNote need="admin" what="Creating, editing and deleting backends and changing the defaults" />
      <div className="space-y-6">
        <Card flush title="Backends">
          <QueryTable
            query={{ ...list, data: list.data?.backends }}
            loading="Loading state backends…"
            empty={<EmptyState icon={<Database className="h-8 w-8" />} title="No state backends" description="Planton-managed storage is always there; create a backend of your own to keep state where you choose." />}
            label="State backends"
            rowKey={(b) => b.id}
            rowClassName="align-top"
            columns={[
              {
                id: "name",
                header: "Name",
                className: "min-w-48 max-w-sm whitespace-normal!",
                cell: (b) => (
                  <>
                    <div className="font-medium break-words text-slate-900">{b.name}</div>
                    {configWords(b.config) && <div className="mt-0.5 font-mono text-xs break-all text-slate-500">{configWords(b.config)}</div>}
                  </>
                ),
              },
              { id: "kind", header: "Kind", className: "whitespace-normal!", cell: (b) => titleOf(b.kind) },
              { id: "connection", header: "Connection", cell: (b) => b.connection ?? <span className="text-slate-400">none needed</span> },
              { id: "components", header: "Components", cell: (b) => (b.components ? `${b.components} component${b.components === 1 ? "" : "s"}` : <span className="text-slate-400">none</span>) },
              {
                id: "defaultFor",
                header: "Default for",
                className: "whitespace-normal!",
                cell: (b) =>
                  b.defaultFor.length ? (
                    <div className="flex flex-wrap gap-1">
                      {b.defaultFor.map((p) => (
                        <Badge key={p} tone="indigo">
                          {p}
                        </Badge>
                      ))}
                    </div>
                  ) : (
                    <span className="text-slate-400">—</span>
                  ),
              },
              admin && {
                id: "actions",
                header: "Actions",
                className: "text-right",
                cell: (b) =>
                  b.kind === "planton_managed" ? (
                    <span className="text-xs text-slate-400">always there</span>
                  ) : (
                    <div className="flex justify-end gap-1">
                      <Button variant="ghost" size="sm" onClick={() => setEditing(b)} aria-label={`Edit ${b.name}`} title="Edit">
                        <Pencil className="h-3.5 w-3.5" />
                      </Button>
                      <Button variant="ghost" size="sm" onClick={() => remove.ask(b)} aria-label={`Delete ${b.name}`} title="Delete">
                        <Trash2 className="h-3.5 w-3.5" />
                      </Button>
                    </div>
                  ),
              },
            ]}
          />
        </Card>
        <DefaultsCard />
        <PlantonManagedCard />
      </div>
      {editing && <StateBackendForm key={editing === "new" ? "new" : editing.id} backend={editing === "new" ? undefined : editing} onClose={() => setEditing(null)} />}
      {remove.dialog}
    </>
  );
}

/** The default backend per provisioner; an admin picks among the backends whose kind serves it. */
function DefaultsCard() {
  const org = useOrg();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const list = useQuery(trpc.stateBackends.list.queryOptions({ org: org.slug }));
  const admin = org.can("admin");
  const [alert, setAlert] = useState<string | null>(null);
  const setDefault = useMutation(
    trpc.stateBackends.setDefault.mutationOptions({
      onSuccess: async (r, v) => {
        queryClient.setQueryData(trpc.stateBackends.list.queryKey({ org: org.slug }), r);
        await queryClient.invalidateQueries({ queryKey: trpc.stateBackends.list.queryKey() });
        setAlert(null);
        toast.success(`${v.backend} is the default for ${v.provisioner} now: new components keep their state there`);
      },
      onError: (err) => setAlert(messageOf(err)),
    }),
  );
  return (
    <Card title="Defaults" description="New components keep their state in the default for their module's provisioner. Existing states stay where they are until they are moved.">
      <QueryState query={list} loading="Loading defaults…">
        {(data) => (
          <div className="space-y-3">
            <div className="grid gap-4 sm:grid-cols-2 lg:grid-cols-4">
              {PROVISIONERS.map((p) => {
                const serving = data.backends.filter((b) => (STATE_BACKEND_KINDS[b.kind as StateBackendKind]?.provisioners as readonly string[] | undefined)?.includes(p));
                return admin ? (
                  <SelectField key={p} label={p} value={data.defaults[p] ?? ""} disabled={setDefault.isPending} onChange={(e) => setDefault.mutate({ org: org.slug, provisioner: p, backend: e.target.value })}>
                    {serving.map((b) => (
                      <option key={b.id} value={b.name}>
                        {b.kind === "planton_managed" ? b.name : `${b.name} (${titleOf(b.kind)})`}
                      </option>
                    ))}
                  </SelectField>
                ) : (
                  <div key={p} data-provisioner={p}>
                    <div className="text-sm font-medium text-slate-800">{p}</div>
                    <div className="mt-1 text-sm text-slate-600">{data.defaults[p] ?? "—"}</div>
                  </div>
                );
              })}
            </div>
            <FormAlert message={alert} />
          </div>
        )}
      </QueryState>
    </Card>
  );
}

/** Count and size on Planton-managed storage by environment, the list, and the way to the move-off wizard. */
function PlantonManagedCard() {
  const org = useOrg();
  const trpc = useTRPC();
  // The table draws the first STATE_ROWS_SHOWN; the totals cover every state.
  const usage = useQuery(trpc.stateBackends.plantonManaged.queryOptions({ org: org.slug, limit: STATE_ROWS_SHOWN }));
  const moveHref = `/o/${org.slug}/settings/state-backends/move`;
  return (
    <Card title="Planton-managed storage" description="States kept in the console's own database: reachable by Planton-hosted runners only.">
      <QueryState query={usage} loading="Loading Planton-managed usage…">
        {(u) =>
          u.totals.count === 0 ? (
            <div data-testid="move-off-card" className="flex flex-wrap items-center justify-between gap-3 text-sm text-slate-700">
              <span className="flex items-center gap-2">
                <CheckCircle2 className="h-5 w-5 text-emerald-600" />
                Nothing left on Planton-managed storage
              </span>
              {/* The last move's result (and its per-component rollback) stays one click away. */}
              <Link href={moveHref} className="text-sm font-medium text-indigo-600 hover:text-indigo-500">
                Moves and rollbacks <ArrowRight className="inline h-4 w-4" />
              </Link>
            </div>
          ) : (
            <div className="space-y-4">
              {/* The move-off wizard (another page) starts here. */}
              <div data-testid="move-off-card" className="flex flex-wrap items-center justify-between gap-3 rounded-md bg-indigo-50 p-4 ring-1 ring-indigo-200">
                <div className="text-sm text-indigo-900">
                  <span className="font-semibold">
                    {u.totals.count} state{u.totals.count === 1 ? "" : "s"}, {formatBytes(u.totals.size)}
                  </span>{" "}
                  on Planton-managed storage:{" "}
                  {u.byEnvironment.map((e, i) => (
                    <span key={e.environment}>
                      {i > 0 && ", "}
                      {e.environment} {e.count} ({formatBytes(e.size)})
                    </span>
                  ))}
                </div>
                <Link href={moveHref} className="inline-flex items-center gap-1.5 rounded-md bg-indigo-600 px-3.5 py-2 text-sm font-medium text-white shadow-sm hover:bg-indigo-500">
                  Move off Planton-managed storage <ArrowRight className="h-4 w-4" />
                </Link>
              </div>
              <div className="-mx-5 border-t border-slate-100">
                <DataTable
                  label="States on Planton-managed storage"
                  rows={u.states}
                  rowKey={(s) => s.componentId}
                  columns={[
                    { id: "component", header: "Component", cellClassName: "font-medium text-slate-900", cell: (s) => s.component },
                    { id: "environment", header: "Environment", cell: (s) => <Badge tone={envTone(s.environment)}>{s.environment}</Badge> },
                    { id: "provisioner", header: "Provisioner", cell: (s) => s.provisioner },
                    { id: "size", header: "Size", className: "text-right", cell: (s) => formatBytes(s.size) },
                    { id: "serial", header: "Serial", className: "text-right", cell: (s) => (s.serial === null ? "—" : s.serial) },
                  ]}
                />
                {u.totals.count > u.states.length && (
                  <p className="border-t border-slate-100 px-5 py-3 text-xs text-slate-500" data-testid="planton-managed-shown">
                    The first {u.states.length} of {u.totals.count} shown; the totals above cover every one, and planton infra state-backend list-planton-managed lists them all.
                  </p>
                )}
              </div>
            </div>
          )
        }
      </QueryState>
    </Card>
  );
}
