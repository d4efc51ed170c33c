"use client";
import { useEffect, useState } from "react";
import Link from "next/link";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { AlertTriangle, ChevronRight, Radio, Trash2, WifiOff } from "lucide-react";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { Badge, envTone } from "@/components/ui/badge";
import { cn } from "@/components/ui/cn";
import { Card, EmptyState, ErrorState, LoadingState, PageHeader } from "@/components/ui/page";
import { Table, Tbody, Td, Th } from "@/components/ui/table";
import { Tabs } from "@/components/ui/tabs";
import { relativeTime } from "@/components/ui/time";
import { ActivityTab } from "@/components/audit/activity-tab";
import { REASONS } from "@/lib/job-reasons";
import { formatBytes } from "@/lib/display";
import { COMPONENT_STATUS_WORDS } from "@/lib/component-lifecycle";
import { versionHref } from "@/components/infra-components/component-ui";
import { ApproveButton } from "./approve-dialog";
import { CancelButton, RerunButton } from "./job-actions";
import { applyStatusEvents, useJobEvents, type StreamState } from "./job-events";
import { JobRouteLine } from "./job-route";
import { JobSteps } from "./job-steps";
import { elapsed, moduleOf, operationLabel, ResultBadge, StatusBadge, useNow } from "./job-ui";
import { PreflightChecks } from "./preflight-report";

