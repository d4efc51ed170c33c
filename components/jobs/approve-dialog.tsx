"use client";
import { useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { AlertTriangle, ShieldCheck } from "lucide-react";
import { toast } from "sonner";
import type { JobActions } from "@/lib/job-actions";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { TextAreaField } from "@/components/ui/field";
import { messageOf } from "@/components/ui/errors";
import { LoadingState } from "@/components/ui/page";
import { NOT_EXECUTED } from "@/lib/delete-protection";
import { actionLook } from "./job-ui";

export interface ApprovableJob {
  id: string;
  status: string;
  componentName: string;
  environment: string;
  actions: JobActions;
}

/** The Approve button and its confirmation: what will be applied (counts, resources, plan checksum), then resume with that checksum. */
export function ApproveButton({ job, size = "md" }: { job: ApprovableJob; size?: "sm" | "md" }) {
  const [open, setOpen] = useState(false);
  if (!job.actions.approve.allowed) return null;
  const manualStart = job.actions.approve.gate === "manual_start";
  return (
    <>
      <Button size={size} onClick={() => setOpen(true)}>
        <ShieldCheck className="h-4 w-4" /> {manualStart ? "Approve start" : "Approve"}
      </Button>
      {open && <ApproveDialog job={job} manualStart={manualStart} onClose={() => setOpen(false)} />}
    </>
  );
}

function ApproveDialog({ job, manualStart, onClose }: { job: ApprovableJob; manualStart: boolean; onClose: () => void }) {
  const org = useOrg();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const plan = useQuery({ ...trpc.jobs.plan.queryOptions({ org: org.slug, id: job.id }), enabled: !manualStart, staleTime: 0 });
  const [refusal, setRefusal] = useState<string | null>(null);
  const [message, setMessage] = useState("");
  const resume = useMutation(
    trpc.jobs.resume.mutationOptions({
      onSuccess: async () => {
        await queryClient.invalidateQueries({ queryKey: trpc.jobs.pathKey() });
        toast.success(manualStart ? "Approved: the job is queued to start." : "Approved: the job carries on with the reviewed plan.");
        onClose();
      },
      onError: (err) => setRefusal(messageOf(err)),
    }),
  );
  const p = plan.data;
  // What runs, by action; what delete protection leaves out is counted apart.
  const byAction = p ? Object.entries(p.counts.byAction).map(([action, n]) => [action, n - (p.counts.notExecuted[action] ?? 0)] as const).filter(([, n]) => n > 0) : [];
  const held = p ? Object.entries(p.counts.notExecuted) : [];
  const blocked = !manualStart && (!p || p.verification !== "verified");

  return (
    <Dialog
      open
      onClose={onClose}
      title={manualStart ? "Approve the start of this job?" : "Approve and apply this plan?"}
      description={
        <>
          {job.componentName} in <span className="font-medium">{job.environment}</span> · <span className="font-mono">{job.id}</span>
        </>
      }
      footer={
        <>
          <Button variant="ghost" onClick={onClose}>
            Cancel
          </Button>
          <Button busy={resume.isPending} disabled={blocked} onClick={() => resume.mutate({ org: org.slug, jobId: job.id, expectedChecksum: manualStart ? undefined : p?.checksum, message })}>
            {manualStart ? "Approve start" : "Approve and apply"}
          </Button>
        </>
      }
    >
      {manualStart ? (
        <p className="text-sm text-slate-700">The flow-control policy holds this job until someone starts it. Nothing has run yet; approving queues it for a runner.</p>
      ) : plan.isPending ? (
        <LoadingState label="Loading the reviewed plan…" />
      ) : plan.error ? (
        <p role="alert" className="text-sm text-rose-700">
          {plan.error.message}
        </p>
      ) : (
        p && (
          <div className="space-y-3 text-sm">
            <div className="flex flex-wrap gap-2" aria-label="Plan counts">
              {!p.changesListed ? (
                <span className="font-medium text-amber-800" data-testid="changes-not-listed">
                  Changes not listed: see the note below.
                </span>
              ) : (
                byAction.length === 0 && <span className="text-slate-600">{held.length ? "Nothing to apply; held back:" : "No changes: the apply will change nothing."}</span>
              )}
              {byAction.map(([action, n]) => (
                <span key={action} className="rounded-md bg-slate-100 px-2 py-1 font-medium" data-action={action}>
                  <span className={`font-mono ${actionLook(action).className}`}>{actionLook(action).symbol}</span> {n} to {action}
                </span>
              ))}
              {held.map(([action, n]) => (
                <span key={`held-${action}`} className="rounded-md bg-amber-50 px-2 py-1 font-medium text-amber-900 ring-1 ring-amber-200" data-action={action} data-executes="false">
                  <span className="font-mono">{actionLook(action).symbol}</span> {n} to {action} {NOT_EXECUTED}
                </span>
              ))}
            </div>
            {p.operations.length > 0 && (
              <ul className="max-h-60 space-y-1 overflow-y-auto rounded-md bg-slate-50 p-2 font-mono text-xs" aria-label="Resources to change">
                {p.operations.map((o) => (
                  <li key={o.address + o.action} data-executes={o.executes}>
                    <span className={actionLook(o.action).className}>{(actionLook(o.action).symbol).padEnd(2)}</span> {o.address}
                    {!o.executes && <span className="ml-2 font-semibold text-amber-700">{NOT_EXECUTED}</span>}
                    {o.notExecuted && <p className="ml-4 mt-0.5 whitespace-normal font-sans text-amber-800">{o.notExecuted.message}</p>}
                  </li>
                ))}
              </ul>
            )}
            {p.deletesInsideReplacements.some((r) => r.executes) && (
              <p className="text-xs text-slate-600">
                Deleted inside a replacement (deleted, then created again):{" "}
                <span className="font-mono">
                  {p.deletesInsideReplacements
                    .filter((r) => r.executes)
                    .map((r) => r.address)
                    .join(", ")}
                </span>
              </p>
            )}
            <div>
              <div className="text-xs font-medium text-slate-500">Plan checksum (SHA-256) — the apply runs exactly this plan</div>
              <code className="block break-all rounded bg-slate-100 px-2 py-1 text-xs" data-testid="plan-checksum">
                {p.checksum}
              </code>
              <div className={`mt-1 text-xs ${p.verification === "verified" ? "text-emerald-700" : "text-rose-700"}`}>{p.verification === "verified" ? "Verified against the stored plan." : "Does not match the stored plan."}</div>
            </div>
            {p.deletesNotExecuted > 0 && (
              <p className="text-xs text-amber-800" data-testid="not-executed-note">
                {p.deletesNotExecuted} {p.deletesNotExecuted === 1 ? "change is" : "changes are"} shown but will not run: delete protection is on for this component, so approving applies the rest and leaves these in place. A destroy job is the way to delete.
              </p>
            )}
            {p.destroy && <p className="text-xs text-rose-800">This is a destroy: it deletes everything listed, whatever the delete protection.</p>}
            {p.notes.map((n) => (
              <p key={n} className="flex gap-1.5 text-xs text-amber-800">
                <AlertTriangle className="h-3.5 w-3.5 shrink-0" /> {n}
              </p>
            ))}
          </div>
        )
      )}
      <div className="mt-4">
        <TextAreaField
          label="Note for the record (optional)"
          hint="Kept on the approval and in the audit history, like planton infra job resume -m."
          rows={2}
          maxLength={500}
          value={message}
          onChange={(e) => setMessage(e.target.value)}
        />
      </div>
      {refusal && (
        <p role="alert" className="mt-3 rounded-md bg-rose-50 p-3 text-sm text-rose-800 ring-1 ring-rose-200">
          {refusal}
        </p>
      )}
    </Dialog>
  );
}
