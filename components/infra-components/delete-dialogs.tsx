"use client";
// Deleting a component (a destroy job under flow control, also the retry of a failed delete) and
// forgetting it (admins: Planton lets go, the resources keep running). Each dialog names what happens
// to which resources before anything is asked of the server.
import { useState } from "react";
import { useRouter } from "next/navigation";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { EyeOff, RotateCcw, Trash2 } from "lucide-react";
import { toast } from "sonner";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { messageOf } from "@/components/ui/errors";
import { TextField } from "@/components/ui/field";
import { LoadingState } from "@/components/ui/page";
import { FormAlert } from "@/components/settings/shared";
import { ComponentActionButton, type ComponentView } from "./component-ui";

export function DeleteButton({ component: c, retry = false }: { component: ComponentView; retry?: boolean }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <ComponentActionButton component={c} action="delete" variant={retry ? "danger" : "secondary"} onClick={() => setOpen(true)}>
        {retry ? <RotateCcw className="h-4 w-4" /> : <Trash2 className="h-4 w-4" />} {retry ? "Retry delete" : "Delete"}
      </ComponentActionButton>
      {open && <DeleteDialog component={c} retry={retry} onClose={() => setOpen(false)} />}
    </>
  );
}

/** The resources the component's state holds: what a destroy removes, or what keeps running when it is forgotten. */
function useStateResources(componentId: string) {
  const org = useOrg();
  const trpc = useTRPC();
  return useQuery({ ...trpc.components.state.queryOptions({ org: org.slug, id: componentId }), select: (s) => s?.resources ?? [] });
}

function ResourceList({ query, label, none }: { query: ReturnType<typeof useStateResources>; label: string; none: string }) {
  if (query.isPending) return <LoadingState label="Reading its state…" />;
  if (query.error) return <FormAlert message={`Its state could not be read: ${query.error.message}`} />;
  if (!query.data.length) return <p className="text-sm text-slate-600">{none}</p>;
  return (
    <div>
      <p className="mb-1.5 text-sm font-medium text-slate-800">{label}</p>
      <ul aria-label={label} className="max-h-48 space-y-0.5 overflow-auto rounded-md bg-slate-50 p-3 font-mono text-xs text-slate-800 ring-1 ring-slate-200">
        {query.data.map((r) => (
          <li key={r.address}>
            {r.address}
            {r.id && <span className="text-slate-500"> ({r.id})</span>}
          </li>
        ))}
      </ul>
    </div>
  );
}

