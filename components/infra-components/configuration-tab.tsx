"use client";
// A component's configuration and its edit form. An edit is based on the version the form was opened
// at (baseVersion): when someone saved another version meanwhile the server refuses (409) and the form
// keeps what was typed, so the user reloads the newer version and saves again. Nothing is lost silently.
import { useMemo, useState } from "react";
import Link from "next/link";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Check, CheckCircle2, Minus, Pencil, RefreshCw, X } from "lucide-react";
import { toast } from "sonner";
import { PROTECT_DELETES_EXPLAIN } from "@/lib/delete-protection";
import { POLICY_TOGGLES, TOGGLE_TEXT } from "@/lib/flow-control";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { Button } from "@/components/ui/button";
import { fieldErrorsOf, messageOf } from "@/components/ui/errors";
import { SelectField, TextField } from "@/components/ui/field";
import { Card, QueryState } from "@/components/ui/page";
import { FormAlert } from "@/components/settings/shared";
import { ComponentActionButton, versionHref, type ComponentView } from "./component-ui";
import { ComponentModuleCard } from "./component-module-card";
import { ModulePicker } from "./module-picker";
import { SpecEditor } from "./spec-editor";

interface Draft {
  description: string;
  spec: Record<string, unknown>;
  connection: string;
  /** "" follows the registry's latest for the kind; `name@version` pins that version. */
  module: string;
  versionMessage: string;
}

const draftOf = (c: ComponentView): Draft => ({ description: c.description, spec: { ...(c.spec as Record<string, unknown>) }, connection: c.connection ?? "", module: c.module.pinned ?? "", versionMessage: "" });

/** What the last save did, shown until the next edit. */
interface Saved {
  version: number;
  changed: boolean;
  jobId: string | null;
  queuedBehind: string | null;
}

const isConflict = (err: unknown) => (err as { data?: { code?: string } } | null)?.data?.code === "CONFLICT";

