"use client";
// Create or edit a state backend: the form is drawn from STATE_BACKEND_KINDS (kind, the connection of
// its provider, its config fields); saving runs the access test first and shows each step's result.
import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { CheckCircle2, XCircle } from "lucide-react";
import { toast } from "sonner";
import { useTRPC } from "@/lib/trpc/client";
import { CONNECTION_PROVIDERS } from "@/lib/catalog";
import { STATE_BACKEND_KIND_NAMES, STATE_BACKEND_KINDS, type StateBackendKind } from "@/lib/state-backend-kinds";
import { useOrg } from "@/components/shell/org-context";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { showFormRefusal } from "@/components/ui/errors";
import { SelectField, TextField } from "@/components/ui/field";
import { FormAlert } from "./shared";
import { nameRefusal } from "@/lib/names";

export interface BackendRowView {
  name: string;
  kind: string;
  config: Record<string, unknown>;
  connection: string | null;
  components: number;
}

interface AccessCheck {
  ok: boolean;
  steps: { step: string; ok: boolean; detail: string }[];
  error: string | null;
}

const CREATABLE = STATE_BACKEND_KIND_NAMES.filter((k) => STATE_BACKEND_KINDS[k].creatable);
const STEP_LABEL: Record<string, string> = { open: "Open the store", write: "Write a probe state", read: "Read it back", compare: "Compare checksums", delete: "Delete the probe" };

/** The access test's steps as a list, each with its result. */
export function AccessSteps({ check }: { check: AccessCheck }) {
  return (
    <div aria-label="Access test" role="region" className="space-y-2 rounded-md bg-slate-50 p-3 ring-1 ring-slate-200">
      <p className="text-sm font-medium text-slate-800">Access test {check.ok ? "passed" : "failed"}</p>
      <ol className="space-y-1 text-sm">
        {check.steps.map((s) => (
          <li key={s.step} className="flex items-start gap-2" data-step={s.step} data-ok={s.ok}>
            {s.ok ? <CheckCircle2 className="mt-0.5 h-4 w-4 shrink-0 text-emerald-600" aria-label="passed" /> : <XCircle className="mt-0.5 h-4 w-4 shrink-0 text-rose-600" aria-label="failed" />}
            <span>
              <span className="font-medium text-slate-800">{STEP_LABEL[s.step] ?? s.step}</span>
              <span className="text-slate-500"> — {s.detail}</span>
            </span>
          </li>
        ))}
      </ol>
    </div>
  );
}

