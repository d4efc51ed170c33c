"use client";
import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Cable, KeyRound, Pencil, Plus, ShieldCheck, Trash2 } from "lucide-react";
import { toast } from "sonner";
import { useTRPC } from "@/lib/trpc/client";
import { CONNECTION_PROVIDERS } from "@/lib/catalog";
import { useOrg } from "@/components/shell/org-context";
import { Badge, envTone } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { Dialog } from "@/components/ui/dialog";
import { showFormRefusal } from "@/components/ui/errors";
import { SelectField, TextField } from "@/components/ui/field";
import { QueryTable } from "@/components/ui/data-table";
import { Card, EmptyState, PageHeader } from "@/components/ui/page";
import { relativeTime } from "@/components/ui/time";
import { ScopePicker } from "./scope-picker";
import { useDeleteDialog } from "./delete-dialog";
import { FormAlert, RoleNote } from "./shared";
import { nameRefusal } from "@/lib/names";

interface Connection {
  id: string;
  name: string;
  provider: string;
  description: string;
  config: Record<string, string>;
  mode: "stored" | "runner";
  runnerId: string | null;
  runner: string | null;
  hasCredentials: boolean;
  updatedAt: Date;
  authorizations: { id: string; scope: "organization" | "environment"; environment: string | null }[];
  components: { name: string; environment: string }[];
}

