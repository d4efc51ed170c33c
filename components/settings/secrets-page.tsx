"use client";
import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { KeyRound, Lock, Pencil, Plus, RefreshCw, Trash2, Variable as VariableIcon } from "lucide-react";
import { toast } from "sonner";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { Badge, envTone } from "@/components/ui/badge";
import { showFormRefusal } from "@/components/ui/errors";
import { TextAreaField, TextField } from "@/components/ui/field";
import { STORE_NAME, STORE_NAME_HINT } from "@/lib/secrets";
import { QueryTable, type Column } from "@/components/ui/data-table";
import { Card, EmptyState, PageHeader } from "@/components/ui/page";
import { relativeTime } from "@/components/ui/time";
import { ScopePicker, type Scope } from "./scope-picker";
import { useDeleteDialog } from "./delete-dialog";
import { FormAlert, RoleNote } from "./shared";

const NAME_HINT = `${STORE_NAME_HINT[0]!.toUpperCase()}${STORE_NAME_HINT.slice(1)}.`;

interface StoreEntry {
  id: string;
  name: string;
  description: string;
  value?: string;
  scope: Scope;
  environments: string[];
  updatedAt: Date;
}

/** Which jobs may use an entry: the whole organization, or the environments it names. */
function ScopeBadges({ entry }: { entry: StoreEntry }) {
  if (entry.scope === "organization") return <Badge tone="blue">whole organization</Badge>;
  if (!entry.environments.length) return <Badge tone="yellow">no environment</Badge>;
  return (
    <div className="flex flex-wrap gap-1">
      {entry.environments.map((e) => (
        <Badge key={e} tone={envTone(e)}>
          {e}
        </Badge>
      ))}
    </div>
  );
}

/** The columns secrets and variables share, after their name and value. */
const entryColumns: Column<StoreEntry>[] = [
  { id: "scope", header: "Used by", cell: (e) => <ScopeBadges entry={e} /> },
  { id: "description", header: "Description", cellClassName: "max-w-sm truncate", title: (e) => e.description || undefined, cell: (e) => e.description || <span className="text-slate-400">—</span> },
  { id: "updated", header: "Updated", title: (e) => new Date(e.updatedAt).toLocaleString(), cell: (e) => relativeTime(e.updatedAt) },
];