export function ConfigurationTab({ component: c }: { component: ComponentView }) {
  const org = useOrg();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const policy = useQuery(trpc.components.flowControl.queryOptions({ org: org.slug, id: c.id }));
  const [editing, setEditing] = useState<{ draft: Draft; baseVersion: number } | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [conflict, setConflict] = useState<string | null>(null);
  const [refusal, setRefusal] = useState<string | null>(null);
  const [reloaded, setReloaded] = useState<number | null>(null);
  const [saved, setSaved] = useState<Saved | null>(null);
  const [deploying, setDeploying] = useState(true);
  const [jsonErrors, setJsonErrors] = useState<Record<string, string>>({});

  const open = () => {
    setEditing({ draft: draftOf(c), baseVersion: c.specVersion });
    setErrors({});
    setConflict(null);
    setRefusal(null);
    setReloaded(null);
    setSaved(null);
    setJsonErrors({});
  };
  const close = () => {
    setEditing(null);
    setErrors({});
    setConflict(null);
    setRefusal(null);
    setReloaded(null);
  };
  const set = (patch: Partial<Draft>) => setEditing((e) => (e ? { ...e, draft: { ...e.draft, ...patch } } : e));

  const save = useMutation(
    trpc.components.update.mutationOptions({
      onSuccess: async ({ component: next, job, queuedBehind }) => {
        await Promise.all([queryClient.invalidateQueries({ queryKey: trpc.components.pathKey() }), queryClient.invalidateQueries({ queryKey: trpc.jobs.pathKey() })]);
        const changed = next.specVersion !== editing?.baseVersion;
        setSaved({ version: next.specVersion, changed, jobId: job?.id ?? null, queuedBehind });
        toast.success(!changed ? "Nothing changed; no version was recorded." : job ? `Saved version ${next.specVersion}; its update job is queued.` : `Saved version ${next.specVersion} without deploying.`);
        close();
      },
      onError: (err) => {
        setErrors(fieldErrorsOf(err));
        if (isConflict(err)) {
          setConflict(messageOf(err));
          setRefusal(null);
        } else {
          setConflict(null);
          setRefusal(Object.keys(fieldErrorsOf(err)).length ? null : messageOf(err));
        }
      },
    }),
  );

  // Reload takes the newest version as the base; what the user typed stays in the form.
  const reload = async () => {
    const fresh = await queryClient.fetchQuery({ ...trpc.components.get.queryOptions({ org: org.slug, id: c.id }), staleTime: 0 });
    await queryClient.invalidateQueries({ queryKey: trpc.components.versions.queryKey({ org: org.slug, id: c.id }) });
    setEditing((e) => (e ? { ...e, baseVersion: fresh.specVersion } : e));
    setReloaded(fresh.specVersion);
    setConflict(null);
  };

  const submit = (deploy: boolean) => {
    if (!editing) return;
    if (Object.keys(jsonErrors).length) return setErrors(jsonErrors);
    setDeploying(deploy);
    const d = editing.draft;
    save.mutate({
      org: org.slug,
      id: c.id,
      baseVersion: editing.baseVersion,
      description: d.description,
      spec: d.spec,
      connection: d.connection || null,
      module: d.module || null,
      versionMessage: d.versionMessage,
      deploy,
    });
  };

  return (
    <div className="grid gap-6 lg:grid-cols-3">
      <div className="space-y-6 lg:col-span-2">
        {saved && !editing && <SavedNotice saved={saved} componentId={c.id} onDismiss={() => setSaved(null)} />}
        <Card
          title="Configuration"
          description={editing ? `Editing version ${editing.baseVersion}: saving records version ${editing.baseVersion + 1}.` : `Version ${c.specVersion}: the values the ${c.kind} module receives.`}
          actions={
            org.can("engineer") &&
            !editing && (
              <ComponentActionButton component={c} action="update" variant="secondary" size="sm" onClick={open}>
                <Pencil className="h-3.5 w-3.5" /> Edit
              </ComponentActionButton>
            )
          }
        >
          {editing ? (
            <EditForm
              component={c}
              draft={editing.draft}
              set={set}
              errors={errors}
              busy={save.isPending}
              deploying={deploying}
              onCancel={close}
              onSave={submit}
              onJsonErrors={setJsonErrors}
              alert={
                <>
                  {conflict && (
                    <div role="alert" data-testid="edit-conflict" className="flex flex-wrap items-start gap-3 rounded-md bg-amber-50 p-3 text-sm text-amber-950 ring-1 ring-amber-200">
                      <p className="min-w-0 flex-1">{conflict}</p>
                      <Button variant="secondary" size="sm" onClick={() => void reload()}>
                        <RefreshCw className="h-3.5 w-3.5" /> Reload
                      </Button>
                    </div>
                  )}
                  {reloaded !== null && !conflict && (
                    <p role="status" className="rounded-md bg-sky-50 p-3 text-sm text-sky-900 ring-1 ring-sky-200">
                      Reloaded: the component is at version {reloaded}. Your edits are kept; compare them with{" "}
                      <Link href={versionHref(org.slug, c.id, reloaded)} className="font-medium underline" target="_blank">
                        what changed in version {reloaded}
                      </Link>{" "}
                      and save again.
                    </p>
                  )}
                  <FormAlert message={refusal} />
                </>
              }
            />
          ) : (
            <ConfigurationView component={c} />
          )}
        </Card>
      </div>
      <div className="space-y-6">
        <ComponentModuleCard component={c} />
        <Card title="Connection">
          <p className="text-sm">{c.connection ? <span className="font-medium">{c.connection}</span> : <span className="text-slate-500">None: jobs will fail preflight until one is chosen.</span>}</p>
        </Card>
        <Card title="State backend">
          <p className="text-sm">{c.stateBackend ? <span className="font-medium">{c.stateBackend}</span> : <span className="text-slate-500">The organization&apos;s default for the module&apos;s provisioner.</span>}</p>
        </Card>
        <Card title="Flow control" description="The policy that applies to this component's jobs.">
          <QueryState query={policy}>
            {(p) => (
              <div className="space-y-3 text-sm">
                <p>
                  From the <span className="font-medium">{p.selector}</span> policy{p.selector !== "platform" && <> on <span className="font-medium">{p.target}</span></>}.
                </p>
                <ul className="space-y-1">
                  {POLICY_TOGGLES.map((key) => (
                    <li key={key} className="flex items-center gap-2">
                      {p.toggles[key] ? <Check className="h-4 w-4 text-emerald-600" aria-label="on" /> : <Minus className="h-4 w-4 text-slate-300" aria-label="off" />}
                      {TOGGLE_TEXT[key].label}
                    </li>
                  ))}
                </ul>
                {p.toggles.protectDeletes && <p className="text-xs text-slate-600">{PROTECT_DELETES_EXPLAIN}</p>}
                <div className="rounded-md bg-slate-50 p-3 text-xs text-slate-600">
                  <div className="mb-1 font-medium text-slate-700">Selectors visited</div>
                  <ol className="space-y-0.5">
                    {p.visited.map((v) => (
                      <li key={v.selector}>
                        {v.selector} {v.target !== v.selector && <span className="font-mono">{v.target}</span>}: {v.found ? <span className="font-medium text-emerald-700">policy found, used</span> : "no policy"}
                      </li>
                    ))}
                  </ol>
                </div>
              </div>
            )}
          </QueryState>
        </Card>
      </div>
    </div>
  );
}

function ConfigurationView({ component: c }: { component: ComponentView }) {
  const entries = Object.entries(c.spec as Record<string, unknown>);
  return (
    <dl className="divide-y divide-slate-100 text-sm">
      <div className="grid grid-cols-3 gap-4 py-2">
        <dt className="text-slate-500">Description</dt>
        <dd className="col-span-2 text-slate-900">{c.description || <span className="text-slate-400">none</span>}</dd>
      </div>
      {entries.length === 0 && (
        <div className="py-2 text-slate-500">
          The spec is empty: the module&apos;s defaults apply.
        </div>
      )}
      {entries.map(([k, v]) => (
        <div key={k} className="grid grid-cols-3 gap-4 py-2">
          <dt className="font-mono text-slate-500">{k}</dt>
          <dd className="col-span-2 break-all font-mono text-slate-900">{JSON.stringify(v)}</dd>
        </div>
      ))}
    </dl>
  );
}