function DeleteDialog({ component: c, retry, onClose }: { component: ComponentView; retry: boolean; onClose: () => void }) {
  const org = useOrg();
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const [versionMessage, setVersionMessage] = useState("");
  const resources = useStateResources(c.id);
  const policy = useQuery(trpc.components.flowControl.queryOptions({ org: org.slug, id: c.id }));
  const neverRan = c.status === "draft" && !c.lastJob;
  const del = useMutation(
    trpc.components.delete.mutationOptions({
      onSuccess: async ({ job }) => {
        await Promise.all([queryClient.invalidateQueries({ queryKey: trpc.components.pathKey() }), queryClient.invalidateQueries({ queryKey: trpc.jobs.pathKey() })]);
        if (job) {
          toast.success(`Destroy job queued for ${c.name}.`);
          router.push(`/o/${org.slug}/jobs/${job.id}`);
        } else {
          toast.success(`Removed ${c.name}; it was never deployed, so nothing was destroyed.`);
          router.push(`/o/${org.slug}/components?show=gone`);
        }
      },
    }),
  );

  const p = policy.data;
  const from = p ? `the ${p.selector} policy${p.selector !== "platform" ? ` on ${p.target}` : ""}` : "";
  return (
    <Dialog
      open
      onClose={onClose}
      title={retry ? `Retry deleting ${c.name}` : `Delete ${c.name}`}
      description={
        <>
          {c.environment} · <span className="font-mono">{c.kind}</span>
        </>
      }
      footer={
        <>
          <Button variant="secondary" onClick={onClose} data-autofocus>
            Cancel
          </Button>
          <Button variant="danger" busy={del.isPending} onClick={() => del.mutate({ org: org.slug, id: c.id, versionMessage })}>
            {neverRan ? "Remove draft" : retry ? "Run the destroy again" : "Delete and destroy"}
          </Button>
        </>
      }
    >
      {neverRan ? (
        <p className="text-sm text-slate-700">It was never deployed: no job ran for it, so nothing is destroyed and it is removed at once. Its versions and audit events stay readable under Deleted components.</p>
      ) : (
        <>
          <p className="text-sm text-slate-700">
            A <span className="font-medium">destroy job</span> runs for {c.name}: it refreshes, previews the destroy, then destroys every resource it manages. When it succeeds the component is removed from the list; its jobs, versions, state history and audit
            events stay readable under Deleted components. If it fails or is cancelled, the component stays, marked Delete failed, with a retry.
          </p>
          <div data-testid="delete-flow-control" className="rounded-md bg-amber-50 p-3 text-sm text-amber-950 ring-1 ring-amber-200">
            {!p ? (
              policy.error ? `The flow-control policy could not be read: ${policy.error.message}` : "Reading the flow-control policy…"
            ) : p.toggles.manualStart ? (
              <>Under {from}, the destroy job waits for someone to approve it before anything runs, then pauses again where the policy says.</>
            ) : p.toggles.pauseBeforeApply ? (
              <>Under {from}, the destroy job pauses after its preview for approval of the plan: nothing is destroyed until someone reviews what it deletes and approves.</>
            ) : (
              <>Under {from}, no approval is asked: the destroy runs as soon as a runner takes it.</>
            )}
          </div>
          <ResourceList query={resources} label="Resources that will be destroyed" none="Its state holds no resources: the destroy job has nothing to remove." />
          <TextField label="Reason" hint="Optional; shown on the destroy job and in the audit log." value={versionMessage} maxLength={500} onChange={(e) => setVersionMessage(e.target.value)} />
        </>
      )}
      {del.error ? <FormAlert message={messageOf(del.error)} /> : null}
    </Dialog>
  );
}

export function ForgetButton({ component: c }: { component: ComponentView }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <ComponentActionButton component={c} action="forget" variant="ghost" onClick={() => setOpen(true)}>
        <EyeOff className="h-4 w-4" /> Forget
      </ComponentActionButton>
      {open && <ForgetDialog component={c} onClose={() => setOpen(false)} />}
    </>
  );
}

function ForgetDialog({ component: c, onClose }: { component: ComponentView; onClose: () => void }) {
  const org = useOrg();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [typed, setTyped] = useState("");
  const resources = useStateResources(c.id);
  const forget = useMutation(
    trpc.components.forget.mutationOptions({
      onSuccess: async ({ unmanaged }) => {
        await queryClient.invalidateQueries({ queryKey: trpc.components.pathKey() });
        toast.success(`Forgot ${c.name}; ${unmanaged.length} resource${unmanaged.length === 1 ? "" : "s"} keep running unmanaged.`);
        onClose();
      },
    }),
  );
  const confirmed = typed === c.name;
  return (
    <Dialog
      open
      onClose={onClose}
      title={`Forget ${c.name}`}
      description="Planton stops managing it without destroying anything."
      footer={
        <>
          <Button variant="secondary" onClick={onClose}>
            Cancel
          </Button>
          <Button variant="danger" busy={forget.isPending} disabled={!confirmed} onClick={() => forget.mutate({ org: org.slug, id: c.id, confirmName: typed })}>
            Forget {c.name}
          </Button>
        </>
      }
    >
      <p className="text-sm text-slate-700">
        No job runs. The component leaves the list and can no longer be changed; its jobs, versions and audit events stay readable, and its state is kept for export. To manage the resources again, create a new component and import them.
      </p>
      <ResourceList query={resources} label="Resources that keep running, unmanaged" none="Its state holds no resources: nothing is left running." />
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (confirmed) forget.mutate({ org: org.slug, id: c.id, confirmName: typed });
        }}
      >
        <TextField label={`Type ${c.name} to confirm`} value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" spellCheck={false} data-autofocus />
      </form>
      {forget.error ? <FormAlert message={messageOf(forget.error)} /> : null}
    </Dialog>
  );
}
