"use client";
import { useState } from "react";
import Link from "next/link";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Check, Minus } from "lucide-react";
import { toast } from "sonner";
import { PROTECT_DELETES_EXPLAIN } from "@/lib/delete-protection";
import { POLICY_TOGGLES, TOGGLE_TEXT } from "@/lib/flow-control";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { Badge, envTone } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { fieldErrorsOf, messageOf } from "@/components/ui/errors";
import { Card, PageHeader, QueryState } from "@/components/ui/page";
import { Tabs } from "@/components/ui/tabs";
import { ActivityTab } from "@/components/audit/activity-tab";
import { ComponentJobs } from "@/components/jobs/component-jobs";
import { RunJobButton } from "@/components/jobs/run-job-dialog";
import { SpecEditor } from "./spec-editor";
import { StateTab } from "./state-tab";

type Tab = "configuration" | "jobs" | "state" | "activity";

export function ComponentDetail({ id }: { id: string }) {
  const org = useOrg();
  const trpc = useTRPC();
  const params = useSearchParams();
  const router = useRouter();
  const pathname = usePathname();
  const tab = (params.get("tab") as Tab) ?? "configuration";
  const component = useQuery(trpc.components.get.queryOptions({ org: org.slug, id }));

  return (
    <QueryState query={component} loading="Loading component…">
      {(c) => (
        <>
          <PageHeader
            breadcrumb={
              <Link href={`/o/${org.slug}/components`} className="hover:underline">
                Infra Components
              </Link>
            }
            title={
              <span className="flex items-center gap-3">
                {c.name} <Badge tone={envTone(c.environment)}>{c.environment}</Badge>
              </span>
            }
            description={
              <span>
                <span className="font-mono">{c.kind}</span> · <span className="font-mono text-slate-500">{c.id}</span>
                {c.description && <> · {c.description}</>}
              </span>
            }
            actions={<RunJobButton componentId={id} />}
          />
          <Tabs<Tab>
            label="Component sections"
            value={tab}
            onChange={(t) => router.replace(`${pathname}?tab=${t}`)}
            tabs={[
              { id: "configuration", label: "Configuration" },
              { id: "jobs", label: "Infra Jobs" },
              { id: "state", label: "State" },
              { id: "activity", label: "Activity" },
            ]}
          />
          <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`}>
            {tab === "configuration" && <ConfigurationTab id={id} />}
            {tab === "jobs" && <ComponentJobs componentId={id} />}
            {tab === "state" && <StateTab componentId={id} configuredBackend={c.stateBackend} />}
            {tab === "activity" && <ActivityTab filter={{ component: id }} what={`${c.name} and its jobs`} />}
          </div>
        </>
      )}
    </QueryState>
  );
}

function ConfigurationTab({ id }: { id: string }) {
  const org = useOrg();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const component = useQuery(trpc.components.get.queryOptions({ org: org.slug, id }));
  const policy = useQuery(trpc.components.flowControl.queryOptions({ org: org.slug, id }));
  const c = component.data!;
  const kind = useQuery(trpc.catalog.kind.queryOptions({ org: org.slug, kind: c.kind }));
  const [editing, setEditing] = useState(false);
  const [spec, setSpec] = useState<Record<string, unknown>>(c.spec as Record<string, unknown>);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const save = useMutation(
    trpc.components.update.mutationOptions({
      onSuccess: async () => {
        await queryClient.invalidateQueries({ queryKey: trpc.components.get.queryKey({ org: org.slug, id }) });
        setEditing(false);
        setErrors({});
        toast.success("Spec saved. Run an update job to apply it.");
      },
      onError: (err) => {
        setErrors(fieldErrorsOf(err));
        toast.error(messageOf(err));
      },
    }),
  );

  return (
    <div className="grid gap-6 lg:grid-cols-3">
      <Card
        className="lg:col-span-2"
        title="Spec"
        description={`Values the ${c.kind} module receives.`}
        actions={
          org.can("engineer") &&
          !editing && (
            <Button variant="secondary" size="sm" onClick={() => setEditing(true)}>
              Edit spec
            </Button>
          )
        }
      >
        {editing && kind.data ? (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              save.mutate({ org: org.slug, id, spec });
            }}
            className="space-y-4"
          >
            <SpecEditor fields={kind.data.fields} value={spec} onChange={setSpec} errors={errors} />
            <div className="flex justify-end gap-2">
              <Button
                variant="ghost"
                onClick={() => {
                  setEditing(false);
                  setSpec(c.spec as Record<string, unknown>);
                  setErrors({});
                }}
              >
                Cancel
              </Button>
              <Button type="submit" busy={save.isPending}>
                Save spec
              </Button>
            </div>
          </form>
        ) : (
          <dl className="divide-y divide-slate-100 text-sm">
            {Object.entries(c.spec as Record<string, unknown>).map(([k, v]) => (
              <div key={k} className="grid grid-cols-3 gap-4 py-2">
                <dt className="font-mono text-slate-500">{k}</dt>
                <dd className="col-span-2 font-mono text-slate-900">{JSON.stringify(v)}</dd>
              </div>
            ))}
          </dl>
        )}
      </Card>
      <div className="space-y-6">
        <Card title="Connection">
          <p className="text-sm">{c.connection ? <span className="font-medium">{c.connection}</span> : <span className="text-slate-500">None: jobs will fail preflight until one is chosen.</span>}</p>
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
