"use client";
import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Check, ChevronRight, Minus, Pencil, Plus, SlidersHorizontal, Trash2 } from "lucide-react";
import { toast } from "sonner";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { Badge, type BadgeTone } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { Dialog } from "@/components/ui/dialog";
import { showFormRefusal } from "@/components/ui/errors";
import { Checkbox, SelectField } from "@/components/ui/field";
import { QueryTable, type Column } from "@/components/ui/data-table";
import { Card, EmptyState, PageHeader, QueryState } from "@/components/ui/page";
import { relativeTime } from "@/components/ui/time";
import { PLATFORM_DEFAULT, POLICY_TOGGLES, TOGGLE_TEXT, togglesOf, type PolicySelector, type PolicyToggles } from "@/lib/flow-control";
import { useDeleteDialog } from "./delete-dialog";
import { FormAlert, RoleNote } from "./shared";

type Toggles = PolicyToggles;
type Selector = PolicySelector;

export const TOGGLES = POLICY_TOGGLES.map((name) => ({ name, ...TOGGLE_TEXT[name] }));

const SELECTOR_TONE: Record<Selector, BadgeTone> = { platform: "gray", organization: "blue", environment: "yellow", component: "indigo" };

interface Policy extends Toggles {
  id: string;
  selector: Selector;
  selectorId: string;
  target: string;
  updatedAt: Date;
}

export function FlowControlPage() {
  const org = useOrg();
  const trpc = useTRPC();
  const list = useQuery(trpc.flowControl.list.queryOptions({ org: org.slug }));
  const [editing, setEditing] = useState<Policy | "new" | null>(null);
  const admin = org.can("admin");
  const remove = useDeleteDialog<Policy, { org: string; id: string }>({
    title: (p) => `Remove the ${p.selector} policy${p.selector !== "organization" ? ` of ${p.target}` : ""}?`,
    description: "Jobs it covered follow the next less specific policy from then on.",
    confirmLabel: "Remove policy",
    mutation: useMutation(trpc.flowControl.delete.mutationOptions()),
    variables: (p) => ({ org: org.slug, id: p.id }),
    refresh: [trpc.flowControl.list.queryKey(), trpc.components.flowControl.queryKey()],
    done: () => "Removed the policy; the next less specific one now applies",
  });

  return (
    <>
      <PageHeader
        title="Flow Control"
        description="How jobs run: whether they wait for approval, refresh first, preview and pause before applying. The most specific policy wins — component, then environment, then organization, then platform — and policies are never merged."
        actions={
          admin && (
            <Button onClick={() => setEditing("new")}>
              <Plus className="h-4 w-4" /> New policy
            </Button>
          )
        }
      />
      <RoleNote need="admin" what="Setting and removing flow-control policies" />
      <div className="space-y-6">
        <Card title="Policies" flush>
          <QueryTable
            query={list}
            loading="Loading policies…"
            empty={<EmptyState icon={<SlidersHorizontal className="h-8 w-8" />} title="No policies" description="Without any policy, the platform default applies: preview before apply, nothing else." />}
            label="Flow-control policies"
            rowKey={(p) => p.id}
            columns={[
              {
                id: "target",
                header: "Applies to",
                cell: (p) => (
                  <>
                    <Badge tone={SELECTOR_TONE[p.selector]}>{p.selector}</Badge> <span className="ml-1 font-medium text-slate-900">{p.selector === "platform" || p.selector === "organization" ? "" : p.target}</span>
                  </>
                ),
              },
              ...TOGGLES.map(
                (t): Column<Policy> => ({
                  id: t.name,
                  header: t.label,
                  headerTitle: t.explain,
                  className: "text-center",
                  cell: (p) => (p[t.name] ? <Check aria-label="on" className="mx-auto h-4 w-4 text-emerald-600" /> : <Minus aria-label="off" className="mx-auto h-4 w-4 text-slate-300" />),
                }),
              ),
              { id: "updated", header: "Updated", title: (p) => new Date(p.updatedAt).toLocaleString(), cell: (p) => relativeTime(p.updatedAt) },
              admin && {
                id: "actions",
                header: "Actions",
                className: "text-right",
                cell: (p) =>
                  p.selector === "platform" ? (
                    <span className="text-xs text-slate-400" title="The platform default is fixed; override it with an organization policy.">
                      read-only
                    </span>
                  ) : (
                    <div className="flex justify-end gap-1">
                      <Button variant="ghost" size="sm" onClick={() => setEditing(p)} aria-label={`Edit the ${p.selector} policy ${p.target}`}>
                        <Pencil className="h-3.5 w-3.5" /> Edit
                      </Button>
                      <Button variant="ghost" size="sm" onClick={() => remove.ask(p)} aria-label={`Remove the ${p.selector} policy ${p.target}`}>
                        <Trash2 className="h-3.5 w-3.5" /> Remove
                      </Button>
                    </div>
                  ),
              },
            ]}
          />
        </Card>
        <WhichPolicy />
      </div>
      {editing && <PolicyForm key={editing === "new" ? "new" : editing.id} policy={editing === "new" ? undefined : editing} policies={(list.data as Policy[] | undefined) ?? []} onClose={() => setEditing(null)} />}
      {remove.dialog}
    </>
  );
}

