"use client";
import { useState } from "react";
import { useRouter } from "next/navigation";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { Ban, RotateCcw } from "lucide-react";
import { toast } from "sonner";
import type { JobActions } from "@/lib/job-actions";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { messageOf } from "@/components/ui/errors";

interface ActionJob {
  id: string;
  status: string;
  cancelRequestedAt: Date | string | null;
  steps: { step: string; status: string }[];
  actions: JobActions;
}

/** Cancel, as the job's actions allow it: a queued or paused job ends at once; a running job finishes its in-flight step first. */
export function CancelButton({ job }: { job: ActionJob }) {
  const org = useOrg();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const [refusal, setRefusal] = useState<string | null>(null);
  const cancel = useMutation(
    trpc.jobs.cancel.mutationOptions({
      onSuccess: async () => {
        await queryClient.invalidateQueries({ queryKey: trpc.jobs.pathKey() });
        toast.success(job.status === "running" ? "Cancel requested: the running step finishes, then the rest are cancelled." : "Job cancelled; nothing more runs.");
        setOpen(false);
      },
      onError: (err) => setRefusal(messageOf(err)),
    }),
  );
  if (job.status === "running" && job.cancelRequestedAt && org.can("engineer")) {
    return (
      <Button variant="secondary" disabled>
        <Ban className="h-4 w-4" /> Cancelling…
      </Button>
    );
  }
  if (!job.actions.cancel.allowed) return null;
  const running = job.steps.find((s) => s.status === "running");
  const last = !job.steps.some((s) => s.status === "queued");
  return (
    <>
      <Button variant="secondary" onClick={() => (setRefusal(null), setOpen(true))}>
        <Ban className="h-4 w-4" /> Cancel job
      </Button>
      <Dialog
        open={open}
        onClose={() => setOpen(false)}
        title="Cancel this job?"
        footer={
          <>
            <Button variant="ghost" onClick={() => setOpen(false)}>
              Keep it running
            </Button>
            <Button variant="danger" busy={cancel.isPending} onClick={() => cancel.mutate({ org: org.slug, jobId: job.id })}>
              Cancel job
            </Button>
          </>
        }
      >
        {job.actions.cancel.when === "after_step" ? (
          <p className="text-sm text-slate-700">
            The step in flight{running ? <> (<span className="font-medium">{running.step}</span>)</> : null} runs to its end, so no resource is left half-changed.{" "}
            {last ? "It is the last step: with nothing left to stop, the job then ends as that step does." : "Every step after it is then marked cancelled and does not run."}
          </p>
        ) : (
          <p className="text-sm text-slate-700">The job has not {job.status === "queued" ? "started" : "carried on"} yet: it ends now as cancelled, and none of its remaining steps run.</p>
        )}
        {refusal && (
          <p role="alert" className="rounded-md bg-rose-50 p-3 text-sm text-rose-800 ring-1 ring-rose-200">
            {refusal}
          </p>
        )}
      </Dialog>
    </>
  );
}

/** Rerun: a completed job again as a new job (fresh preflight), then open it. */
export function RerunButton({ job }: { job: { id: string; actions: JobActions } }) {
  const org = useOrg();
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const rerun = useMutation(
    trpc.jobs.rerun.mutationOptions({
      onSuccess: async (created) => {
        await queryClient.invalidateQueries({ queryKey: trpc.jobs.pathKey() });
        toast.success(`Re-run as ${created.id}.`);
        router.push(`/o/${org.slug}/jobs/${created.id}`);
      },
      onError: (err) => toast.error(messageOf(err)),
    }),
  );
  if (!job.actions.rerun.allowed) return null;
  return (
    <Button variant="secondary" busy={rerun.isPending} onClick={() => rerun.mutate({ org: org.slug, jobId: job.id })}>
      <RotateCcw className="h-4 w-4" /> Rerun
    </Button>
  );
}
