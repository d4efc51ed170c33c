"use client";
import Link from "next/link";
import { usePathname, useRouter } from "next/navigation";
import { BookOpen, Boxes, Cable, ChevronsUpDown, Database, History, KeyRound, Layers, LockKeyhole, LogOut, Package, ScrollText, Server, ShieldCheck, SlidersHorizontal, Users, Variable } from "lucide-react";
import type { ComponentType, ReactNode } from "react";
import { authClient } from "@/lib/auth-client";
import { AwaitingApprovalBadge } from "@/components/jobs/awaiting-approval-badge";
import { cn } from "@/components/ui/cn";
import { useOrg } from "./org-context";

interface NavItem {
  href: string;
  label: string;
  icon: ComponentType<{ className?: string }>;
  badge?: ReactNode;
}

export function navSections(slug: string): { title?: string; items: NavItem[] }[] {
  const base = `/o/${slug}`;
  return [
    {
      items: [
        { href: `${base}/components`, label: "Infra Components", icon: Boxes },
        { href: `${base}/jobs`, label: "Infra Jobs", icon: History, badge: <AwaitingApprovalBadge /> },
        { href: `${base}/audit`, label: "Audit", icon: ScrollText },
      ],
    },
    {
      title: "Settings",
      items: [
        { href: `${base}/settings/environments`, label: "Environments", icon: Layers },
        { href: `${base}/settings/connections`, label: "Connections", icon: Cable },
        { href: `${base}/settings/runners`, label: "Runners", icon: Server },
        { href: `${base}/settings/state-backends`, label: "State Backends", icon: Database },
        { href: `${base}/settings/modules`, label: "Modules", icon: Package },
        { href: `${base}/settings/secrets`, label: "Secrets & Variables", icon: Variable },
        { href: `${base}/settings/flow-control`, label: "Flow Control", icon: SlidersHorizontal },
        { href: `${base}/settings/members`, label: "Members", icon: Users },
        { href: `${base}/settings/api-tokens`, label: "API Tokens", icon: KeyRound },
        { href: `${base}/api`, label: "API reference", icon: BookOpen },
      ],
    },
  ];
}

export function Sidebar() {
  const org = useOrg();
  const pathname = usePathname();
  const router = useRouter();
  return (
    <nav aria-label="Main" className="flex h-full w-64 shrink-0 flex-col bg-slate-900 text-slate-300">
      <div className="flex items-center gap-2 px-4 py-4">
        <div className="flex h-8 w-8 items-center justify-center rounded-lg bg-indigo-500 font-bold text-white">P</div>
        <span className="text-sm font-semibold text-white">Planton console</span>
      </div>
      <div className="px-3 pb-3">
        <label htmlFor="org-switcher" className="sr-only">
          Organization
        </label>
        <div className="relative">
          <select
            id="org-switcher"
            value={org.slug}
            onChange={(e) => router.push(`/o/${e.target.value}/components`)}
            className="w-full appearance-none rounded-md bg-slate-800 py-2 pl-3 pr-8 text-sm font-medium text-white ring-1 ring-slate-700 focus:ring-indigo-400"
          >
            {org.orgs.map((o) => (
              <option key={o.slug} value={o.slug}>
                {o.name}
              </option>
            ))}
          </select>
          <ChevronsUpDown className="pointer-events-none absolute right-2 top-2.5 h-4 w-4 text-slate-400" />
        </div>
      </div>
      <div className="flex-1 overflow-y-auto px-3">
        {navSections(org.slug).map((section, i) => (
          <div key={i} className="mb-4">
            {section.title && <div className="px-2 pb-1 text-xs font-semibold uppercase tracking-wider text-slate-500">{section.title}</div>}
            <ul className="space-y-0.5">
              {section.items.map((item) => {
                const active = pathname === item.href || pathname.startsWith(`${item.href}/`);
                return (
                  <li key={item.href}>
                    <Link
                      href={item.href}
                      aria-current={active ? "page" : undefined}
                      className={cn("flex items-center gap-2.5 rounded-md px-2 py-1.5 text-sm", active ? "bg-slate-800 text-white" : "hover:bg-slate-800/60 hover:text-white")}
                    >
                      <item.icon className="h-4 w-4" />
                      <span className="flex-1">{item.label}</span>
                      {item.badge}
                    </Link>
                  </li>
                );
              })}
            </ul>
          </div>
        ))}
      </div>
      <div className="border-t border-slate-800 px-3 py-3">
        <div className="flex items-center gap-2 px-2">
          <div className="flex h-8 w-8 items-center justify-center rounded-full bg-slate-700 text-xs font-semibold uppercase text-white">{org.user.name.slice(0, 2)}</div>
          <div className="min-w-0 flex-1">
            <div className="truncate text-sm text-white">{org.user.name}</div>
            <div className="flex items-center gap-1 truncate text-xs text-slate-400">
              <ShieldCheck className="h-3 w-3" /> {org.role}
            </div>
          </div>
          <Link href={`/o/${org.slug}/account`} aria-label="Change password" title="Change password" className="rounded p-1.5 text-slate-400 hover:bg-slate-800 hover:text-white">
            <LockKeyhole className="h-4 w-4" />
          </Link>
          <button
            type="button"
            aria-label="Sign out"
            title="Sign out"
            onClick={async () => {
              await authClient.signOut();
              router.replace("/sign-in");
              router.refresh();
            }}
            className="rounded p-1.5 text-slate-400 hover:bg-slate-800 hover:text-white"
          >
            <LogOut className="h-4 w-4" />
          </button>
        </div>
      </div>
    </nav>
  );
}