/** "Which policy applies to component X, and why": the winner and each selector looked at. */
function WhichPolicy() {
  const org = useOrg();
  const trpc = useTRPC();
  const components = useQuery(trpc.components.list.queryOptions({ org: org.slug }));
  const [componentId, setComponentId] = useState("");
  const resolved = useQuery({ ...trpc.components.flowControl.queryOptions({ org: org.slug, id: componentId }), enabled: !!componentId });
  return (
    <Card title="Which policy applies?" description="Pick a component to see the policy its next job will follow, and why.">
      <div className="max-w-md">
        <SelectField label="Infra Component" value={componentId} onChange={(e) => setComponentId(e.target.value)} hint={components.data?.components.length === 0 ? "This organization has no components yet." : undefined}>
          <option value="">Choose a component…</option>
          {components.data?.components.map((c) => (
            <option key={c.id} value={c.id}>
              {c.name} ({c.environment})
            </option>
          ))}
        </SelectField>
      </div>
      {componentId && (
        <div className="mt-5">
          <QueryState query={resolved} loading="Resolving…">
            {(r) => (
              <div className="space-y-4">
                <ol aria-label="Selectors visited, most specific first" className="flex flex-wrap items-center gap-2 text-sm">
                  {r.visited.map((v, i) => {
                    const winner = v.found && v.selector === r.selector;
                    const skipped = !v.found && r.visited.slice(0, i).some((x) => x.found);
                    return (
                      <li key={v.selector} className="flex items-center gap-2">
                        {i > 0 && <ChevronRight className="h-4 w-4 text-slate-300" aria-hidden />}
                        <span
                          className={cn(
                            "rounded-md px-2.5 py-1.5 ring-1",
                            winner ? "bg-emerald-50 font-medium text-emerald-800 ring-emerald-300" : skipped ? "text-slate-400 ring-slate-200" : "bg-slate-50 text-slate-500 ring-slate-200",
                          )}
                        >
                          {v.selector} <span className="font-mono text-xs">{v.target}</span>: {winner ? "policy found — applies" : v.found ? "found" : "no policy"}
                        </span>
                      </li>
                    );
                  })}
                </ol>
                <p className="text-sm text-slate-700">
                  The <strong>{r.selector}</strong> policy{r.selector !== "platform" && <> of <strong>{r.target}</strong></>} applies
                  {r.visited.filter((v) => !v.found).length > 0 && r.selector !== r.visited[0].selector
                    ? `, because no more specific policy exists (${r.visited
                        .slice(0, r.visited.findIndex((v) => v.selector === r.selector))
                        .map((v) => v.selector)
                        .join(", ")} had none)`
                    : ""}
                  . Less specific policies are not merged in.
                </p>
                <ul className="grid gap-2 sm:grid-cols-2">
                  {TOGGLES.map((t) => (
                    <li key={t.name} className="flex items-start gap-2 text-sm">
                      {r.toggles[t.name] ? <Check className="mt-0.5 h-4 w-4 shrink-0 text-emerald-600" aria-label="on" /> : <Minus className="mt-0.5 h-4 w-4 shrink-0 text-slate-300" aria-label="off" />}
                      <span>
                        <span className={cn("font-medium", r.toggles[t.name] ? "text-slate-900" : "text-slate-500")}>{t.label}</span>
                        <span className="block text-xs text-slate-500">{t.explain}</span>
                      </span>
                    </li>
                  ))}
                </ul>
              </div>
            )}
          </QueryState>
        </div>
      )}
    </Card>
  );
}

