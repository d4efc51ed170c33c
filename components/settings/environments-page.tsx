"use client";
import { useState, type FormEvent } from "react";
import Link from "next/link";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Layers, Pencil, Plus, Trash2 } from "lucide-react";
import { toast } from "sonner";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { Badge, envTone } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { showFormRefusal } from "@/components/ui/errors";
import { TextField } from "@/components/ui/field";
import { QueryTable } from "@/components/ui/data-table";
import { Card, EmptyState, PageHeader } from "@/components/ui/page";
import { relativeTime } from "@/components/ui/time";
import { useDeleteDialog } from "./delete-dialog";
import { FormAlert, RoleNote } from "./shared";
import { environmentNameRefusal } from "@/lib/names";

interface Environment {
  id: string;
  name: string;
  description: string;
  components: number;
  createdAt: Date;
}

export function EnvironmentsPage() {
  const org = useOrg();
  const trpc = useTRPC();
  const list = useQuery(trpc.environments.list.queryOptions({ org: org.slug }));
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<Environment | null>(null);
  const admin = org.can("admin");
  const remove = useDeleteDialog<Environment, { org: string; id: string }>({
    title: (e) => `Delete ${e.name}?`,
    description: "Its flow-control policy and connection authorizations go with it. An environment that still has components cannot be deleted.",
    confirmLabel: "Delete environment",
    mutation: useMutation(trpc.environments.delete.mutationOptions()),
    variables: (e) => ({ org: org.slug, id: e.id }),
    refresh: [trpc.environments.list.queryKey()],
    done: (e) => `Deleted environment ${e.name}`,
  });

  return (
    <>
      <PageHeader
        title="Environments"
        description="The stages your infrastructure moves through. Each Infra Component lives in one environment; connections and flow-control policies can be set per environment."
        actions={
          admin && (
            <Button onClick={() => setCreating(true)}>
              <Plus className="h-4 w-4" /> New environment
            </Button>
          )
        }
      />
      <RoleNote need="admin" what="Creating, editing and deleting environments" />
      <Card flush>
        <QueryTable
          query={list}
          loading="Loading environments…"
          empty={
            <EmptyState
              icon={<Layers className="h-8 w-8" />}
              title="No environments yet"
              description="Create dev, staging and prod, or whatever stages you deploy through."
              action={admin ? <Button onClick={() => setCreating(true)}>Create an environment</Button> : undefined}
            />
          }
          label="Environments"
          rowKey={(e) => e.id}
          columns={[
            { id: "name", header: "Name", cell: (e) => <Badge tone={envTone(e.name)}>{e.name}</Badge> },
            { id: "description", header: "Description", cellClassName: "max-w-md truncate", title: (e) => e.description || undefined, cell: (e) => e.description || <span className="text-slate-400">No description</span> },
            {
              id: "components",
              header: "Components",
              cell: (e) => (
                <Link href={`/o/${org.slug}/components?environment=${e.name}`} className="text-indigo-700 hover:underline">
                  {e.components} component{e.components === 1 ? "" : "s"}
                </Link>
              ),
            },
            { id: "created", header: "Created", title: (e) => new Date(e.createdAt).toLocaleString(), cell: (e) => relativeTime(e.createdAt) },
            admin && {
              id: "actions",
              header: "Actions",
              className: "text-right",
              cell: (e) => (
                <div className="flex justify-end gap-1">
                  <Button variant="ghost" size="sm" onClick={() => setEditing(e)} aria-label={`Edit ${e.name}`}>
                    <Pencil className="h-3.5 w-3.5" /> Edit
                  </Button>
                  <Button variant="ghost" size="sm" onClick={() => remove.ask(e)} aria-label={`Delete ${e.name}`} title={e.components ? `${e.components} component(s) still belong to ${e.name}` : undefined}>
                    <Trash2 className="h-3.5 w-3.5" /> Delete
                  </Button>
                </div>
              ),
            },
          ]}
        />
      </Card>
      <EnvironmentDialog open={creating} onClose={() => setCreating(false)} />
      <EnvironmentDialog open={!!editing} environment={editing ?? undefined} onClose={() => setEditing(null)} />
      {remove.dialog}
    </>
  );
}

function EnvironmentDialog({ open, environment, onClose }: { open: boolean; environment?: Environment; onClose: () => void }) {
  return open ? <EnvironmentForm key={environment?.id ?? "new"} environment={environment} onClose={onClose} /> : null;
}

function EnvironmentForm({ environment, onClose }: { environment?: Environment; onClose: () => void }) {
  const org = useOrg();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [name, setName] = useState(environment?.name ?? "");
  const [description, setDescription] = useState(environment?.description ?? "");
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [alert, setAlert] = useState<string | null>(null);
  const done = async (message: string) => {
    await queryClient.invalidateQueries({ queryKey: trpc.environments.list.queryKey() });
    toast.success(message);
    onClose();
  };
  const fail = (err: unknown) => {
    showFormRefusal(err, setErrors, setAlert);
  };
  const create = useMutation(trpc.environments.create.mutationOptions({ onSuccess: (r) => done(`Created environment ${r.name}`), onError: fail }));
  const update = useMutation(trpc.environments.update.mutationOptions({ onSuccess: () => done(`Saved ${environment?.name}`), onError: fail }));

  function submit(e: FormEvent) {
    e.preventDefault();
    if (environment) update.mutate({ org: org.slug, id: environment.id, description });
    else {
      const refusal = environmentNameRefusal(name);
      if (refusal) return setErrors({ name: refusal });
      create.mutate({ org: org.slug, name, description });
    }
  }

  return (
    <Dialog
      open
      onClose={onClose}
      title={environment ? `Edit ${environment.name}` : "New environment"}
      description={environment ? "An environment's name cannot change: components, policies and authorizations refer to it." : "Components are created in an environment; its name appears in every job."}
    >
      <form onSubmit={submit} noValidate className="space-y-4">
        <TextField label="Name" value={name} onChange={(e) => setName(e.target.value.toLowerCase())} error={errors.name} disabled={!!environment} placeholder="qa" hint="Lower-case letters, digits and dashes." autoFocus={!environment} />
        <TextField label="Description" value={description} onChange={(e) => setDescription(e.target.value)} error={errors.description} placeholder="Optional: what runs here" autoFocus={!!environment} />
        <FormAlert message={alert} />
        <div className="flex justify-end gap-2 pt-2">
          <Button variant="secondary" onClick={onClose}>
            Cancel
          </Button>
          <Button type="submit" busy={create.isPending || update.isPending}>
            {environment ? "Save" : "Create environment"}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
