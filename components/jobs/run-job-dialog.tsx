"use client";
import { useEffect, useState } from "react";
import { useRouter } from "next/navigation";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { AlertTriangle, Play } from "lucide-react";
import { toast } from "sonner";
import type { JobOperationKind } from "@/lib/runner-protocol";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { fieldErrorsOf, messageOf } from "@/components/ui/errors";
import { SelectField, TextField } from "@/components/ui/field";
import { LoadingState } from "@/components/ui/page";
import { cn } from "@/components/ui/cn";
import { OPERATION_INFO, OPERATION_ORDER } from "./job-ui";
import { PreflightChecks } from "./preflight-report";

/** The "Run job" button and its dialog; without `componentId` the dialog asks for the component. */
export function RunJobButton({ componentId, variant = "primary" }: { componentId?: string; variant?: "primary" | "secondary" }) {
  const org = useOrg();
  const [open, setOpen] = useState(false);
  if (!org.can("engineer")) return null;
  return (
    <>
      <Button variant={variant} onClick={() => setOpen(true)}>
        <Play className="h-4 w-4" /> Run job
      </Button>
      {open && <RunJobDialog componentId={componentId} onClose={() => setOpen(false)} />}
    </>
  );
}

function RunJobDialog({ componentId: fixed, onClose }: { componentId?: string; onClose: () => void }) {
  const org = useOrg();
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const [componentId, setComponentId] = useState(fixed ?? "");
  const [operation, setOperation] = useState<JobOperationKind>("preview");
  const [versionMessage, setVersionMessage] = useState("");
  const [importAddress, setImportAddress] = useState("");
  const [importId, setImportId] = useState("");
  const [refusal, setRefusal] = useState<string | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const components = useQuery({ ...trpc.components.list.queryOptions({ org: org.slug }), enabled: !fixed });
  const preflight = useQuery({ ...trpc.jobs.preflightComponent.queryOptions({ org: org.slug, componentId }), enabled: !!componentId, staleTime: 0 });
  useEffect(() => setRefusal(null), [componentId, operation]);

  const create = useMutation(
    trpc.jobs.create.mutationOptions({
      onSuccess: async (job) => {
        await queryClient.invalidateQueries({ queryKey: trpc.jobs.pathKey() });
        toast.success(job.status === "completed" ? "The job failed preflight; nothing ran." : `${OPERATION_INFO[operation].label} job created.`);
        router.push(`/o/${org.slug}/jobs/${job.id}`);
      },
      onError: (err) => {
        setErrors(fieldErrorsOf(err));
        setRefusal(messageOf(err));
      },
    }),
  );

  const submit = () =>
    create.mutate({
      org: org.slug,
      componentId,
      operation,
      versionMessage,
      ...(operation === "import" ? { import: { address: importAddress, id: importId } } : {}),
    });

  return (
    <Dialog
      open
      onClose={onClose}
      title="Run an Infra Job"
      description="Choose what the job does. The four essentials are resolved now, as the job will resolve them."
      footer={
        <>
          <Button variant="ghost" onClick={onClose}>
            Cancel
          </Button>
          <Button type="submit" form="run-job-form" busy={create.isPending} disabled={!componentId}>
            Run {OPERATION_INFO[operation].label.toLowerCase()}
          </Button>
        </>
      }
    >
      <form
        id="run-job-form"
        className="space-y-4"
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        {!fixed && (
          <SelectField label="Infra Component" value={componentId} onChange={(e) => setComponentId(e.target.value)} error={errors.componentId}>
            <option value="">Choose a component…</option>
            {components.data?.components.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name} ({c.environment})
              </option>
            ))}
          </SelectField>
        )}
        <fieldset>
          <legend className="mb-1.5 text-sm font-medium text-slate-800">Operation</legend>
          <div className="grid gap-1.5" role="radiogroup" aria-label="Operation">
            {OPERATION_ORDER.map((op) => (
              <label
                key={op}
                className={cn(
                  "flex cursor-pointer items-start gap-3 rounded-md px-3 py-2 ring-1 ring-inset",
                  operation === op ? "bg-indigo-50 ring-indigo-300" : "ring-slate-200 hover:bg-slate-50",
                )}
              >
                <input type="radio" name="operation" value={op} checked={operation === op} onChange={() => setOperation(op)} className="mt-0.5 h-4 w-4 text-indigo-600" />
                <span className="text-sm">
                  <span className="font-medium text-slate-900">{OPERATION_INFO[op].label}</span>
                  <span className="block text-xs text-slate-500">{OPERATION_INFO[op].description}</span>
                </span>
              </label>
            ))}
          </div>
        </fieldset>
        {operation === "import" && (
          <div className="grid gap-3 sm:grid-cols-2">
            <TextField label="Resource address" placeholder="aws_s3_bucket.this" value={importAddress} onChange={(e) => setImportAddress(e.target.value)} error={errors["import.address"] ?? errors.import} />
            <TextField label="Provider id" placeholder="my-bucket" value={importId} onChange={(e) => setImportId(e.target.value)} error={errors["import.id"]} />
          </div>
        )}
        <TextField
          label="Version message"
          hint="Why this job runs; shown on the job and in the audit log."
          value={versionMessage}
          maxLength={500}
          onChange={(e) => setVersionMessage(e.target.value)}
          error={errors.versionMessage}
        />
        <div>
          <div className="mb-1.5 text-sm font-medium text-slate-800">Preflight</div>
          {!componentId ? (
            <p className="text-sm text-slate-500">Choose a component to see what its job resolves.</p>
          ) : preflight.isPending ? (
            <LoadingState label="Resolving the four essentials…" />
          ) : preflight.error ? (
            <p role="alert" className="text-sm text-rose-700">
              {preflight.error.message}
            </p>
          ) : (
            <>
              <PreflightChecks report={preflight.data} />
              {!preflight.data.passed && <p className="mt-2 text-xs text-rose-700">A job run now fails its preflight and nothing runs; its report is kept on the job. Fix what is listed first.</p>}
            </>
          )}
        </div>
        {refusal && (
          <div role="alert" className="flex items-start gap-2 rounded-md bg-rose-50 p-3 text-sm text-rose-800 ring-1 ring-rose-200">
            <AlertTriangle className="mt-0.5 h-4 w-4 shrink-0" />
            <p>{refusal}</p>
          </div>
        )}
      </form>
    </Dialog>
  );
}
