"use client";
// Settings → Modules: the organization's module registry and the platform's modules, by kind, with
// their latest version and the components using them; who may register (admins set it); Register.
import { useState } from "react";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Lock, Package, Plus } from "lucide-react";
import { toast } from "sonner";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { QueryTable, type Column } from "@/components/ui/data-table";
import { messageOf } from "@/components/ui/errors";
import { Checkbox } from "@/components/ui/field";
import { Card, EmptyState, PageHeader, QueryState } from "@/components/ui/page";
import { moduleHref, ScopeBadge, type ModuleList, type ModuleRowView } from "./module-ui";
import { RegisterModuleDialog } from "./module-register-dialog";
import { FormAlert } from "./shared";

/** Why this person cannot register, in words; null when they can. */
export function registerRefusal(org: { role: string; slug: string }, list: ModuleList | undefined): string | null {
  if (!list || list.mayRegister) return null;
  if (org.role === "engineer") return `Registering modules needs the admin role in ${org.slug}: an admin can let engineers register too, on this page.`;
  return `Registering modules needs the admin role${list.policy.engineersMayRegister ? " or the engineer role" : ""}; you are a ${org.role} in ${org.slug}. Ask an admin to change your role.`;
}

export function ModulesPage() {
  const org = useOrg();
  const trpc = useTRPC();
  const router = useRouter();
  const list = useQuery(trpc.modules.list.queryOptions({ org: org.slug }));
  const kinds = useQuery(trpc.catalog.kinds.queryOptions({ org: org.slug }));
  const [registering, setRegistering] = useState(false);
  const may = list.data?.mayRegister ?? false;
  const refusal = registerRefusal(org, list.data);
  const kindOf = (kind: string) => kinds.data?.find((k) => k.kind === kind);

  const columns: Column<ModuleRowView>[] = [
    {
      id: "name",
      header: "Module",
      cell: (m) => (
        <Link href={moduleHref(org.slug, m.name)} className="font-medium text-indigo-700 hover:underline">
          {m.name}
        </Link>
      ),
    },
    {
      id: "kind",
      header: "Kind",
      className: "whitespace-normal!",
      cell: (m) => {
        const k = kindOf(m.kind);
        return (
          <span className="flex flex-wrap items-center gap-x-2 gap-y-1">
            <span className="text-slate-900">{k?.title ?? m.kind}</span>
            <span className="font-mono text-xs text-slate-500">{m.kind}</span>
            {k?.scope === "organization" && <Badge tone="indigo">own kind</Badge>}
          </span>
        );
      },
    },
    { id: "provisioner", header: "Provisioner", cell: (m) => m.provisioner },
    {
      id: "latest",
      header: "Latest version",
      cell: (m) => (
        <Link href={moduleHref(org.slug, m.name, m.latestVersion)} className="font-mono text-xs text-indigo-700 hover:underline">
          {m.latestVersion}
        </Link>
      ),
    },
    { id: "versions", header: "Versions", className: "text-right", cell: (m) => m.versionCount },
    { id: "components", header: "Used by", cell: (m) => (m.componentsUsing ? `${m.componentsUsing} component${m.componentsUsing === 1 ? "" : "s"}` : <span className="text-slate-400">no component</span>) },
  ];
  const scoped = (scope: ModuleRowView["scope"]) => ({ ...list, data: list.data?.modules.filter((m) => m.scope === scope).sort((a, b) => a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name)) });

  return (
    <>
      <PageHeader
        title="Modules"
        description="The IaC modules your components run. A component runs its pinned module, else the latest in your organization's registry for its kind, else the platform's."
        actions={
          may && (
            <Button onClick={() => setRegistering(true)}>
              <Plus className="h-4 w-4" /> Register module
            </Button>
          )
        }
      />
      {refusal && (
        <p data-testid="register-refusal" className="mb-4 flex items-center gap-2 rounded-md bg-slate-50 px-3 py-2 text-sm text-slate-600 ring-1 ring-slate-200">
          <Lock className="h-4 w-4 shrink-0 text-slate-400" />
          {refusal}
        </p>
      )}
      <div className="space-y-6">
        <Card flush title={`${org.name}'s modules`} description="Registered from a git repository or an uploaded archive; each version is fetched once and never changes.">
          <QueryTable
            query={scoped("organization")}
            loading="Loading modules…"
            empty={
              <EmptyState
                icon={<Package className="h-8 w-8" />}
                title="No modules of your organization yet"
                description="Register a module from a git repository or a .tar.gz/.zip: its variables become the form of a kind of your own, or it provisions one of the platform's kinds in place of the platform's module."
                action={may ? <Button onClick={() => setRegistering(true)}>Register a module</Button> : undefined}
              />
            }
            label="Organization modules"
            rowKey={(m) => m.name}
            columns={columns}
          />
        </Card>
        <Card flush title="Platform modules" description="Shipped with Planton; used for a kind until your organization registers its own.">
          <QueryTable
            query={scoped("platform")}
            loading="Loading modules…"
            empty={<EmptyState icon={<Package className="h-8 w-8" />} title="No platform modules" description="This console ships no modules of its own." />}
            label="Platform modules"
            rowKey={(m) => m.name}
            columns={columns}
          />
        </Card>
        <RegisterPolicyCard list={list} />
      </div>
      {registering && (
        <RegisterModuleDialog
          onClose={() => setRegistering(false)}
          onRegistered={(v) => {
            setRegistering(false);
            router.push(moduleHref(org.slug, v.name, v.version));
          }}
        />
      )}
    </>
  );
}

/** Whether engineers may register: a toggle for admins, a sentence for everyone else. */
function RegisterPolicyCard({ list }: { list: { data: ModuleList | undefined; isPending: boolean; error: { message: string } | null; refetch: () => unknown } }) {
  const org = useOrg();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [alert, setAlert] = useState<string | null>(null);
  const setPolicy = useMutation(
    trpc.modules.setPolicy.mutationOptions({
      onSuccess: async (p) => {
        await queryClient.invalidateQueries({ queryKey: trpc.modules.list.queryKey() });
        setAlert(null);
        toast.success(p.engineersMayRegister ? "Engineers may register modules now" : "Only admins may register modules now");
      },
      onError: (err) => setAlert(messageOf(err)),
    }),
  );
  return (
    <Card title="Who may register" description="Registering fetches code that your runners will run: keep it to people you trust with that.">
      <QueryState query={list} loading="Loading…">
        {(l) =>
          org.can("admin") ? (
            <div className="space-y-3">
              <Checkbox
                id="engineers-may-register"
                label="Engineers may register modules"
                description="Admins always may. When on, engineers register module versions too; every registration is in the audit record."
                checked={l.policy.engineersMayRegister}
                disabled={setPolicy.isPending}
                onChange={(v) => setPolicy.mutate({ org: org.slug, engineersMayRegister: v })}
              />
              <FormAlert message={alert} />
            </div>
          ) : (
            <p className="text-sm text-slate-600" data-testid="register-policy">
              {l.policy.engineersMayRegister ? "Admins and engineers may register modules in this organization." : "Only admins may register modules in this organization; an admin can let engineers register too."}
            </p>
          )
        }
      </QueryState>
    </Card>
  );
}
