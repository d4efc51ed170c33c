"use client";
// Register a module version: name, version, the kind it provisions (an existing one or a new kind of
// the organization's own), provisioner, and its source (a git repository, or an uploaded .tar.gz/.zip
// sent base64). The server fetches the source once while the dialog shows it working; a refusal is
// shown beside its field (or above the buttons) and everything typed stays.
import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { FileArchive, GitBranch } from "lucide-react";
import { toast } from "sonner";
import { useTRPC } from "@/lib/trpc/client";
import { CONNECTION_PROVIDERS, PROVISIONERS } from "@/lib/catalog";
import { formatBytes } from "@/lib/display";
import { MODULE_LIMITS } from "@/lib/modules";
import { useOrg } from "@/components/shell/org-context";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { Dialog } from "@/components/ui/dialog";
import { fieldErrorsOf, showFormRefusal } from "@/components/ui/errors";
import { Field, SelectField, TextField, controlClass } from "@/components/ui/field";
import { Spinner } from "@/components/ui/spinner";
import type { ModuleVersionView } from "./module-ui";
import { FormAlert } from "./shared";

const NEW_KIND = "__new";
/** The refusals shown beside a field of this form ("source": the source as a whole, under its inputs). */
const SHOWN = new Set(["name", "version", "kind", "title", "description", "provider", "provisioner", "source", "source.url", "source.ref", "source.path", "source.fileName", "source.contentBase64"]);
type SourceType = "git" | "archive";

/** The file as base64, without the data URL's prefix. */
function readBase64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result).replace(/^data:[^,]*,/, ""));
    r.onerror = () => reject(r.error ?? new Error(`Could not read ${file.name}`));
    r.readAsDataURL(file);
  });
}