export function JobDetail({ id }: { id: string }) {
  const org = useOrg();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const jobQuery = trpc.jobs.get.queryOptions({ org: org.slug, id });
  const job = useQuery({
    ...jobQuery,
    // The event stream keeps the job current; this slow poll only covers a stream that cannot connect.
    refetchInterval: (q) => (q.state.data && q.state.data.status !== "completed" ? 15000 : false),
  });
  // Status events are applied to the job held in the cache; after any read of the job, those newer than it are applied again.
  const applyEvents = () => void queryClient.setQueryData(jobQuery.queryKey, (held) => (held ? applyStatusEvents(held, events.store.after(held.eventSeq)) : held));
  const events = useJobEvents(org.slug, id, { onStatus: applyEvents, refetch: () => void job.refetch() });
  useEffect(applyEvents, [job.dataUpdatedAt]);
  const j = job.data;
  const now = useNow(j?.status === "running");
  const params = useSearchParams();
  const router = useRouter();
  const pathname = usePathname();
  const tab = params.get("tab") === "activity" ? "activity" : "run";

  if (job.isPending) return <LoadingState label="Loading job…" />;
  if (job.error || !j) return <ErrorState error={job.error} retry={() => job.refetch()} />;

  const route = j.route;
  const mod = moduleOf(j);
  const preflight = j.preflight;
  const failed = j.steps.find((s) => s.result === "failed");
  const failedStep = failed?.step;
  // A step's error is shown with that step (opened below); the banner names the step instead of saying it again.
  const banner = failed?.reason && j.reason === REASONS.stepFailed(failed.step, failed.reason) ? `${failed.step} failed; its error is shown with the step below.` : j.reason;

  return (
    <>
      <PageHeader
        breadcrumb={
          <span className="flex items-center gap-1">
            <Link href={`/o/${org.slug}/jobs`} className="hover:underline">
              Infra Jobs
            </Link>
            <ChevronRight className="h-3.5 w-3.5" />
            <span className="font-mono">{j.id}</span>
          </span>
        }
        title={
          <span className="flex flex-wrap items-center gap-3">
            {operationLabel(j.operation)} {j.componentName}
            <span data-testid="job-status">
              <StatusBadge status={j.status} />
            </span>
            {j.result !== "tbd" && (
              <span data-testid="job-result">
                <ResultBadge result={j.result} />
              </span>
            )}
          </span>
        }
        description={
          j.versionMessage || route ? (
            <div className="space-y-1">
              {j.versionMessage && <p className="italic">“{j.versionMessage}”</p>}
              <JobRouteLine route={route} />
            </div>
          ) : undefined
        }
        actions={
          <>
            <StreamIndicator state={events.state} completed={j.status === "completed"} />
            <ApproveButton job={j} />
            <CancelButton job={j} />
            <RerunButton job={j} />
          </>
        }
      />

      <dl className="mb-6 grid grid-cols-2 gap-x-6 gap-y-3 rounded-lg bg-white px-5 py-4 text-sm shadow-sm ring-1 ring-slate-200 sm:grid-cols-4">
        <Meta label="Component">
          <Link href={`/o/${org.slug}/components/${j.componentId}?tab=jobs`} className="font-medium text-indigo-700 hover:underline">
            {j.componentName}
          </Link>{" "}
          <span className="font-mono text-xs text-slate-500">{j.kind}</span>
        </Meta>
        <Meta label="Environment">
          <Badge tone={envTone(j.environment)}>{j.environment}</Badge>
        </Meta>
        <Meta label="Operation">{operationLabel(j.operation)}</Meta>
        <Meta label="Spec version">
          {j.specVersion === null ? (
            <span className="text-slate-500">not recorded</span>
          ) : (
            <Link href={versionHref(org.slug, j.componentId, j.specVersion)} className="font-medium text-indigo-700 hover:underline" data-testid="job-spec-version">
              Spec version {j.specVersion}
            </Link>
          )}
        </Meta>
        <Meta label="Started by">{j.createdByLabel}</Meta>
        <Meta label="Created">
          <span title={new Date(j.createdAt).toLocaleString()}>{relativeTime(j.createdAt, now)}</span>
        </Meta>
        <Meta label="Duration">
          <span className="tabular-nums" data-testid="job-duration">
            {elapsed(j.startedAt, j.completedAt, now) ?? (j.status === "completed" ? "did not run" : "not started")}
          </span>
        </Meta>
        <Meta label="Engine">{mod?.engine ?? "—"}</Meta>
        <Meta label="Module">
          <span className="font-mono text-xs" data-testid="job-module">
            {mod?.module ?? "not resolved"}
          </span>
          {mod?.registry && <span className="block text-xs text-slate-500">{mod.registry} registry</span>}
        </Meta>
        <Meta label="Log archive">
          <JobLogArchive job={j} />
        </Meta>
        {j.rerunOf && (
          <Meta label="Re-run of">
            <Link href={`/o/${org.slug}/jobs/${j.rerunOf}`} className="font-mono text-xs text-indigo-700 hover:underline">
              {j.rerunOf}
            </Link>
          </Meta>
        )}
      </dl>

      {j.operation === "destroy" && <DeletesComponent jobId={j.id} componentId={j.componentId} />}

      <Tabs<"run" | "activity">
        label="Job sections"
        value={tab}
        onChange={(t) => router.replace(t === "run" ? pathname : `${pathname}?tab=${t}`)}
        tabs={[
          { id: "run", label: "Run" },
          { id: "activity", label: "Activity" },
        ]}
      />
      <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`}>
        {tab === "activity" ? (
          <ActivityTab filter={{ target: j.id }} what="this job" />
        ) : (
          <>
        {j.status === "running" && j.cancelRequestedAt && (
          <Banner tone="amber">
            Cancel requested by {j.cancelRequestedBy ?? "someone"}:{" "}
            {j.steps.some((s) => s.status === "queued")
              ? "the running step finishes, then the remaining steps are marked cancelled."
              : "the running step is the last one; it finishes, and with nothing left to stop the job ends as that step does."}
          </Banner>
        )}
        {j.status === "awaiting_approval" && (
          <Banner tone="amber">
            {j.startedAt ? "Paused for approval after the preview: review the plan, then approve to apply it." : "Held by manual start: nothing runs until someone approves."}
          </Banner>
        )}
        {banner && j.status === "completed" && preflight.passed && <Banner tone={j.result === "failed" ? "rose" : "slate"}>{banner}</Banner>}

        {!preflight.passed && (
          <Card className="mb-6 ring-rose-300" title={<span className="flex items-center gap-2 text-rose-800"><AlertTriangle className="h-5 w-5" /> Preflight failed: nothing ran</span>} description="Each failing essential says what is missing and how to fix it. Fix it, then rerun this job.">
            <PreflightChecks report={preflight} showVisited />
          </Card>
        )}

        <div className="space-y-6">
          <Card title="Steps" description="Expand a step for its log, resource changes and summary.">
            <div className="-mx-5 -my-4">
              {j.steps.length ? (
                <JobSteps steps={j.steps} jobStatus={j.status} store={events.store} now={now} defaultOpen={failedStep} />
              ) : (
                <EmptyState title="No steps" />
              )}
            </div>
          </Card>

          <Outputs outputs={j.outputs} completed={j.status === "completed"} />

          {j.approvals.length > 0 && (
            <Card title="Approvals">
              <ul className="space-y-1 text-sm">
                {j.approvals.map((a) => (
                  <li key={a.id}>
                    <span className="font-medium">{a.userLabel}</span> approved {relativeTime(a.createdAt, now)}
                    {a.planSha256 && (
                      <>
                        {" "}
                        the plan <code className="rounded bg-slate-100 px-1 text-xs">{a.planSha256.slice(0, 16)}…</code>
                      </>
                    )}
                    {a.message && <q className="ml-1 text-slate-600">{a.message}</q>}
                  </li>
                ))}
              </ul>
            </Card>
          )}

          <Card title="Runner attempts" description="Each time a runner claimed this job.">
            <div className="-mx-5 -my-4">
              {j.attempts.length === 0 ? (
                <EmptyState title="No runner has claimed it yet" description={j.status === "queued" ? "It waits for a runner with room, or for earlier jobs of this component." : undefined} />
              ) : (
                <Table label="Runner attempts">
                  <thead className="bg-slate-50">
                    <tr>
                      <Th>Runner</Th>
                      <Th>Started</Th>
                      <Th>Ended</Th>
                      <Th>Exit</Th>
                      <Th>Reason</Th>
                    </tr>
                  </thead>
                  <Tbody>
                    {j.attempts.map((a) => (
                      <tr key={a.id}>
                        <Td>
                          {a.runnerName ?? a.runnerId}
                          <div className="font-mono text-xs text-slate-500" title="The job-scoped credential this attempt ran with">
                            {a.credentialId}
                          </div>
                        </Td>
                        <Td title={new Date(a.startedAt).toLocaleString()}>{new Date(a.startedAt).toLocaleTimeString()}</Td>
                        <Td>{a.endedAt ? new Date(a.endedAt).toLocaleTimeString() : <span className="text-sky-700">running</span>}</Td>
                        <Td className="font-mono">{a.exitCode ?? "—"}</Td>
                        <Td className="whitespace-normal text-xs">{a.reason ?? ""}</Td>
                      </tr>
                    ))}
                  </Tbody>
                </Table>
              )}
            </div>
          </Card>

          <IacInput id={j.id} available={j.hasIacInput} moduleSha256={j.moduleSha256} />
        </div>
          </>
        )}
      </div>
    </>
  );
}

/** For a component's destroy job (its deleteJobId): says the job deletes the component, and how that ended. */
function DeletesComponent({ jobId, componentId }: { jobId: string; componentId: string }) {
  const org = useOrg();
  const trpc = useTRPC();
  const component = useQuery({
    ...trpc.components.get.queryOptions({ org: org.slug, id: componentId }),
    refetchInterval: (q) => (q.state.data?.status === "deleting" && q.state.data.deleteJobId === jobId ? 3000 : false),
  });
  const c = component.data;
  if (!c || c.deleteJobId !== jobId) return null;
  const link = (
    <Link href={`/o/${org.slug}/components/${c.id}`} className="font-medium underline underline-offset-2">
      {c.name}
    </Link>
  );
  return (
    <div role="status" data-testid="job-deletes-component" className="mb-6 flex items-start gap-2 rounded-lg bg-slate-50 px-4 py-3 text-sm text-slate-800 ring-1 ring-slate-200">
      <Trash2 className="mt-0.5 h-4 w-4 shrink-0 text-rose-600" />
      <p>
        {c.status === "deleting" && <>This job deletes the component {link}: when it succeeds, {c.name} is removed from the list; its jobs, versions, state history and audit events stay readable.</>}
        {c.status === "deleted" && <>This job deleted the component {link}: it is listed under Deleted components, and its history stays readable.</>}
        {c.status === "delete_failed" && <>This job was to delete the component {link}, and did not succeed: {c.name} is marked {COMPONENT_STATUS_WORDS.delete_failed.label}; retry the delete from its page.</>}
        {c.status !== "deleting" && c.status !== "deleted" && c.status !== "delete_failed" && <>This job was started to delete the component {link}, which is now {COMPONENT_STATUS_WORDS[c.status].label.toLowerCase()}.</>}
      </p>
    </div>
  );
}

function Meta({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div className="min-w-0">
      <dt className="text-xs text-slate-500">{label}</dt>
      <dd className="mt-0.5 truncate text-slate-900">{children}</dd>
    </div>
  );
}

function Banner({ tone, children }: { tone: "amber" | "rose" | "slate"; children: React.ReactNode }) {
  const cls = tone === "amber" ? "bg-amber-50 text-amber-900 ring-amber-200" : tone === "rose" ? "bg-rose-50 text-rose-800 ring-rose-200" : "bg-slate-50 text-slate-700 ring-slate-200";
  return (
    <div role="status" className={cn("mb-6 flex items-start gap-2 rounded-lg px-4 py-3 text-sm ring-1", cls)}>
      <AlertTriangle className="mt-0.5 h-4 w-4 shrink-0" />
      <p>{children}</p>
    </div>
  );
}

function StreamIndicator({ state, completed }: { state: StreamState; completed: boolean }) {
  if (completed && (state === "ended" || state === "live")) return null;
  if (state === "reconnecting")
    return (
      <span className="flex items-center gap-1 text-xs text-amber-700" role="status">
        <WifiOff className="h-3.5 w-3.5" /> Reconnecting…
      </span>
    );
  if (state === "live")
    return (
      <span className="flex items-center gap-1 text-xs text-emerald-700" role="status">
        <Radio className="h-3.5 w-3.5" /> Live
      </span>
    );
  return null;
}

function Outputs({ outputs, completed }: { outputs: Record<string, { value: unknown; sensitive: boolean }> | null; completed: boolean }) {
  const entries = Object.entries(outputs ?? {});
  return (
    <Card title="Outputs" description="Sensitive values appear only as their $secret/… reference.">
      {entries.length === 0 ? (
        <p className="text-sm text-slate-500">{completed ? "This job reported no outputs." : "Outputs appear when the job reports them."}</p>
      ) : (
        <dl className="divide-y divide-slate-100 text-sm">
          {entries.map(([name, o]) => (
            <div key={name} className="grid grid-cols-3 gap-4 py-2">
              <dt className="font-mono text-slate-500">
                {name} {o.sensitive && <Badge tone="yellow">sensitive</Badge>}
              </dt>
              <dd className="col-span-2 break-all font-mono text-slate-900">{typeof o.value === "string" ? o.value : JSON.stringify(o.value)}</dd>
            </div>
          ))}
        </dl>
      )}
    </Card>
  );
}

function IacInput({ id, available, moduleSha256 }: { id: string; available: boolean; moduleSha256: string | null }) {
  const org = useOrg();
  const trpc = useTRPC();
  const [open, setOpen] = useState(false);
  const input = useQuery({ ...trpc.jobs.iacInput.queryOptions({ org: org.slug, id }), enabled: open && available });
  return (
    <Card
      title="IaC input"
      description={
        moduleSha256 ? (
          <>
            Module SHA-256 <code className="break-all text-xs">{moduleSha256}</code>
          </>
        ) : (
          "What the runner received: module files, variables (secrets as references), backend and policy."
        )
      }
      actions={
        available && (
          <button type="button" aria-expanded={open} onClick={() => setOpen(!open)} className="text-sm font-medium text-indigo-600 hover:underline">
            {open ? "Hide" : "Show"} JSON
          </button>
        )
      }
    >
      {!available ? (
        <p className="text-sm text-slate-500">None was built: the preflight failed before it could be.</p>
      ) : !open ? (
        <p className="text-sm text-slate-500">Collapsed.</p>
      ) : input.isPending ? (
        <LoadingState label="Loading the IaC input…" />
      ) : input.error ? (
        <ErrorState error={input.error} retry={() => input.refetch()} />
      ) : (
        <pre className="max-h-[28rem] overflow-auto rounded-md bg-slate-50 p-3 font-mono text-xs text-slate-800">{JSON.stringify(input.data, null, 2)}</pre>
      )}
    </Card>
  );
}

type ArtifactRef = { id: string; kind: string; name: string; sha256: string; size: number };

/**
 * The job's archived log (an artifact with its SHA-256): once the job has ended, the scheduler archives it within a
 * few seconds; until then this asks for the job's artifacts every 3 s (apart from the job's own query, which the
 * event stream keeps current).
 */
function JobLogArchive({ job }: { job: { id: string; status: string; artifacts: ArtifactRef[] } }) {
  const org = useOrg();
  const trpc = useTRPC();
  const ended = job.status === "completed";
  const listed = useQuery({
    ...trpc.jobs.artifacts.queryOptions({ org: org.slug, id: job.id }),
    enabled: ended && !job.artifacts.some((a) => a.kind === "log"),
    refetchInterval: (q) => (q.state.data?.artifacts.some((a) => a.kind === "log") ? false : 3000),
  });
  const log = [...job.artifacts, ...(listed.data?.artifacts ?? [])].find((a) => a.kind === "log");
  if (!log) return <span className="text-slate-500">{ended ? "archiving…" : "kept when the job ends"}</span>;
  return (
    <span data-testid="job-log-archive">
      <a href={`/api/v1/jobs/${job.id}/artifacts/${log.id}?org=${encodeURIComponent(org.slug)}`} className="font-medium text-indigo-700 hover:underline" download>
        {log.name}
      </a>{" "}
      <span className="text-slate-500">{formatBytes(log.size)}</span>
      <span className="block font-mono text-xs text-slate-500" title={`SHA-256 ${log.sha256}`}>
        sha256 {log.sha256.slice(0, 12)}…
      </span>
    </span>
  );
}