export function ConnectionsPage() {
  const org = useOrg();
  const trpc = useTRPC();
  const list = useQuery(trpc.connections.list.queryOptions({ org: org.slug }));
  const [editing, setEditing] = useState<Connection | "new" | null>(null);
  const [authorizing, setAuthorizing] = useState<{ id: string; name: string; authorizations: Connection["authorizations"] } | null>(null);
  const admin = org.can("admin");
  const remove = useDeleteDialog<Connection, { org: string; id: string }>({
    title: (c) => `Delete ${c.name}?`,
    description: "Its stored credentials and authorizations are deleted with it. A connection that components deploy through cannot be deleted.",
    confirmLabel: "Delete connection",
    mutation: useMutation(trpc.connections.delete.mutationOptions()),
    variables: (c) => ({ org: org.slug, id: c.id }),
    refresh: [trpc.connections.list.queryKey()],
    done: (c) => `Deleted connection ${c.name}`,
  });

  return (
    <>
      <PageHeader
        title="Connections"
        description="Provider credentials that jobs deploy with, which runner uses them, and which environments may."
        actions={
          admin && (
            <Button onClick={() => setEditing("new")}>
              <Plus className="h-4 w-4" /> New connection
            </Button>
          )
        }
      />
      <RoleNote need="admin" what="Creating, editing, authorizing and deleting connections" />
      <Card flush>
        <QueryTable
          query={list}
          loading="Loading connections…"
          empty={
            <EmptyState
              icon={<Cable className="h-8 w-8" />}
              title="No connections yet"
              description="A connection holds the credentials of one cloud account (or a local folder). Components deploy through one."
              action={admin ? <Button onClick={() => setEditing("new")}>Create a connection</Button> : undefined}
            />
          }
          label="Connections"
          rowKey={(c) => c.id}
          rowClassName="align-top"
          columns={[
            {
              id: "name",
              header: "Name",
              // Descriptions and config values (folder paths, account ids) can be long: they truncate (w-0 keeps a
              // truncated line from widening the column) or wrap inside the cell, so the table fits the page.
              className: "min-w-48 max-w-xs whitespace-normal!",
              cell: (c) => (
                <>
                  <div className="font-medium break-words text-slate-900">{c.name}</div>
                  {c.description && (
                    <div className="w-0 min-w-full truncate text-xs text-slate-500" title={c.description}>
                      {c.description}
                    </div>
                  )}
                  <div className="mt-0.5 font-mono text-xs break-all text-slate-500">
                    {Object.entries(c.config)
                      .map(([k, v]) => `${k}=${v}`)
                      .join(" ")}
                  </div>
                </>
              ),
            },
            { id: "provider", header: "Provider", className: "whitespace-normal!", cell: (c) => CONNECTION_PROVIDERS[c.provider]?.title ?? c.provider },
            {
              id: "credentials",
              header: "Credentials",
              cell: (c) =>
                c.mode === "runner" ? (
                  <Badge tone="indigo">runner&apos;s own</Badge>
                ) : c.hasCredentials ? (
                  <Badge tone="green">
                    <KeyRound className="h-3 w-3" /> stored, encrypted
                  </Badge>
                ) : (CONNECTION_PROVIDERS[c.provider]?.credentialFields.length ?? 0) === 0 ? (
                  <span className="text-slate-400">none needed</span>
                ) : (
                  <Badge tone="red">missing</Badge>
                ),
            },
            { id: "runner", header: "Runner", className: "min-w-28 whitespace-normal! break-words", cell: (c) => c.runner ?? <span className="text-slate-500">organization default</span> },
            {
              id: "authorized",
              header: "Authorized for",
              className: "min-w-36 whitespace-normal!",
              cell: (c) =>
                c.authorizations.length === 0 ? (
                  <Badge tone="yellow">not authorized</Badge>
                ) : (
                  <div className="flex flex-wrap gap-1">
                    {c.authorizations.map((a) =>
                      a.scope === "organization" ? (
                        <Badge key={a.id} tone="blue">
                          whole organization
                        </Badge>
                      ) : (
                        <Badge key={a.id} tone={envTone(a.environment ?? "")}>
                          {a.environment}
                        </Badge>
                      ),
                    )}
                  </div>
                ),
            },
            {
              id: "usedBy",
              header: "Used by",
              className: "whitespace-normal!",
              title: (c) => c.components.map((x) => `${x.name} (${x.environment})`).join(", ") || undefined,
              cell: (c) => (c.components.length ? `${c.components.length} component${c.components.length === 1 ? "" : "s"}` : <span className="text-slate-400">none</span>),
            },
            admin && {
              id: "actions",
              header: "Actions",
              className: "text-right",
              cell: (c) => (
                <div className="flex justify-end gap-1">
                  <Button variant="ghost" size="sm" onClick={() => setEditing(c)} aria-label={`Edit ${c.name}`} title="Edit">
                    <Pencil className="h-3.5 w-3.5" />
                  </Button>
                  <Button variant="ghost" size="sm" onClick={() => setAuthorizing(c)} aria-label={`Authorize ${c.name}`} title="Who may use it">
                    <ShieldCheck className="h-3.5 w-3.5" />
                  </Button>
                  <Button variant="ghost" size="sm" onClick={() => remove.ask(c)} aria-label={`Delete ${c.name}`} title="Delete">
                    <Trash2 className="h-3.5 w-3.5" />
                  </Button>
                </div>
              ),
            },
          ]}
        />
      </Card>
      {editing && (
        <ConnectionForm
          key={editing === "new" ? "new" : editing.id}
          connection={editing === "new" ? undefined : editing}
          onClose={() => setEditing(null)}
          onCreated={(c) => setAuthorizing({ ...c, authorizations: [] })}
        />
      )}
      {authorizing && <AuthorizeDialog connection={authorizing} onClose={() => setAuthorizing(null)} />}
      {remove.dialog}
    </>
  );
}