function PolicyForm({ policy, policies, onClose }: { policy?: Policy; policies: Policy[]; onClose: () => void }) {
  const org = useOrg();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const envs = useQuery(trpc.environments.list.queryOptions({ org: org.slug }));
  const components = useQuery(trpc.components.list.queryOptions({ org: org.slug }));
  const [selector, setSelector] = useState<Exclude<Selector, "platform">>(policy && policy.selector !== "platform" ? policy.selector : "environment");
  // Environment policies are named by environment, component policies by component id.
  const [target, setTarget] = useState(policy?.selector === "environment" ? policy.target : policy?.selector === "component" ? policy.selectorId : "");
  const [toggles, setToggles] = useState<Toggles>(policy ? togglesOf(policy) : PLATFORM_DEFAULT);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [alert, setAlert] = useState<string | null>(null);
  const existing = !policy
    ? policies.find((p) => p.selector === selector && (selector === "organization" || (selector === "environment" ? p.target === target : p.selectorId === target)))
    : undefined;
  const set = useMutation(
    trpc.flowControl.set.mutationOptions({
      onSuccess: async () => {
        await queryClient.invalidateQueries({ queryKey: trpc.flowControl.list.queryKey() });
        await queryClient.invalidateQueries({ queryKey: trpc.components.flowControl.queryKey() });
        toast.success("Saved the flow-control policy");
        onClose();
      },
      onError: (err) => {
        showFormRefusal(err, setErrors, setAlert);
      },
    }),
  );

  function submit(e: FormEvent) {
    e.preventDefault();
    if (selector !== "organization" && !target) return setErrors({ target: `Pick the ${selector} this policy is for` });
    set.mutate({ org: org.slug, selector, target: selector === "organization" ? undefined : target, toggles });
  }

  return (
    <Dialog open onClose={onClose} title={policy ? `Edit the ${policy.selector} policy` : "New flow-control policy"} description="The policy replaces, for its target, every less specific one.">
      <form onSubmit={submit} noValidate className="space-y-4">
        <div className="grid gap-4 sm:grid-cols-2">
          <SelectField
            label="Applies to"
            value={selector}
            disabled={!!policy}
            onChange={(e) => {
              setSelector(e.target.value as Exclude<Selector, "platform">);
              setTarget("");
            }}
            error={errors.selector}
          >
            <option value="organization">The organization</option>
            <option value="environment">An environment</option>
            <option value="component">A component</option>
          </SelectField>
          {selector === "environment" && (
            <SelectField label="Environment" value={target} disabled={!!policy} onChange={(e) => setTarget(e.target.value)} error={errors.target}>
              <option value="">Choose…</option>
              {envs.data?.map((e) => (
                <option key={e.id} value={e.name}>
                  {e.name}
                </option>
              ))}
            </SelectField>
          )}
          {selector === "component" && (
            <SelectField label="Component" value={target} disabled={!!policy} onChange={(e) => setTarget(e.target.value)} error={errors.target}>
              <option value="">Choose…</option>
              {components.data?.components.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name} ({c.environment})
                </option>
              ))}
            </SelectField>
          )}
        </div>
        {existing && <p className="rounded-md bg-amber-50 px-3 py-2 text-xs text-amber-800 ring-1 ring-amber-200">This target already has a policy; saving replaces it.</p>}
        <fieldset className="space-y-3">
          <legend className="mb-1 text-sm font-medium text-slate-800">Toggles</legend>
          {TOGGLES.map((t) => (
            <Checkbox key={t.name} label={t.label} description={t.explain} checked={toggles[t.name]} onChange={(v) => setToggles({ ...toggles, [t.name]: v })} />
          ))}
        </fieldset>
        <FormAlert message={alert} />
        <div className="flex justify-end gap-2 pt-2">
          <Button variant="secondary" onClick={onClose}>
            Cancel
          </Button>
          <Button type="submit" busy={set.isPending}>
            Save policy
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
