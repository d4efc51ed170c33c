"use client";
// The banner under a component's header that says where it is in its life (lib/component-lifecycle.ts)
// and offers the next step: deploy a draft, follow the destroy job, retry a failed delete.
import type { ReactNode } from "react";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { Archive, CircleAlert, FileClock, Loader2, Rocket } from "lucide-react";
import { toast } from "sonner";
import { COMPONENT_STATUS_WORDS } from "@/lib/component-lifecycle";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { cn } from "@/components/ui/cn";
import { messageOf } from "@/components/ui/errors";
import { relativeTime } from "@/components/ui/time";
import { ComponentActionButton, type ComponentView } from "./component-ui";
import { DeleteButton } from "./delete-dialogs";

const TONES = {
  indigo: "bg-indigo-50 text-indigo-950 ring-indigo-200",
  amber: "bg-amber-50 text-amber-950 ring-amber-200",
  rose: "bg-rose-50 text-rose-900 ring-rose-200",
  slate: "bg-slate-100 text-slate-800 ring-slate-200",
} as const;

function Banner({ tone, icon, title, children, action }: { tone: keyof typeof TONES; icon: ReactNode; title: ReactNode; children: ReactNode; action?: ReactNode }) {
  return (
    <div role="status" data-testid="component-banner" className={cn("mb-6 flex flex-wrap items-start gap-3 rounded-lg px-4 py-3 text-sm ring-1", TONES[tone])}>
      <span className="mt-0.5 shrink-0">{icon}</span>
      <div className="min-w-0 flex-1">
        <p className="font-semibold">{title}</p>
        <div className="mt-0.5">{children}</div>
      </div>
      {action && <div className="flex shrink-0 items-center gap-2">{action}</div>}
    </div>
  );
}

export function ComponentBanner({ component: c }: { component: ComponentView }) {
  const org = useOrg();
  const words = COMPONENT_STATUS_WORDS[c.status];
  const jobLink = (id: string, text: string) => (
    <Link href={`/o/${org.slug}/jobs/${id}`} className="font-medium underline underline-offset-2">
      {text}
    </Link>
  );
  const when = (d: Date | string | null) => (d ? <span title={new Date(d).toLocaleString()}>{relativeTime(d)}</span> : "at a time not recorded");

  switch (c.status) {
    case "draft":
      return (
        <Banner tone="indigo" icon={<FileClock className="h-4 w-4" />} title={`${words.label}: version ${c.specVersion} is not deployed`} action={org.can("engineer") && <DeployButton component={c} />}>
          {words.description}
        </Banner>
      );
    case "active": {
      // A version saved without deploying: the last job ran an older one.
      const last = c.lastJob;
      if (!last || last.status !== "completed" || last.specVersion === null || last.specVersion >= c.specVersion) return null;
      return (
        <Banner tone="indigo" icon={<FileClock className="h-4 w-4" />} title={`Version ${c.specVersion} is saved but not deployed`} action={org.can("engineer") && <DeployButton component={c} />}>
          The last job ({jobLink(last.id, last.id)}) ran version {last.specVersion}. Deploy to queue an update job for version {c.specVersion}.
        </Banner>
      );
    }
    case "deleting": {
      const awaiting = c.lastJob && c.lastJob.id === c.deleteJobId && c.lastJob.status === "awaiting_approval";
      return (
        <Banner tone="amber" icon={<Loader2 className="h-4 w-4 animate-spin" />} title={awaiting ? `${words.label}: the destroy job waits for approval` : words.label}>
          {awaiting ? "The flow-control policy pauses the destroy: review what it deletes and approve it on the job's page. " : `${words.description} `}
          {c.deleteJobId && jobLink(c.deleteJobId, "Open the destroy job")}
        </Banner>
      );
    }
    case "delete_failed":
      return (
        <Banner tone="rose" icon={<CircleAlert className="h-4 w-4" />} title={words.label} action={org.can("engineer") && <DeleteButton component={c} retry />}>
          <p>{c.statusReason ?? words.description}</p>
          <p className="mt-1">
            The component and whatever the job left are still here.{c.deleteJobId && <> See {jobLink(c.deleteJobId, "the destroy job")} for what happened, then retry.</>}
          </p>
        </Banner>
      );
    case "deleted":
    case "forgotten":
      return (
        <Banner tone="slate" icon={<Archive className="h-4 w-4" />} title={
            <>
              {words.label} by {c.deletedBy ?? "someone"}, {when(c.deletedAt)}
            </>
          }
        >
          {words.description} This page is read-only.
          {c.status === "deleted" && c.deleteJobId && <> It was deleted by {jobLink(c.deleteJobId, "this destroy job")}.</>}
          {c.status === "forgotten" && <> Its state stays on the State tab for export.</>}
        </Banner>
      );
    default:
      return null;
  }
}

/** Queues an update job for the component's current version (a draft's first deploy, or a version saved without deploying). */
function DeployButton({ component: c }: { component: ComponentView }) {
  const org = useOrg();
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const deploy = useMutation(
    trpc.jobs.create.mutationOptions({
      onSuccess: async (job) => {
        await Promise.all([queryClient.invalidateQueries({ queryKey: trpc.components.pathKey() }), queryClient.invalidateQueries({ queryKey: trpc.jobs.pathKey() })]);
        toast.success(job.status === "completed" ? "The job failed preflight; nothing ran." : `Update job queued for version ${c.specVersion}.`);
        router.push(`/o/${org.slug}/jobs/${job.id}`);
      },
      onError: (err) => toast.error(messageOf(err)),
    }),
  );
  return (
    <ComponentActionButton component={c} action="deploy" busy={deploy.isPending} onClick={() => deploy.mutate({ org: org.slug, componentId: c.id, operation: "update", versionMessage: `Deploy version ${c.specVersion}` })}>
      <Rocket className="h-4 w-4" /> Deploy
    </ComponentActionButton>
  );
}