export function SecretsPage() {
  const org = useOrg();
  const trpc = useTRPC();
  const secrets = useQuery(trpc.secrets.list.queryOptions({ org: org.slug }));
  const variables = useQuery(trpc.variables.list.queryOptions({ org: org.slug }));
  const [secretForm, setSecretForm] = useState<StoreEntry | "new" | null>(null);
  const [variableForm, setVariableForm] = useState<StoreEntry | "new" | null>(null);
  const admin = org.can("admin");
  const deleteSecret = useDeleteDialog<StoreEntry, { org: string; id: string }>({
    title: (e) => `Delete ${e.name}?`,
    description: "Jobs that reference this secret will fail until it exists again.",
    confirmLabel: "Delete secret",
    mutation: useMutation(trpc.secrets.delete.mutationOptions()),
    variables: (e) => ({ org: org.slug, id: e.id }),
    refresh: [trpc.secrets.list.queryKey()],
    done: (e) => `Deleted secret ${e.name}`,
  });
  const deleteVariable = useDeleteDialog<StoreEntry, { org: string; id: string }>({
    title: (e) => `Delete ${e.name}?`,
    description: "Jobs that reference this variable will fail until it exists again.",
    confirmLabel: "Delete variable",
    mutation: useMutation(trpc.variables.delete.mutationOptions()),
    variables: (e) => ({ org: org.slug, id: e.id }),
    refresh: [trpc.variables.list.queryKey()],
    done: (e) => `Deleted variable ${e.name}`,
  });

  return (
    <>
      <PageHeader title="Secrets and Variables" description="Values that modules read by name: secrets are write-only and encrypted at rest; variables are plain text anyone in the organization can read." />
      <RoleNote need="admin" what="Changing secrets and variables" />
      <div className="space-y-6">
        <Card
          title="Secrets"
          description="Write-only: once saved, a value is never shown again, not even to admins. Replace it to change it."
          actions={
            admin && (
              <Button size="sm" onClick={() => setSecretForm("new")}>
                <Plus className="h-3.5 w-3.5" /> New secret
              </Button>
            )
          }
          flush
        >
          <QueryTable
            query={secrets}
            loading="Loading secrets…"
            empty={<EmptyState icon={<KeyRound className="h-8 w-8" />} title="No secrets yet" description="Store passwords, API keys and tokens that your modules reference as $secret/NAME." />}
            label="Secrets"
            rowKey={(s) => s.id}
            columns={[
              { id: "name", header: "Name", cellClassName: "font-mono font-medium text-slate-900", cell: (s) => s.name },
              {
                id: "value",
                header: "Value",
                cell: () => (
                  <span className="inline-flex items-center gap-1 text-xs text-slate-500">
                    <Lock className="h-3 w-3" /> hidden
                  </span>
                ),
              },
              ...entryColumns,
              admin && {
                id: "actions",
                header: "Actions",
                className: "text-right",
                cell: (s) => (
                  <div className="flex justify-end gap-1">
                    <Button variant="ghost" size="sm" onClick={() => setSecretForm(s)} aria-label={`Replace ${s.name}`}>
                      <RefreshCw className="h-3.5 w-3.5" /> Replace or rescope
                    </Button>
                    <Button variant="ghost" size="sm" onClick={() => deleteSecret.ask(s)} aria-label={`Delete ${s.name}`}>
                      <Trash2 className="h-3.5 w-3.5" /> Delete
                    </Button>
                  </div>
                ),
              },
            ]}
          />
        </Card>

        <Card
          title="Variables"
          description="Plain configuration values, readable by every member."
          actions={
            admin && (
              <Button size="sm" onClick={() => setVariableForm("new")}>
                <Plus className="h-3.5 w-3.5" /> New variable
              </Button>
            )
          }
          flush
        >
          <QueryTable
            query={variables}
            loading="Loading variables…"
            empty={<EmptyState icon={<VariableIcon className="h-8 w-8" />} title="No variables yet" description="Store shared settings such as a region or an instance size, referenced as $var/NAME." />}
            label="Variables"
            rowKey={(v) => v.id}
            columns={[
              { id: "name", header: "Name", cellClassName: "font-mono font-medium text-slate-900", cell: (v) => v.name },
              { id: "value", header: "Value", cellClassName: "max-w-xs truncate font-mono text-xs", title: (v) => v.value, cell: (v) => v.value },
              ...entryColumns,
              admin && {
                id: "actions",
                header: "Actions",
                className: "text-right",
                cell: (v) => (
                  <div className="flex justify-end gap-1">
                    <Button variant="ghost" size="sm" onClick={() => setVariableForm(v)} aria-label={`Edit ${v.name}`}>
                      <Pencil className="h-3.5 w-3.5" /> Edit
                    </Button>
                    <Button variant="ghost" size="sm" onClick={() => deleteVariable.ask(v)} aria-label={`Delete ${v.name}`}>
                      <Trash2 className="h-3.5 w-3.5" /> Delete
                    </Button>
                  </div>
                ),
              },
            ]}
          />
        </Card>
      </div>
      {secretForm && <SecretForm key={secretForm === "new" ? "new" : secretForm.id} secret={secretForm === "new" ? undefined : secretForm} onClose={() => setSecretForm(null)} />}
      {variableForm && <VariableForm key={variableForm === "new" ? "new" : variableForm.id} variable={variableForm === "new" ? undefined : variableForm} onClose={() => setVariableForm(null)} />}
      {deleteSecret.dialog}
      {deleteVariable.dialog}
    </>
  );
}

function useFormErrors() {
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [alert, setAlert] = useState<string | null>(null);
  const onError = (err: unknown) => {
    showFormRefusal(err, setErrors, setAlert);
  };
  return { errors, setErrors, alert, onError };
}

