"use client";
import { useEffect, useMemo, useState, type FormEvent } from "react";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { toast } from "sonner";
import { useTRPC } from "@/lib/trpc/client";
import { fieldsSchema } from "@/lib/catalog";
import { useOrg } from "@/components/shell/org-context";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { fieldErrorsOf, messageOf } from "@/components/ui/errors";
import { SelectField, TextField } from "@/components/ui/field";
import { Card, EmptyState, PageHeader, QueryState } from "@/components/ui/page";
import { ModulePicker } from "./module-picker";
import { SpecEditor } from "./spec-editor";
import { nameRefusal } from "@/lib/names";

export function CreateComponentForm() {
  const org = useOrg();
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const kinds = useQuery(trpc.catalog.kinds.queryOptions({ org: org.slug }));
  const envs = useQuery(trpc.environments.list.queryOptions({ org: org.slug }));
  const conns = useQuery(trpc.connections.list.queryOptions({ org: org.slug }));
  const [kind, setKind] = useState("");
  const [environment, setEnvironment] = useState("");
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [spec, setSpec] = useState<Record<string, unknown>>({});
  const [connection, setConnection] = useState("");
  const [module, setModule] = useState("");
  const [jsonErrors, setJsonErrors] = useState<Record<string, string>>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const selected = kinds.data?.find((k) => k.kind === kind);
  const matching = useMemo(() => conns.data?.filter((c) => !selected || c.provider === selected.provider) ?? [], [conns.data, selected]);
  const [connectionTouched, setConnectionTouched] = useState(false);
  // Until the user picks one, suggest the first connection of the provider the kind needs.
  useEffect(() => {
    if (!connectionTouched && selected) setConnection(matching[0]?.name ?? "");
  }, [connectionTouched, selected, matching]);

  // Which button submitted: the primary one deploys, "Save as draft" does not.
  const [deploying, setDeploying] = useState(true);
  const create = useMutation(
    trpc.components.create.mutationOptions({
      onSuccess: async ({ component: row, job }) => {
        await Promise.all([queryClient.invalidateQueries({ queryKey: trpc.components.list.queryKey() }), queryClient.invalidateQueries({ queryKey: trpc.jobs.pathKey() })]);
        if (job) {
          toast.success(`Created ${row.name}; its first update job is queued.`);
          router.push(`/o/${org.slug}/jobs/${job.id}`);
        } else {
          toast.success(`Saved ${row.name} as a draft; nothing was deployed.`);
          router.push(`/o/${org.slug}/components/${row.id}`);
        }
      },
      onError: (err) => {
        const fe = fieldErrorsOf(err);
        setErrors(fe);
        toast.error(messageOf(err));
      },
    }),
  );

  if (!org.can("engineer")) {
    return (
      <>
        <PageHeader title="New Infra Component" />
        <Card>
          <EmptyState title="You cannot create components" description={`Creating components needs the engineer role; you are a ${org.role} in ${org.slug}. Ask an admin to change your role.`} />
        </Card>
      </>
    );
  }

  function submit(e: FormEvent, deploy: boolean) {
    e.preventDefault();
    const local: Record<string, string> = {};
    if (!kind) local.kind = "Pick a catalog kind";
    if (!environment) local.environment = "Pick an environment";
    const refusal = nameRefusal(name);
    if (refusal) local.name = refusal;
    Object.assign(local, jsonErrors);
    if (selected) {
      const parsed = fieldsSchema(selected.fields).safeParse(spec);
      if (!parsed.success) for (const i of parsed.error.issues) local[i.path.length ? `spec.${i.path.join(".")}` : "spec"] ??= i.message;
    }
    setErrors(local);
    if (Object.keys(local).length) return;
    setDeploying(deploy);
    create.mutate({ org: org.slug, kind, environment, name, description, spec, connection: connection || undefined, module: module || null, deploy });
  }

  return (
    <>
      <PageHeader
        title="New Infra Component"
        description="Pick what to build, where, and how it is configured. Creating it queues its first update job, under the environment's flow control; save it as a draft to review it before anything runs."
        breadcrumb={
          <Link href={`/o/${org.slug}/components`} className="hover:underline">
            Infra Components
          </Link>
        }
      />
      <form onSubmit={(e) => submit(e, true)} noValidate className="space-y-6">
        <Card title="Catalog kind" description="What this component is. Each kind has its own spec and IaC module.">
          <QueryState query={kinds}>
            {(list) => (
              <div role="radiogroup" aria-label="Catalog kind" className="grid gap-3 sm:grid-cols-3">
                {list.map((k) => (
                  <button
                    key={k.kind}
                    type="button"
                    role="radio"
                    aria-checked={kind === k.kind}
                    onClick={() => {
                      setKind(k.kind);
                      setSpec({});
                      setJsonErrors({});
                      setModule("");
                      setConnectionTouched(false);
                    }}
                    className={cn("rounded-lg p-4 text-left ring-1 transition", kind === k.kind ? "bg-indigo-50 ring-2 ring-indigo-500" : "ring-slate-200 hover:ring-slate-300")}
                  >
                    <div className="flex items-center justify-between gap-2">
                      <span className="text-sm font-semibold text-slate-900">{k.title}</span>
                      {k.scope === "organization" && <span className="rounded-full bg-indigo-50 px-2 py-0.5 text-[11px] font-medium text-indigo-700 ring-1 ring-inset ring-indigo-200">your own</span>}
                    </div>
                    <div className="font-mono text-xs text-slate-500">{k.kind}</div>
                    <div className="mt-2 text-xs text-slate-600">{k.description}</div>
                    <div className="mt-2 text-xs text-slate-500">Provider: {k.provider}</div>
                  </button>
                ))}
              </div>
            )}
          </QueryState>
          {errors.kind && <p role="alert" className="mt-2 text-xs text-rose-600">{errors.kind}</p>}
        </Card>

        <Card title="Where">
          <div className="grid gap-4 sm:grid-cols-2">
            <SelectField label="Environment" value={environment} onChange={(e) => setEnvironment(e.target.value)} error={errors.environment}>
              <option value="">Choose an environment…</option>
              {envs.data?.map((e) => (
                <option key={e.id} value={e.name}>
                  {e.name}
                </option>
              ))}
            </SelectField>
            <TextField label="Name" value={name} onChange={(e) => setName(e.target.value.toLowerCase())} error={errors.name} hint="Unique within the environment: lower-case letters, digits and dashes." placeholder="my-component" />
            <div className="sm:col-span-2">
              <TextField label="Description" value={description} onChange={(e) => setDescription(e.target.value)} error={errors.description} placeholder="Optional: what this is for" />
            </div>
          </div>
        </Card>

        <Card
          title="Spec"
          description={
            !selected
              ? "Pick a kind to see its fields."
              : selected.scope === "organization"
                ? `${selected.kind} is your organization's own kind: its fields are its module's variables, and the module's validation rules are checked when you save.`
                : `Validated against the ${selected.kind} schema.`
          }
        >
          {selected ? (
            selected.fields.length ? (
              <SpecEditor key={selected.kind} fields={selected.fields} value={spec} onChange={setSpec} errors={errors} onJsonErrors={setJsonErrors} />
            ) : (
              <p className="text-sm text-slate-500">{selected.kind} has no fields: its module takes no inputs.</p>
            )
          ) : (
            <p className="text-sm text-slate-500">No kind selected yet.</p>
          )}
          {errors.spec && <p role="alert" className="mt-2 text-xs text-rose-600">{errors.spec}</p>}
        </Card>

        <Card title="Connection" description="The provider credentials jobs of this component deploy with.">
          <SelectField
            label="Connection"
            value={connection}
            onChange={(e) => {
              setConnection(e.target.value);
              setConnectionTouched(true);
            }}
            error={errors.connection}
            hint={selected && matching.length === 0 ? `No ${selected.provider} connection exists yet: create one in Settings → Connections.` : undefined}
          >
            <option value="">None</option>
            {matching.map((c) => (
              <option key={c.id} value={c.name}>
                {c.name} ({c.provider})
              </option>
            ))}
          </SelectField>
        </Card>

        <Card title="IaC module" description="The module its jobs run: the latest registered for the kind, or one version pinned.">
          {selected ? <ModulePicker kind={selected.kind} value={module} onChange={setModule} error={errors.module} /> : <p className="text-sm text-slate-500">Pick a kind to see its modules.</p>}
        </Card>

        <div className="flex flex-wrap items-center justify-end gap-2">
          <p className="mr-auto max-w-xl text-xs text-slate-500">
            Create and deploy queues an update job{environment ? ` under ${environment}'s flow control` : ""}: it may pause for approval where the policy says so. Save as draft runs nothing; deploy it from its page.
          </p>
          <Link href={`/o/${org.slug}/components`} className="rounded-md px-3.5 py-2 text-sm font-medium text-slate-700 hover:bg-slate-100">
            Cancel
          </Link>
          <Button variant="secondary" busy={create.isPending && !deploying} disabled={create.isPending} onClick={(e) => submit(e, false)}>
            Save as draft
          </Button>
          <Button type="submit" busy={create.isPending && deploying} disabled={create.isPending}>
            Create and deploy
          </Button>
        </div>
      </form>
    </>
  );
}
