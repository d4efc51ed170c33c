"use client";
import { useId, useState } from "react";
import Link from "next/link";
import { usePathname } from "next/navigation";
import { AlertTriangle, Check, Copy, Lock } from "lucide-react";
import { useOrg } from "@/components/shell/org-context";
import { navSections } from "@/components/shell/sidebar";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import type { Role } from "@/lib/roles";

/** The settings pages as tabs: the same links as the sidebar's Settings section. */
export function SettingsNav() {
  const org = useOrg();
  const pathname = usePathname();
  const items = navSections(org.slug).find((s) => s.title === "Settings")?.items ?? [];
  return (
    <nav aria-label="Settings" className="-mt-2 mb-6 flex flex-wrap gap-x-1 border-b border-slate-200">
      {items.map((item) => {
        const active = pathname === item.href || pathname.startsWith(`${item.href}/`);
        return (
          <Link
            key={item.href}
            href={item.href}
            aria-current={active ? "page" : undefined}
            className={cn(
              "-mb-px flex items-center gap-1.5 whitespace-nowrap border-b-2 px-3 pb-2.5 pt-1 text-sm font-medium",
              active ? "border-indigo-600 text-indigo-700" : "border-transparent text-slate-500 hover:border-slate-300 hover:text-slate-700",
            )}
          >
            <item.icon className="h-4 w-4" />
            {item.label}
          </Link>
        );
      })}
    </nav>
  );
}

/** Says why the page's actions are missing for this role. */
export function RoleNote({ need, what }: { need: Role; what: string }) {
  const org = useOrg();
  if (org.can(need)) return null;
  return (
    <p className="mb-4 flex items-center gap-2 rounded-md bg-slate-50 px-3 py-2 text-sm text-slate-600 ring-1 ring-slate-200">
      <Lock className="h-4 w-4 shrink-0 text-slate-400" />
      {what} needs the {need} role; you are {org.role === "engineer" || org.role === "admin" ? "an" : "a"} {org.role} in {org.slug}. Ask an admin to change your role.
    </p>
  );
}

/** A refusal that belongs to no single field, shown inside the form. */
export function FormAlert({ message }: { message?: string | null }) {
  if (!message) return null;
  return (
    <div role="alert" className="flex items-start gap-2 rounded-md bg-rose-50 p-3 text-sm text-rose-800 ring-1 ring-rose-200">
      <AlertTriangle className="mt-0.5 h-4 w-4 shrink-0" />
      <p>{message}</p>
    </div>
  );
}

/** A value shown once (a token, an invitation link) with a copy button. */
export function CopyField({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  // Its own id: a dialog may show two (a runner's token and the command that starts it).
  const id = useId();
  async function copy() {
    try {
      await navigator.clipboard.writeText(value);
    } catch {
      // Without a secure context there is no clipboard API: select the text so Ctrl+C copies it.
      const el = document.getElementById(id) as HTMLInputElement | null;
      el?.select();
      document.execCommand?.("copy");
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 2000);
  }
  return (
    <div className="space-y-1">
      <label htmlFor={id} className="block text-sm font-medium text-slate-800">
        {label}
      </label>
      <div className="flex gap-2">
        <input
          id={id}
          readOnly
          value={value}
          onFocus={(e) => e.target.select()}
          className="block w-full rounded-md border-0 bg-slate-50 px-3 py-2 font-mono text-sm text-slate-900 ring-1 ring-inset ring-slate-300"
        />
        <Button variant="secondary" onClick={copy} aria-label={`Copy ${label.toLowerCase()}`}>
          {copied ? <Check className="h-4 w-4 text-emerald-600" /> : <Copy className="h-4 w-4" />}
          {copied ? "Copied" : "Copy"}
        </Button>
      </div>
    </div>
  );
}

