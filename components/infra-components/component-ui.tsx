"use client";
// Small pieces the component pages share: the component's shape as the API answers it, its status
// badge, a job reference, and a button whose enabled state and reason come from the component's `actions`.
import { useId, type ReactNode } from "react";
import Link from "next/link";
import type { inferRouterOutputs } from "@trpc/server";
import { COMPONENT_STATUS_WORDS, type ComponentAction, type ComponentStatus } from "@/lib/component-lifecycle";
import type { AppRouter } from "@/server/trpc/root";
import { useOrg } from "@/components/shell/org-context";
import { Badge, type BadgeTone } from "@/components/ui/badge";
import { Button, type ButtonProps } from "@/components/ui/button";
import { relativeTime } from "@/components/ui/time";
import { operationLabel, ResultBadge, StatusBadge } from "@/components/jobs/job-ui";

type Outputs = inferRouterOutputs<AppRouter>["components"];
export type ComponentView = Outputs["get"];
export type ComponentVersion = Outputs["versions"]["versions"][number];
export type ComponentJobRef = NonNullable<ComponentView["lastJob"]>;

const STATUS_TONE: Record<ComponentStatus, BadgeTone> = {
  draft: "indigo",
  active: "green",
  deleting: "yellow",
  delete_failed: "red",
  deleted: "gray",
  forgotten: "gray",
};

export function ComponentStatusBadge({ status }: { status: ComponentStatus }) {
  const words = COMPONENT_STATUS_WORDS[status];
  return (
    <span data-testid="component-status" title={words.description}>
      <Badge tone={STATUS_TONE[status]}>{words.label}</Badge>
    </span>
  );
}

/** The URL of one spec version on the component's Versions tab (the job page links here). */
export const versionHref = (org: string, componentId: string, version: number) => `/o/${org}/components/${componentId}?tab=versions&version=${version}`;

/** A job as one line: its operation, linked, then where it is (status, or its result once completed). */
export function JobRef({ job, showWhen = true }: { job: ComponentJobRef; showWhen?: boolean }) {
  const org = useOrg();
  return (
    <span className="inline-flex flex-wrap items-center gap-1.5">
      <Link href={`/o/${org.slug}/jobs/${job.id}`} className="font-medium text-indigo-700 hover:underline" title={job.id}>
        {operationLabel(job.operation)}
      </Link>
      {job.status === "completed" ? <ResultBadge result={job.result} /> : <StatusBadge status={job.status} />}
      {showWhen && (
        <span className="text-xs text-slate-500" title={new Date(job.createdAt).toLocaleString()}>
          {relativeTime(job.createdAt)}
        </span>
      )}
    </span>
  );
}

/** The API's clause ("forgetting a component needs the admin role…") as a sentence of its own. */
export function whySentence(component: { name: string }, why: string | null): string {
  if (!why) return "Not possible now.";
  return `${why.startsWith(component.name) ? why : why[0].toUpperCase() + why.slice(1)}.`;
}

/**
 * A button for one of the component's actions. When the action is not allowed it stays focusable
 * (aria-disabled, so a keyboard user reaches it) and says why, in the API's words.
 */
export function ComponentActionButton({
  component,
  action,
  children,
  onClick,
  ...rest
}: { component: ComponentView; action: ComponentAction; children: ReactNode; onClick: () => void } & Omit<ButtonProps, "onClick" | "disabled">) {
  const reasonId = useId();
  const { allowed, why } = component.actions[action];
  if (allowed) {
    return (
      <Button onClick={onClick} {...rest}>
        {children}
      </Button>
    );
  }
  const reason = whySentence(component, why);
  return (
    <span className="group relative inline-flex">
      <Button aria-disabled="true" aria-describedby={reasonId} title={reason} className="cursor-not-allowed opacity-50" {...rest}>
        {children}
      </Button>
      <span id={reasonId} role="tooltip" className="pointer-events-none absolute right-0 top-full z-20 mt-1 hidden w-72 rounded-md bg-slate-900 px-3 py-2 text-xs font-normal text-white shadow-lg group-hover:block group-focus-within:block">
        {reason}
      </span>
    </span>
  );
}