export function RegisterModuleDialog({
  initial,
  onClose,
  onRegistered,
}: {
  /** A new version of an existing module starts from its name, kind and provisioner. */
  initial?: { name: string; kind: string; provisioner: (typeof PROVISIONERS)[number] };
  onClose: () => void;
  onRegistered: (v: ModuleVersionView) => void;
}) {
  const org = useOrg();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const kinds = useQuery(trpc.catalog.kinds.queryOptions({ org: org.slug }));
  const [name, setName] = useState(initial?.name ?? "");
  const [version, setVersion] = useState("");
  const [kindChoice, setKindChoice] = useState(initial?.kind ?? "");
  const [newKind, setNewKind] = useState({ kind: "", title: "", description: "", provider: "" });
  const [provisioner, setProvisioner] = useState<(typeof PROVISIONERS)[number]>(initial?.provisioner ?? "builtin");
  const [sourceType, setSourceType] = useState<SourceType>("git");
  const [git, setGit] = useState({ url: "", ref: "", path: "" });
  const [file, setFile] = useState<File | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [alert, setAlert] = useState<string | null>(null);
  const creatingKind = kindChoice === NEW_KIND;
  /** An edit to the source clears the refusal of the source that was sent. */
  const editGit = (patch: Partial<typeof git>) => {
    setGit({ ...git, ...patch });
    setErrors(({ source: _s, "source.url": _u, "source.ref": _r, "source.path": _p, ...rest }) => rest);
  };

  const register = useMutation(
    trpc.modules.register.mutationOptions({
      onSuccess: async (v) => {
        await Promise.all([queryClient.invalidateQueries({ queryKey: trpc.modules.pathKey() }), queryClient.invalidateQueries({ queryKey: trpc.catalog.pathKey() })]);
        toast.success(`Registered ${v.name}@${v.version} (${v.inputs.length} input${v.inputs.length === 1 ? "" : "s"})`);
        onRegistered(v);
      },
      onError: (err) => {
        showFormRefusal(err, (fe) => setErrors(withFileErrors(fe)), setAlert);
        // A refusal for a field this form has no place for is shown above the buttons.
        const stray = Object.entries(fieldErrorsOf(err)).find(([k]) => !SHOWN.has(k));
        if (stray) setAlert(stray[1]);
      },
    }),
  );
  const [reading, setReading] = useState(false);
  const busy = reading || register.isPending;

  async function submit(e: FormEvent) {
    e.preventDefault();
    const local: Record<string, string> = {};
    if (!name.trim()) local.name = "Give the module a name, e.g. team-bucket";
    if (!version.trim()) local.version = "Give a semantic version, e.g. 1.0.0";
    if (!kindChoice) local.kind = "Pick the kind it provisions, or a new kind of your own";
    if (creatingKind && !newKind.kind.trim()) local.kind = "Name the new kind in PascalCase, e.g. TeamBucket";
    if (sourceType === "git") {
      if (!git.url.trim()) local["source.url"] = "Give the repository's URL";
      if (!git.ref.trim()) local["source.ref"] = "Give a branch, tag or commit";
    } else if (!file) local["source.file"] = "Choose a .tar.gz or .zip file";
    else if (file.size > MODULE_LIMITS.archiveBytes) local["source.file"] = `${file.name} is ${formatBytes(file.size)}; an archive may be at most ${formatBytes(MODULE_LIMITS.archiveBytes)}`;
    setErrors(local);
    setAlert(null);
    if (Object.keys(local).length) return;

    let source: { type: "git"; url: string; ref: string; path?: string } | { type: "archive"; fileName: string; contentBase64: string };
    if (sourceType === "git") source = { type: "git", url: git.url.trim(), ref: git.ref.trim(), path: git.path.trim() || undefined };
    else {
      setReading(true);
      try {
        source = { type: "archive", fileName: file!.name, contentBase64: await readBase64(file!) };
      } catch (err) {
        setErrors({ "source.file": (err as Error).message });
        return;
      } finally {
        setReading(false);
      }
    }
    register.mutate({
      org: org.slug,
      name: name.trim(),
      version: version.trim(),
      kind: creatingKind ? newKind.kind.trim() : kindChoice,
      provisioner,
      ...(creatingKind ? { title: newKind.title.trim() || undefined, description: newKind.description.trim() || undefined, provider: newKind.provider || undefined } : {}),
      source,
    });
  }

  return (
    <Dialog
      open
      onClose={onClose}
      title="Register a module version"
      description="The server fetches the source once and keeps its files with their SHA-256. A registered version never changes: a new commit is a new version."
    >
      <form onSubmit={submit} noValidate className="space-y-4" aria-label="Register a module version">
        <div className="grid gap-4 sm:grid-cols-2">
          <TextField label="Name" value={name} onChange={(e) => setName(e.target.value.toLowerCase())} error={errors.name} placeholder="team-bucket" autoFocus={!initial} data-autofocus={!initial || undefined} disabled={busy} />
          <TextField label="Version" value={version} onChange={(e) => setVersion(e.target.value)} error={errors.version} placeholder="1.0.0" autoFocus={!!initial} data-autofocus={initial ? true : undefined} disabled={busy} />
          <SelectField label="Kind" value={kindChoice} onChange={(e) => setKindChoice(e.target.value)} error={creatingKind ? undefined : errors.kind} disabled={busy} hint={creatingKind ? "Its fields come from the module's variables." : undefined}>
            <option value="">Choose a kind…</option>
            {kinds.data?.map((k) => (
              <option key={k.kind} value={k.kind}>
                {k.title} ({k.kind}
                {k.scope === "organization" ? ", your own" : ""})
              </option>
            ))}
            <option value={NEW_KIND}>A new kind of your own…</option>
          </SelectField>
          <SelectField label="Provisioner" value={provisioner} onChange={(e) => setProvisioner(e.target.value as typeof provisioner)} error={errors.provisioner} disabled={busy}>
            {PROVISIONERS.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </SelectField>
        </div>

        {creatingKind && (
          <fieldset className="grid gap-4 rounded-md bg-slate-50 p-3 ring-1 ring-slate-200 sm:grid-cols-2">
            <legend className="sr-only">The new kind</legend>
            <TextField label="Kind name" value={newKind.kind} onChange={(e) => setNewKind({ ...newKind, kind: e.target.value })} error={errors.kind} placeholder="TeamBucket" hint="PascalCase, e.g. TeamBucket" disabled={busy} />
            <TextField label="Title" value={newKind.title} onChange={(e) => setNewKind({ ...newKind, title: e.target.value })} error={errors.title} placeholder="Team bucket" hint="What the create form calls it" disabled={busy} />
            <TextField label="Kind description" value={newKind.description} onChange={(e) => setNewKind({ ...newKind, description: e.target.value })} error={errors.description} placeholder="Optional" disabled={busy} />
            <SelectField label="Connection provider" value={newKind.provider} onChange={(e) => setNewKind({ ...newKind, provider: e.target.value })} error={errors.provider} disabled={busy}>
              <option value="">From the module&apos;s providers</option>
              {Object.entries(CONNECTION_PROVIDERS).map(([id, p]) => (
                <option key={id} value={id}>
                  {p.title}
                </option>
              ))}
            </SelectField>
          </fieldset>
        )}

        <fieldset className="space-y-3">
          <legend className="mb-2 text-sm font-medium text-slate-800">Source</legend>
          <div role="radiogroup" aria-label="Source" className="grid grid-cols-2 gap-2">
            {(
              [
                ["git", "Git repository", GitBranch],
                ["archive", "Upload .tar.gz / .zip", FileArchive],
              ] as const
            ).map(([t, label, Icon]) => (
              <button
                key={t}
                type="button"
                role="radio"
                aria-checked={sourceType === t}
                disabled={busy}
                onClick={() => setSourceType(t)}
                className={cn("flex items-center gap-2 rounded-md px-3 py-2 text-left text-sm font-medium ring-1", sourceType === t ? "bg-indigo-50 text-indigo-800 ring-2 ring-indigo-500" : "text-slate-700 ring-slate-200 hover:ring-slate-300")}
              >
                <Icon className="h-4 w-4" /> {label}
              </button>
            ))}
          </div>
          {sourceType === "git" ? (
            <div className="grid gap-4 sm:grid-cols-2">
              <div className="sm:col-span-2">
                <TextField label="Repository URL" value={git.url} onChange={(e) => editGit({ url: e.target.value })} error={errors["source.url"]} placeholder="https://github.com/acme/modules.git" className="font-mono" disabled={busy} />
              </div>
              <TextField label="Ref" value={git.ref} onChange={(e) => editGit({ ref: e.target.value })} error={errors["source.ref"]} placeholder="v1.0.0" hint="A branch, tag or commit" className="font-mono" disabled={busy} />
              <TextField label="Subfolder" value={git.path} onChange={(e) => editGit({ path: e.target.value })} error={errors["source.path"]} placeholder="optional, e.g. modules/bucket" className="font-mono" disabled={busy} />
            </div>
          ) : (
            <Field label="Archive" htmlFor="module-archive" error={errors["source.file"]} hint={file ? `${file.name}, ${formatBytes(file.size)}` : `A .tar.gz, .tgz or .zip of the module's folder, at most ${formatBytes(MODULE_LIMITS.archiveBytes)}.`}>
              <input
                id="module-archive"
                type="file"
                accept=".tar.gz,.tgz,.zip,application/gzip,application/zip"
                disabled={busy}
                aria-invalid={!!errors["source.file"] || undefined}
                onChange={(e) => setFile(e.target.files?.[0] ?? null)}
                className={cn(controlClass(errors["source.file"]), "file:mr-3 file:rounded file:border-0 file:bg-slate-100 file:px-2 file:py-1 file:text-sm file:font-medium file:text-slate-700")}
              />
            </Field>
          )}
          {errors.source && (
            <p id="module-source-error" role="alert" className="text-xs text-rose-600">
              {errors.source}
            </p>
          )}
        </fieldset>

        {busy && (
          <div role="status" data-testid="register-progress" className="flex items-center gap-2 rounded-md bg-sky-50 p-3 text-sm text-sky-900 ring-1 ring-sky-200">
            <Spinner className="h-4 w-4 shrink-0" />
            {reading
              ? `Reading ${file?.name}…`
              : sourceType === "git"
                ? `Fetching ${git.url.trim()} at ${git.ref.trim()} and reading its variables… (up to ${MODULE_LIMITS.gitSeconds} s)`
                : `Unpacking ${file?.name} and reading its variables…`}
          </div>
        )}
        <FormAlert message={alert} />
        <div className="flex justify-end gap-2 border-t border-slate-100 pt-4">
          <Button variant="secondary" onClick={onClose} disabled={busy}>
            Cancel
          </Button>
          <Button type="submit" busy={busy}>
            Register version
          </Button>
        </div>
      </form>
    </Dialog>
  );
}

/** An archive's refusals (its name, its content) belong beside the file input. */
function withFileErrors(fe: Record<string, string>): Record<string, string> {
  const out = { ...fe };
  for (const k of ["source.fileName", "source.contentBase64"]) if (out[k]) out["source.file"] ??= out[k];
  return out;
}