function EditForm({
  component: c,
  draft,
  set,
  errors,
  busy,
  deploying,
  onCancel,
  onSave,
  onJsonErrors,
  alert,
}: {
  component: ComponentView;
  draft: Draft;
  set: (patch: Partial<Draft>) => void;
  errors: Record<string, string>;
  busy: boolean;
  deploying: boolean;
  onCancel: () => void;
  onSave: (deploy: boolean) => void;
  onJsonErrors: (errors: Record<string, string>) => void;
  alert: React.ReactNode;
}) {
  const org = useOrg();
  const trpc = useTRPC();
  const kind = useQuery(trpc.catalog.kind.queryOptions({ org: org.slug, kind: c.kind }));
  const conns = useQuery(trpc.connections.list.queryOptions({ org: org.slug }));
  const matching = useMemo(() => conns.data?.filter((x) => !kind.data || x.provider === kind.data.provider) ?? [], [conns.data, kind.data]);
  const deploys = c.status !== "draft";
  return (
    <QueryState query={kind} loading="Loading the kind's fields…">
      {(k) => (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            onSave(deploys);
          }}
          className="space-y-5"
          aria-label={`Edit ${c.name}`}
        >
          <TextField label="Description" value={draft.description} maxLength={500} onChange={(e) => set({ description: e.target.value })} error={errors.description} placeholder="Optional: what this is for" />
          <fieldset>
            <legend className="mb-2 text-sm font-semibold text-slate-900">Spec</legend>
            <SpecEditor fields={k.fields} value={draft.spec} onChange={(spec) => set({ spec })} errors={errors} onJsonErrors={onJsonErrors} />
            {errors.spec && <p role="alert" className="mt-2 text-xs text-rose-600">{errors.spec}</p>}
          </fieldset>
          <SelectField label="Connection" value={draft.connection} onChange={(e) => set({ connection: e.target.value })} error={errors.connection}>
            <option value="">None</option>
            {matching.map((x) => (
              <option key={x.id} value={x.name}>
                {x.name} ({x.provider})
              </option>
            ))}
            {draft.connection && !matching.some((x) => x.name === draft.connection) && <option value={draft.connection}>{draft.connection}</option>}
          </SelectField>
          <ModulePicker kind={c.kind} value={draft.module} onChange={(module) => set({ module })} error={errors.module} />
          <TextField
            label="Version message"
            hint="Why you change it, like a commit message; shown on the version and its update job."
            value={draft.versionMessage}
            maxLength={500}
            onChange={(e) => set({ versionMessage: e.target.value })}
            error={errors.versionMessage}
          />
          {alert}
          <div className="flex flex-wrap justify-end gap-2 border-t border-slate-100 pt-4">
            <Button variant="ghost" onClick={onCancel}>
              <X className="h-4 w-4" /> Cancel
            </Button>
            <Button variant="secondary" busy={busy && deploying !== deploys} disabled={busy} onClick={() => onSave(!deploys)}>
              {deploys ? "Save without deploying" : "Save and deploy"}
            </Button>
            <Button type="submit" busy={busy && deploying === deploys} disabled={busy}>
              {deploys ? "Save and deploy" : "Save draft"}
            </Button>
          </div>
        </form>
      )}
    </QueryState>
  );
}

function SavedNotice({ saved, componentId, onDismiss }: { saved: Saved; componentId: string; onDismiss: () => void }) {
  const org = useOrg();
  return (
    <div role="status" data-testid="saved-notice" className="flex items-start gap-3 rounded-lg bg-emerald-50 px-4 py-3 text-sm text-emerald-950 ring-1 ring-emerald-200">
      <CheckCircle2 className="mt-0.5 h-4 w-4 shrink-0 text-emerald-600" />
      <div className="min-w-0 flex-1">
        {saved.changed ? (
          <p>
            Saved{" "}
            <Link href={versionHref(org.slug, componentId, saved.version)} className="font-semibold underline underline-offset-2">
              version {saved.version}
            </Link>
            .{" "}
            {saved.jobId ? (
              <>
                Its update job{" "}
                <Link href={`/o/${org.slug}/jobs/${saved.jobId}`} className="font-mono font-medium underline underline-offset-2">
                  {saved.jobId}
                </Link>{" "}
                is queued{saved.queuedBehind ? <> behind <Link href={`/o/${org.slug}/jobs/${saved.queuedBehind}`} className="font-mono underline underline-offset-2">{saved.queuedBehind}</Link>, which runs first</> : null}.
              </>
            ) : (
              "It is not deployed: no job was queued."
            )}
          </p>
        ) : (
          <p>Nothing changed, so no version was recorded and no job was queued; the component stays at version {saved.version}.</p>
        )}
      </div>
      <button type="button" onClick={onDismiss} aria-label="Dismiss" className="rounded p-0.5 text-emerald-700 hover:bg-emerald-100">
        <X className="h-4 w-4" />
      </button>
    </div>
  );
}