function ConnectionForm({ connection, onClose, onCreated }: { connection?: Connection; onClose: () => void; onCreated: (c: { id: string; name: string }) => void }) {
  const org = useOrg();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const runners = useQuery(trpc.connections.runners.queryOptions({ org: org.slug }));
  const [name, setName] = useState(connection?.name ?? "");
  const [description, setDescription] = useState(connection?.description ?? "");
  const [provider, setProvider] = useState(connection?.provider ?? "");
  const [config, setConfig] = useState<Record<string, string>>(connection?.config ?? {});
  const [credentials, setCredentials] = useState<Record<string, string>>({});
  const [mode, setMode] = useState<"stored" | "runner">(connection?.mode ?? "stored");
  const [runnerId, setRunnerId] = useState(connection?.runnerId ?? "");
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [alert, setAlert] = useState<string | null>(null);
  const def = CONNECTION_PROVIDERS[provider];
  // Stored credentials are kept when the fields are left empty, unless the provider changes.
  const keepCredentials = !!connection?.hasCredentials && connection.provider === provider;

  const onError = (err: unknown) => {
    showFormRefusal(err, setErrors, setAlert);
  };
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.connections.list.queryKey() });
  const create = useMutation(
    trpc.connections.create.mutationOptions({
      onSuccess: async (r) => {
        await refresh();
        toast.success(`Created connection ${r.name}. Now choose who may use it.`);
        onClose();
        onCreated(r);
      },
      onError,
    }),
  );
  const update = useMutation(
    trpc.connections.update.mutationOptions({
      onSuccess: async (r) => {
        await refresh();
        toast.success(`Saved connection ${r.name}`);
        onClose();
      },
      onError,
    }),
  );

  function submit(e: FormEvent) {
    e.preventDefault();
    const local: Record<string, string> = {};
    const refusal = nameRefusal(name, "aws-prod");
    if (refusal) local.name = refusal;
    if (!def) local.provider = "Pick a provider";
    for (const f of def?.configFields ?? []) if (f.required && !config[f.name]) local[`config.${f.name}`] = `${f.name} is required: ${f.description}`;
    if (mode === "stored" && !keepCredentials) {
      for (const f of def?.credentialFields ?? []) if (f.required && !credentials[f.name]) local[`credentials.${f.name}`] = `${f.name} is required: ${f.description}`;
    }
    setErrors(local);
    setAlert(null);
    if (Object.keys(local).length) return;
    const cfg = Object.fromEntries((def?.configFields ?? []).map((f) => [f.name, config[f.name] ?? ""]).filter(([, v]) => v !== ""));
    const creds = mode === "stored" && Object.values(credentials).some(Boolean) ? credentials : undefined;
    const body = { org: org.slug, name, description, provider, config: cfg, credentials: creds, mode, runnerId: runnerId || null };
    if (connection) update.mutate({ ...body, id: connection.id });
    else create.mutate(body);
  }

  return (
    <Dialog open onClose={onClose} title={connection ? `Edit ${connection.name}` : "New connection"} description="Credentials are encrypted at rest and never shown again, not even to admins.">
      <form onSubmit={submit} noValidate className="space-y-4">
        <div className="grid gap-4 sm:grid-cols-2">
          <TextField label="Name" value={name} onChange={(e) => setName(e.target.value.toLowerCase())} error={errors.name} placeholder="aws-prod" autoFocus />
          <SelectField
            label="Provider"
            value={provider}
            onChange={(e) => {
              setProvider(e.target.value);
              setConfig({});
              setCredentials({});
            }}
            error={errors.provider}
          >
            <option value="">Choose a provider…</option>
            {Object.entries(CONNECTION_PROVIDERS).map(([id, p]) => (
              <option key={id} value={id}>
                {p.title}
              </option>
            ))}
          </SelectField>
        </div>
        <TextField label="Description" value={description} onChange={(e) => setDescription(e.target.value)} error={errors.description} placeholder="Optional: which account this is" />
        {def && (
          <>
            {def.configFields.map((f) => (
              <TextField
                key={f.name}
                label={f.name}
                value={config[f.name] ?? ""}
                onChange={(e) => setConfig({ ...config, [f.name]: e.target.value })}
                error={errors[`config.${f.name}`]}
                hint={f.description}
                className="font-mono"
              />
            ))}
            {def.credentialFields.length > 0 && (
              <fieldset className="space-y-3">
                <legend className="mb-1 text-sm font-medium text-slate-800">Credentials</legend>
                <div role="radiogroup" aria-label="Where credentials come from" className="grid gap-2 sm:grid-cols-2">
                  {(
                    [
                      ["stored", "Stored in Planton", "Encrypted with AES-256-GCM; handed to the runner for each job."],
                      ["runner", "From the runner", "A self-hosted runner discovers its own (an IAM role, a workload identity); nothing is stored."],
                    ] as const
                  ).map(([value, title, text]) => (
                    <button
                      key={value}
                      type="button"
                      role="radio"
                      aria-checked={mode === value}
                      onClick={() => setMode(value)}
                      className={cn("rounded-md p-3 text-left ring-1", mode === value ? "bg-indigo-50 ring-2 ring-indigo-500" : "ring-slate-200 hover:ring-slate-300")}
                    >
                      <div className="text-sm font-medium text-slate-900">{title}</div>
                      <div className="text-xs text-slate-500">{text}</div>
                    </button>
                  ))}
                </div>
                {mode === "stored" &&
                  def.credentialFields.map((f) => (
                    <TextField
                      key={f.name}
                      type="password"
                      autoComplete="off"
                      label={f.name}
                      value={credentials[f.name] ?? ""}
                      onChange={(e) => setCredentials({ ...credentials, [f.name]: e.target.value })}
                      error={errors[`credentials.${f.name}`]}
                      placeholder={keepCredentials ? "•••••••• stored — leave empty to keep" : undefined}
                      hint={f.description}
                    />
                  ))}
                {errors.credentials && <p role="alert" className="text-xs text-rose-600">{errors.credentials}</p>}
              </fieldset>
            )}
          </>
        )}
        <SelectField
          label="Runner"
          value={runnerId}
          onChange={(e) => setRunnerId(e.target.value)}
          error={errors.runnerId}
          hint={runners.data && runners.data.runners.length === 0 ? "This organization has no self-hosted runners yet; jobs run on its default runner." : "Jobs that deploy through this connection run on this runner."}
        >
          <option value="">Organization default ({runners.data?.organizationDefault ?? "…"})</option>
          {runners.data?.runners.map((r) => (
            <option key={r.id} value={r.id}>
              {r.name}
              {r.lastSeenAt ? ` — seen ${relativeTime(r.lastSeenAt)}` : " — never seen"}
            </option>
          ))}
        </SelectField>
        <FormAlert message={alert} />
        <div className="flex justify-end gap-2 pt-2">
          <Button variant="secondary" onClick={onClose}>
            Cancel
          </Button>
          <Button type="submit" busy={create.isPending || update.isPending}>
            {connection ? "Save connection" : "Create connection"}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}

