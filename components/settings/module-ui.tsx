"use client";
// Small pieces the module pages and the component's module picker share: a version's source in
// words, its checksum (short, copyable), its scope, and the types the registry answers with.
import { useState } from "react";
import { Check, Copy } from "lucide-react";
import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@/server/trpc/root";
import { Badge } from "@/components/ui/badge";

type Outputs = inferRouterOutputs<AppRouter>["modules"];
export type ModuleList = Outputs["list"];
export type ModuleRowView = ModuleList["modules"][number];
export type ModuleVersionView = Outputs["version"];
export type ModuleSourceView = ModuleVersionView["source"];

export const moduleHref = (org: string, name: string, version?: string) => `/o/${org}/settings/modules/${encodeURIComponent(name)}${version ? `?version=${encodeURIComponent(version)}` : ""}`;

export const shortSha = (sha: string) => sha.slice(0, 12);
const shortCommit = (c: string) => c.slice(0, 10);

/** Where a version's files came from, in one line: `https://…/repo.git@v1 → 3f2a9c1d0b`, `module.tar.gz`, `builtin`. */
export function sourceWords(s: ModuleSourceView): string {
  if (s.kind === "git") return `${s.url ?? "?"}${s.path ? `//${s.path}` : ""}@${s.ref ?? "?"}${s.commit ? ` → ${shortCommit(s.commit)}` : ""}`;
  if (s.kind === "archive") return s.archiveName ?? "uploaded archive";
  return s.path ? `builtin (${s.path})` : "builtin";
}

/** The source with its kind as a badge, for tables. */
export function SourceCell({ source }: { source: ModuleSourceView }) {
  return (
    <span className="flex max-w-[20rem] items-center gap-2">
      <Badge tone={source.kind === "git" ? "blue" : source.kind === "archive" ? "yellow" : "gray"}>{source.kind === "git" ? "git" : source.kind === "archive" ? "upload" : "builtin"}</Badge>
      <span className="min-w-0 truncate font-mono text-xs text-slate-600" title={sourceWords(source)}>
        {sourceWords(source)}
      </span>
    </span>
  );
}

export function ScopeBadge({ scope }: { scope: "platform" | "organization" }) {
  return <Badge tone={scope === "organization" ? "indigo" : "gray"}>{scope === "organization" ? "organization" : "platform"}</Badge>;
}

/** A checksum shown short, with a button that copies all of it. */
export function Checksum({ sha, label = "checksum" }: { sha: string | null; label?: string }) {
  const [copied, setCopied] = useState(false);
  if (!sha) return <span className="text-xs text-slate-400">none</span>;
  async function copy() {
    try {
      await navigator.clipboard.writeText(sha!);
      setCopied(true);
      setTimeout(() => setCopied(false), 2000);
    } catch {
      // No clipboard outside a secure context: the full value is in the title to select by hand.
    }
  }
  return (
    <span className="inline-flex items-center gap-1" data-testid="module-checksum" data-sha={sha}>
      <code className="font-mono text-xs text-slate-700" title={sha}>
        {shortSha(sha)}
      </code>
      <button type="button" onClick={copy} aria-label={`Copy ${label} ${sha}`} title={copied ? "Copied" : `Copy the full SHA-256`} className="rounded p-1 text-slate-400 hover:bg-slate-100 hover:text-slate-700">
        {copied ? <Check className="h-3.5 w-3.5 text-emerald-600" /> : <Copy className="h-3.5 w-3.5" />}
      </button>
    </span>
  );
}

