"use client";
// The component's module: follow the latest in the registry for its kind (the organization's, else
// the platform's), or pin one registered version. Used by the create form and the edit form.
import Link from "next/link";
import { useQueries, useQuery } from "@tanstack/react-query";
import { newestModuleFirst } from "@/lib/modules";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { SelectField } from "@/components/ui/field";
import { moduleHref, shortSha, sourceWords, type ModuleVersionView } from "@/components/settings/module-ui";

export const moduleRefOf = (v: { name: string; version: string }) => `${v.name}@${v.version}`;

/** Every registered version for the kind, newest first, and the one "latest" resolves to now (the organization's registry first). */
export function useKindModules(kind: string | null) {
  const org = useOrg();
  const trpc = useTRPC();
  const list = useQuery({ ...trpc.modules.list.queryOptions({ org: org.slug, kind: kind ?? undefined }), enabled: !!kind });
  const rows = kind ? (list.data?.modules.filter((m) => m.kind === kind) ?? []) : [];
  const versions = useQueries({ queries: rows.map((m) => trpc.modules.versions.queryOptions({ org: org.slug, name: m.name })) });
  const all = versions
    .flatMap((q) => q.data?.versions ?? [])
    .filter((v) => v.kind === kind)
    .sort(newestModuleFirst);
  const latest = all.find((v) => v.scope === "organization") ?? all.find((v) => v.scope === "platform") ?? null;
  const pending = !!kind && (list.isPending || versions.some((q) => q.isPending));
  const error = list.error ?? versions.find((q) => q.error)?.error ?? null;
  return { versions: all, latest, pending, error };
}

/** A version as the picker lists it: `name@version · source · checksum`. */
const optionText = (v: ModuleVersionView) => {
  const src = sourceWords(v.source);
  return `${moduleRefOf(v)} · ${src.length > 60 ? `${src.slice(0, 57)}…` : src} · ${v.sha256 ? shortSha(v.sha256) : "no checksum"}`;
};

/** `value`: "" follows the latest; `name@version` pins that version. */
export function ModulePicker({ kind, value, onChange, error, disabled }: { kind: string; value: string; onChange: (v: string) => void; error?: string; disabled?: boolean }) {
  const org = useOrg();
  const { versions, latest, pending, error: loadError } = useKindModules(kind);
  const pinned = value ? versions.find((v) => moduleRefOf(v) === value) : undefined;
  const hint = loadError ? (
    `The registry could not be read: ${loadError.message}`
  ) : pending ? (
    "Loading the registered versions…"
  ) : !latest ? (
    <>
      No module is registered for {kind}: its jobs fail preflight until one is. Register one in{" "}
      <Link href={`/o/${org.slug}/settings/modules`} className="font-medium text-indigo-700 hover:underline">
        Settings → Modules
      </Link>
      .
    </>
  ) : value ? (
    <>
      Pinned: every job runs {value} until you change it
      {pinned && <> ({pinned.provisioner}, {pinned.scope === "organization" ? "your registry" : "platform"})</>}.{" "}
      {pinned && (
        <Link href={moduleHref(org.slug, pinned.name, pinned.version)} className="font-medium text-indigo-700 hover:underline">
          Its inputs and README
        </Link>
      )}
    </>
  ) : (
    <>
      Each job runs the newest version for {kind} in {latest.scope === "organization" ? "your organization's registry" : "the platform registry"} at the time it is queued, now{" "}
      <Link href={moduleHref(org.slug, latest.name, latest.version)} className="font-mono font-medium text-indigo-700 hover:underline">
        {moduleRefOf(latest)}
      </Link>
      .
    </>
  );
  return (
    <SelectField label="Module" value={value} onChange={(e) => onChange(e.target.value)} error={error} hint={hint} disabled={disabled || pending} data-testid="module-picker">
      <option value="">{latest ? `Latest from the registry (currently ${moduleRefOf(latest)})` : "Latest from the registry (none registered yet)"}</option>
      {versions.map((v) => (
        <option key={v.id} value={moduleRefOf(v)}>
          {optionText(v)}
        </option>
      ))}
      {value && !pinned && !pending && <option value={value}>{value} (no longer listed)</option>}
    </SelectField>
  );
}