function AuthorizeDialog({ connection, onClose }: { connection: { id: string; name: string; authorizations: Connection["authorizations"] }; onClose: () => void }) {
  const org = useOrg();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [wholeOrg, setWholeOrg] = useState(connection.authorizations.some((a) => a.scope === "organization"));
  const [chosen, setChosen] = useState<string[]>(connection.authorizations.filter((a) => a.scope === "environment").map((a) => a.environment ?? ""));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [alert, setAlert] = useState<string | null>(null);
  const authorize = useMutation(
    trpc.connections.authorize.mutationOptions({
      onSuccess: async (r) => {
        await queryClient.invalidateQueries({ queryKey: trpc.connections.list.queryKey() });
        toast.success(r.added || r.removed ? `Updated who may use ${connection.name}` : "Nothing changed");
        onClose();
      },
      onError: (err) => {
        showFormRefusal(err, setErrors, setAlert);
      },
    }),
  );
  return (
    <Dialog
      open
      onClose={onClose}
      title={`Who may use ${connection.name}?`}
      description="A job is refused before it runs when its component's environment may not use the connection."
      footer={
        <>
          <Button variant="secondary" onClick={onClose}>
            Cancel
          </Button>
          <Button busy={authorize.isPending} onClick={() => authorize.mutate({ org: org.slug, id: connection.id, organization: wholeOrg, environments: wholeOrg ? [] : chosen })}>
            Save authorization
          </Button>
        </>
      }
    >
      <ScopePicker
        label={`Who may use ${connection.name}`}
        scope={wholeOrg ? "organization" : "environment"}
        chosen={chosen}
        onScope={(s) => setWholeOrg(s === "organization")}
        onChosen={setChosen}
        error={errors.environments}
        wholeHint="Every environment, including ones created later."
        chosenHint="Only the environments ticked below; none ticked means no one may use it."
      />
      <FormAlert message={alert} />
    </Dialog>
  );
}