function SecretForm({ secret, onClose }: { secret?: StoreEntry; onClose: () => void }) {
  const org = useOrg();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [name, setName] = useState(secret?.name ?? "");
  const [description, setDescription] = useState(secret?.description ?? "");
  const [value, setValue] = useState("");
  const [scope, setScope] = useState<Scope>(secret?.scope ?? "organization");
  const [chosen, setChosen] = useState<string[]>(secret?.environments ?? []);
  const { errors, setErrors, alert, onError } = useFormErrors();
  const done = async (message: string) => {
    await queryClient.invalidateQueries({ queryKey: trpc.secrets.list.queryKey() });
    toast.success(message);
    onClose();
  };
  const create = useMutation(trpc.secrets.create.mutationOptions({ onSuccess: (r) => done(`Saved secret ${r.name}`), onError }));
  const update = useMutation(trpc.secrets.update.mutationOptions({ onSuccess: () => done(value ? `Replaced the value of ${secret?.name}` : `Saved ${secret?.name}`), onError }));

  function submit(e: FormEvent) {
    e.preventDefault();
    const local: Record<string, string> = {};
    if (!secret && !STORE_NAME.test(name)) local.name = `Name must be ${STORE_NAME_HINT}`;
    if (!secret && !value) local.value = "Enter the secret's value";
    setErrors(local);
    if (Object.keys(local).length) return;
    const environments = scope === "environment" ? chosen : [];
    if (secret) update.mutate({ org: org.slug, id: secret.id, description, value: value || undefined, scope, environments });
    else create.mutate({ org: org.slug, name, description, value, scope, environments });
  }

  return (
    <Dialog open onClose={onClose} title={secret ? `Replace ${secret.name}` : "New secret"} description="The value is encrypted when saved and cannot be read back here. Jobs read it only where its scope allows.">
      <form onSubmit={submit} noValidate className="space-y-4">
        <TextField label="Name" value={name} onChange={(e) => setName(e.target.value)} error={errors.name} disabled={!!secret} hint={NAME_HINT} className="font-mono" placeholder="DB_PASSWORD" autoFocus={!secret} />
        <TextAreaField
          label={secret ? "New value" : "Value"}
          rows={3}
          value={value}
          onChange={(e) => setValue(e.target.value)}
          error={errors.value}
          autoComplete="off"
          spellCheck={false}
          placeholder={secret ? "Leave empty to keep the current value" : undefined}
          autoFocus={!!secret}
        />
        <TextField label="Description" value={description} onChange={(e) => setDescription(e.target.value)} error={errors.description} placeholder="Optional: what it unlocks" />
        <ScopePicker label="Who may use this secret" scope={scope} chosen={chosen} onScope={setScope} onChosen={setChosen} error={errors.environments ?? errors.scope} />
        <FormAlert message={alert} />
        <div className="flex justify-end gap-2 pt-2">
          <Button variant="secondary" onClick={onClose}>
            Cancel
          </Button>
          <Button type="submit" busy={create.isPending || update.isPending}>
            {secret ? "Save" : "Save secret"}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}

function VariableForm({ variable, onClose }: { variable?: StoreEntry; onClose: () => void }) {
  const org = useOrg();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [name, setName] = useState(variable?.name ?? "");
  const [description, setDescription] = useState(variable?.description ?? "");
  const [value, setValue] = useState(variable?.value ?? "");
  const [scope, setScope] = useState<Scope>(variable?.scope ?? "organization");
  const [chosen, setChosen] = useState<string[]>(variable?.environments ?? []);
  const { errors, setErrors, alert, onError } = useFormErrors();
  const done = async (message: string) => {
    await queryClient.invalidateQueries({ queryKey: trpc.variables.list.queryKey() });
    toast.success(message);
    onClose();
  };
  const create = useMutation(trpc.variables.create.mutationOptions({ onSuccess: (r) => done(`Saved variable ${r.name}`), onError }));
  const update = useMutation(trpc.variables.update.mutationOptions({ onSuccess: () => done(`Saved ${variable?.name}`), onError }));

  function submit(e: FormEvent) {
    e.preventDefault();
    if (!variable && !STORE_NAME.test(name)) return setErrors({ name: `Name must be ${STORE_NAME_HINT}` });
    setErrors({});
    const environments = scope === "environment" ? chosen : [];
    if (variable) update.mutate({ org: org.slug, id: variable.id, value, description, scope, environments });
    else create.mutate({ org: org.slug, name, value, description, scope, environments });
  }

  return (
    <Dialog open onClose={onClose} title={variable ? `Edit ${variable.name}` : "New variable"}>
      <form onSubmit={submit} noValidate className="space-y-4">
        <TextField label="Name" value={name} onChange={(e) => setName(e.target.value)} error={errors.name} disabled={!!variable} hint={NAME_HINT} className="font-mono" placeholder="AWS_REGION" autoFocus={!variable} />
        <TextField label="Value" value={value} onChange={(e) => setValue(e.target.value)} error={errors.value} className="font-mono" autoFocus={!!variable} />
        <TextField label="Description" value={description} onChange={(e) => setDescription(e.target.value)} error={errors.description} placeholder="Optional" />
        <ScopePicker label="Who may use this variable" scope={scope} chosen={chosen} onScope={setScope} onChosen={setChosen} error={errors.environments ?? errors.scope} />
        <FormAlert message={alert} />
        <div className="flex justify-end gap-2 pt-2">
          <Button variant="secondary" onClick={onClose}>
            Cancel
          </Button>
          <Button type="submit" busy={create.isPending || update.isPending}>
            Save variable
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