export function StateBackendForm({ backend, onClose }: { backend?: BackendRowView; onClose: () => void }) {
  const org = useOrg();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const connections = useQuery(trpc.connections.list.queryOptions({ org: org.slug }));
  const [name, setName] = useState(backend?.name ?? "");
  const [kind, setKind] = useState<string>(backend?.kind ?? "");
  const [connection, setConnection] = useState(backend?.connection ?? "");
  const [config, setConfig] = useState<Record<string, string>>(Object.fromEntries(Object.entries(backend?.config ?? {}).map(([k, v]) => [k, String(v ?? "")])));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [alert, setAlert] = useState<string | null>(null);
  const [check, setCheck] = useState<AccessCheck | null>(null);
  const def = STATE_BACKEND_KINDS[kind as StateBackendKind];
  const provider = def?.connectionProvider ?? null;
  const choices = (connections.data ?? []).filter((c) => c.provider === provider);

  const onError = (err: unknown) => {
    showFormRefusal(err, setErrors, setAlert);
  };
  const saved = async (verb: string, n: string) => {
    await queryClient.invalidateQueries({ queryKey: trpc.stateBackends.list.queryKey() });
    toast.success(`${verb} state backend ${n}`);
    onClose();
  };
  const create = useMutation(trpc.stateBackends.create.mutationOptions({ onSuccess: (r) => saved("Created", r.backend.name), onError }));
  const update = useMutation(trpc.stateBackends.update.mutationOptions({ onSuccess: (r) => saved("Saved", r.backend.name), onError }));
  const test = useMutation(trpc.stateBackends.testAccess.mutationOptions({ onError }));

  const body = () => ({
    kind,
    config: Object.fromEntries((def?.configFields ?? []).map((f) => [f.name, config[f.name] ?? ""]).filter(([, v]) => v !== "")),
    connection: provider ? connection || null : null,
  });

  function validate(): boolean {
    const local: Record<string, string> = {};
    const refusal = backend ? null : nameRefusal(name, "prod-s3");
    if (refusal) local.name = refusal;
    if (!def) local.kind = "Pick a kind";
    if (provider && !connection) local.connection = `Pick ${/^[aeiou]/.test(provider) ? "an" : "a"} ${provider} connection`;
    for (const f of def?.configFields ?? []) if ("required" in f && f.required && !config[f.name]) local[`config.${f.name}`] = `${f.name} is required: ${f.description}`;
    setErrors(local);
    setAlert(null);
    return !Object.keys(local).length;
  }

  // The test runs first so every step's result shows; only a passing test goes on to save (which tests again, server-side).
  async function submit(e: FormEvent) {
    e.preventDefault();
    setCheck(null);
    if (!validate()) return;
    let result: AccessCheck;
    try {
      result = await test.mutateAsync({ org: org.slug, name: name || undefined, ...body() });
    } catch {
      return;
    }
    setCheck(result);
    if (!result.ok) return setAlert(`${result.error} Nothing was saved.`);
    if (backend) update.mutate({ org: org.slug, name: backend.name, ...body() });
    else create.mutate({ org: org.slug, name, ...body() });
  }

  const busy = test.isPending || create.isPending || update.isPending;
  return (
    <Dialog open onClose={onClose} title={backend ? `Edit ${backend.name}` : "New state backend"} description="Saving writes, reads back and deletes a probe state first; nothing is saved unless that works. Credentials come from the connection.">
      <form onSubmit={submit} noValidate className="space-y-4">
        <div className="grid gap-4 sm:grid-cols-2">
          <TextField label="Name" value={name} onChange={(e) => setName(e.target.value.toLowerCase())} error={errors.name} placeholder="prod-s3" disabled={!!backend} autoFocus={!backend} />
          <SelectField
            label="Kind"
            value={kind}
            onChange={(e) => {
              setKind(e.target.value);
              setConfig({});
              setConnection("");
              setCheck(null);
            }}
            error={errors.kind}
            hint={def?.description}
          >
            <option value="">Choose a kind…</option>
            {CREATABLE.map((k) => (
              <option key={k} value={k}>
                {STATE_BACKEND_KINDS[k].title}
              </option>
            ))}
          </SelectField>
        </div>
        {def && provider && (
          <SelectField
            label="Connection"
            value={connection}
            onChange={(e) => setConnection(e.target.value)}
            error={errors.connection}
            hint={
              choices.length === 0 && connections.data
                ? `This organization has no ${CONNECTION_PROVIDERS[provider]?.title ?? provider} connection yet; create one in Settings → Connections.`
                : `The ${CONNECTION_PROVIDERS[provider]?.title ?? provider} connection its credentials come from.`
            }
          >
            <option value="">Choose a connection…</option>
            {choices.map((c) => (
              <option key={c.id} value={c.name}>
                {c.name}
              </option>
            ))}
          </SelectField>
        )}
        {def?.configFields.map((f) => (
          <TextField
            key={f.name}
            label={f.name}
            value={config[f.name] ?? ""}
            onChange={(e) => setConfig({ ...config, [f.name]: e.target.value })}
            error={errors[`config.${f.name}`]}
            hint={f.description}
            placeholder={"default" in f && f.default ? String(f.default) : undefined}
            className="font-mono"
          />
        ))}
        {errors.config && <p role="alert" className="text-xs text-rose-600">{errors.config}</p>}
        {check && <AccessSteps check={check} />}
        <FormAlert message={alert} />
        <div className="flex justify-end gap-2 pt-2">
          <Button variant="secondary" onClick={onClose}>
            Cancel
          </Button>
          <Button type="submit" busy={busy}>
            {backend ? "Test and save" : "Test and create"}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
