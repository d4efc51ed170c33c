"use client";
// One module (Settings → Modules → a module): its versions with source, checksum and the components
// running each; the chosen version's README and inputs (the spec fields of its kind).
import { useState } from "react";
import Link from "next/link";
import { useRouter, useSearchParams } from "next/navigation";
import { useQuery } from "@tanstack/react-query";
import { Check, ChevronRight, Minus, Plus } from "lucide-react";
import { useTRPC } from "@/lib/trpc/client";
import { formatBytes } from "@/lib/display";
import { useOrg } from "@/components/shell/org-context";
import { Badge, envTone } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { DataTable } from "@/components/ui/data-table";
import { Card, EmptyState, ErrorState, LoadingState, PageHeader } from "@/components/ui/page";
import { SimpleMarkdown } from "@/components/ui/simple-markdown";
import { relativeTime } from "@/components/ui/time";
import { RegisterModuleDialog } from "./module-register-dialog";
import { Checksum, moduleHref, ScopeBadge, SourceCell, type ModuleVersionView } from "./module-ui";
import { SENSITIVE_VALUE } from "@/lib/secrets";

type Input = ModuleVersionView["inputs"][number];

export function ModuleDetailPage({ name }: { name: string }) {
  const org = useOrg();
  const trpc = useTRPC();
  const router = useRouter();
  const params = useSearchParams();
  const versions = useQuery(trpc.modules.versions.queryOptions({ org: org.slug, name }));
  const list = useQuery(trpc.modules.list.queryOptions({ org: org.slug }));
  const kinds = useQuery(trpc.catalog.kinds.queryOptions({ org: org.slug }));
  const [registering, setRegistering] = useState(false);
  if (versions.isPending) return <LoadingState label="Loading module…" />;
  if (versions.error || !versions.data) return <ErrorState error={versions.error} retry={() => versions.refetch()} />;

  const all = versions.data.versions;
  const asked = params.get("version");
  const selected = all.find((v) => v.version === asked) ?? all[0];
  const latest = all[0];
  const kind = kinds.data?.find((k) => k.kind === latest.kind);
  const may = (list.data?.mayRegister ?? false) && latest.scope === "organization";

  return (
    <>
      <PageHeader
        breadcrumb={
          <span className="flex items-center gap-1">
            <Link href={`/o/${org.slug}/settings/modules`} className="hover:underline">
              Modules
            </Link>
            <ChevronRight className="h-3.5 w-3.5" />
            <span>{name}</span>
          </span>
        }
        title={
          <span className="flex flex-wrap items-center gap-3">
            {name}
            <ScopeBadge scope={latest.scope} />
          </span>
        }
        description={
          <span>
            Provisions <span className="font-medium text-slate-800">{kind?.title ?? latest.kind}</span> <span className="font-mono text-xs">({latest.kind})</span>
            {kind?.scope === "organization" && <> — a kind of {org.name}&apos;s own, its fields from this module&apos;s variables</>} · {latest.provisioner} · latest {latest.version}
          </span>
        }
        actions={
          may && (
            <Button variant="secondary" onClick={() => setRegistering(true)}>
              <Plus className="h-4 w-4" /> Register a new version
            </Button>
          )
        }
      />
      <div className="space-y-6">
        <Card flush title="Versions" description="Newest first. Each was fetched once at registration and never changes; components following the latest move to a new version at their next job.">
          <DataTable
            label="Module versions"
            rows={all}
            rowKey={(v) => v.id}
            rowClassName="align-top"
            columns={[
              {
                id: "version",
                header: "Version",
                cell: (v) => (
                  <Link
                    href={moduleHref(org.slug, name, v.version)}
                    aria-current={v.id === selected.id ? "true" : undefined}
                    className={cn("font-mono text-sm hover:underline", v.id === selected.id ? "font-semibold text-indigo-800" : "text-indigo-700")}
                  >
                    {v.version}
                  </Link>
                ),
              },
              { id: "source", header: "Source", cell: (v) => <SourceCell source={v.source} /> },
              { id: "provisioner", header: "Provisioner", cell: (v) => v.provisioner },
              { id: "checksum", header: "Checksum", cell: (v) => <Checksum sha={v.sha256} /> },
              {
                id: "registered",
                header: "Registered",
                cell: (v) => (
                  <span title={new Date(v.createdAt).toLocaleString()}>
                    {relativeTime(v.createdAt)}
                    <span className="block text-xs text-slate-500">by {v.registeredBy}</span>
                  </span>
                ),
              },
              { id: "usedBy", header: "Used by", className: "whitespace-normal!", cell: (v) => <UsedBy version={v} /> },
            ]}
          />
        </Card>
        <VersionDetail version={selected} isLatest={selected.id === latest.id} />
      </div>
      {registering && (
        <RegisterModuleDialog
          initial={{ name, kind: latest.kind, provisioner: latest.provisioner }}
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

function UsedBy({ version: v }: { version: ModuleVersionView }) {
  const org = useOrg();
  if (!v.usedBy.length) return <span className="text-slate-400">no component</span>;
  return (
    <span className="flex flex-wrap gap-x-2 gap-y-1">
      {v.usedBy.map((c) => (
        <Link key={c.id} href={`/o/${org.slug}/components/${c.id}`} className="inline-flex items-center gap-1 text-indigo-700 hover:underline">
          {c.name} <Badge tone={envTone(c.environment)}>{c.environment}</Badge>
        </Link>
      ))}
    </span>
  );
}

function VersionDetail({ version: v, isLatest }: { version: ModuleVersionView; isLatest: boolean }) {
  const s = v.source;
  return (
    <section aria-label={`Version ${v.version}`} className="space-y-6">
      <h2 className="flex items-center gap-2 text-lg font-semibold text-slate-900" data-testid="module-version-title">
        {v.name}@{v.version} {isLatest && <Badge tone="green">latest</Badge>}
      </h2>
      <Card flush title="Inputs" description="The module's variables: the spec fields its components fill in, checked against its validation rules when a component is saved.">
        {v.inputs.length ? <InputsTable inputs={v.inputs} /> : <EmptyState title="No inputs" description="This module declares no variables: its components have an empty spec." />}
      </Card>
      <div className="grid gap-6 lg:grid-cols-3">
        <Card title="README" className="lg:col-span-2">
          {v.readme.trim() ? <SimpleMarkdown source={v.readme} /> : <p className="text-sm text-slate-500">This version has no README.md.</p>}
        </Card>
        <Card title="Source and bundle">
          <dl className="space-y-3 text-sm">
            <Meta label="Source">{s.kind === "git" ? "Git repository" : s.kind === "archive" ? "Uploaded archive" : "Builtin (shipped with Planton)"}</Meta>
            {s.kind === "git" && (
              <>
                <Meta label="Repository">
                  <span className="break-all font-mono text-xs">{s.url}</span>
                </Meta>
                <Meta label="Ref">
                  <span className="font-mono text-xs">{s.ref}</span>
                </Meta>
                <Meta label="Commit">
                  <span className="break-all font-mono text-xs" data-testid="module-commit">
                    {s.commit ?? "—"}
                  </span>
                </Meta>
                <Meta label="Subfolder">{s.path ? <span className="font-mono text-xs">{s.path}</span> : <span className="text-slate-500">the repository&apos;s root</span>}</Meta>
              </>
            )}
            {s.kind === "archive" && (
              <Meta label="File">
                <span className="font-mono text-xs">{s.archiveName}</span>
              </Meta>
            )}
            {s.kind === "builtin" && s.path && (
              <Meta label="Folder">
                <span className="font-mono text-xs">{s.path}</span>
              </Meta>
            )}
            <Meta label="Provisioner">{v.provisioner}</Meta>
            <Meta label="Bundle SHA-256">
              <Checksum sha={v.sha256} label="bundle SHA-256" />
              {v.sha256 && <span className="mt-0.5 block break-all font-mono text-[11px] text-slate-400">{v.sha256}</span>}
            </Meta>
            <Meta label="Files">
              {v.fileCount} file{v.fileCount === 1 ? "" : "s"}, {formatBytes(v.size)}
            </Meta>
            <Meta label="Registered">
              {new Date(v.createdAt).toLocaleString()} by {v.registeredBy}
            </Meta>
            <Meta label="Used by">
              <UsedBy version={v} />
            </Meta>
          </dl>
        </Card>
      </div>
    </section>
  );
}

function Meta({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div>
      <dt className="text-xs font-medium uppercase tracking-wide text-slate-500">{label}</dt>
      <dd className="mt-0.5 text-slate-800">{children}</dd>
    </div>
  );
}

const show = (v: unknown) => JSON.stringify(v);

function InputsTable({ inputs }: { inputs: Input[] }) {
  return (
    <DataTable
      label="Inputs"
      rows={inputs}
      rowKey={(i) => i.name}
      rowClassName="align-top"
      columns={[
        { id: "name", header: "Name", cellClassName: "font-mono text-slate-900", cell: (i) => i.name },
        { id: "type", header: "Type", cellClassName: "font-mono text-xs", cell: (i) => i.type },
        {
          id: "default",
          header: "Default",
          className: "max-w-48 whitespace-normal!",
          cell: (i) => ("default" in i && i.default !== undefined ? <code className="break-all font-mono text-xs">{i.sensitive ? SENSITIVE_VALUE : show(i.default)}</code> : <span className="text-slate-400">—</span>),
        },
        { id: "required", header: "Required", cell: (i) => (i.required ? <Check className="h-4 w-4 text-emerald-600" aria-label="required" /> : <Minus className="h-4 w-4 text-slate-300" aria-label="optional" />) },
        { id: "sensitive", header: "Sensitive", cell: (i) => (i.sensitive ? <Badge tone="yellow">sensitive</Badge> : <Minus className="h-4 w-4 text-slate-300" aria-label="not sensitive" />) },
        { id: "description", header: "Description", className: "min-w-48 whitespace-normal!", cell: (i) => i.description || <span className="text-slate-400">—</span> },
        {
          id: "validations",
          header: "Validations",
          className: "min-w-56 whitespace-normal!",
          cell: (i) =>
            i.validations.length ? (
              <ul className="space-y-1.5">
                {i.validations.map((val) => (
                  <li key={val.condition}>
                    <code className="block break-all font-mono text-[11px] text-slate-600">{val.condition}</code>
                    <span className="text-xs text-slate-700">{val.errorMessage}</span>
                  </li>
                ))}
              </ul>
            ) : (
              <span className="text-slate-400">—</span>
            ),
        },
      ]}
    />
  );
}
