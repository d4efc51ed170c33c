// Claiming work: one statement (`SELECT … FOR UPDATE SKIP LOCKED LIMIT 1`) picks and row-locks the
// oldest claimable queued job, the lifecycle moves it; a long-poll waits on NOTIFY job_queued when there is none.
// A job is claimable when no other job of its component is running or paused mid-run, and no
// older job of that component is still queued: one job per component, in created order. A component
// held by a state move is skipped until the move releases it; its job then runs against the new backend.
import { and, asc, eq, isNull, sql } from "drizzle-orm";
import type { Database, DatabaseHandle, Tx } from "@/db/client";
import { approvals, infraComponents, infraJobs, jobOperations, organizations, runnerAttempts, runners, stateBackends } from "@/db/schema";
import { newId } from "@/lib/ids";
import type { Provisioner } from "@/lib/catalog";
import type { ClaimResponse, IacInput, StepName } from "@/lib/runner-protocol";
import { appendEvents, subscribeChannel } from "../jobs/events";
import { JOB_QUEUED_CHANNEL, lockJob, moveJob, releaseStateLocks } from "../jobs/transitions";
import { serverConfig } from "../../config";
import { issueJobCredential } from "./credentials";
import { assertRunnerMayWork, type RunnerRow } from "./register-runner";
import type { Span } from "@opentelemetry/api";
import { endSpan, startSpan, traceparentOf } from "@/lib/telemetry";
import { observeClaim } from "../../metrics";

export const LEASE_SECONDS = serverConfig().PLANTON_LEASE_SECONDS;

function rowsOf<T>(result: unknown): T[] {
  return Array.isArray(result) ? (result as T[]) : ((result as { rows?: T[] }).rows ?? []);
}

/** What a runner says of itself in its claims: kept on its record for the Runners page and preflight's engine check. */
export interface RunnerReport {
  version?: string;
  engines?: Partial<Record<Provisioner, string>>;
}

/** Claims one job for a runner, or null when none is claimable now. */
export async function claimJob(db: Database, runner: RunnerRow, report: RunnerReport = {}): Promise<ClaimResponse | null> {
  const attemptId = newId("runnerAttempt");
  // The route fixed at creation (route.ts): a job routed to a runner goes to that one only; the rest to Planton-hosted runners.
  // (A hosted runner with an organization serves only that one's: the tests' way to keep suites apart.)
  const scope =
    runner.kind === "self_hosted"
      ? sql`j.route_runner_id = ${runner.id}`
      : runner.orgId
        ? sql`j.route_runner_id is null and j.org_id = ${runner.orgId}`
        : sql`j.route_runner_id is null`;
  // A runner that says which engines it has claims only jobs whose module it can run; the builtin engine ships with every runner.
  const engines = report.engines ? ["builtin", ...Object.keys(report.engines).filter((e) => e !== "builtin")] : null;
  const runnable = engines ? sql`coalesce(j.iac_input->'module'->>'provisioner', 'builtin') in (${sql.join(engines.map((e) => sql`${e}`), sql`, `)})` : sql`true`;
  const started = Date.now();
  let span: Span | undefined;
  let queued: { createdAt: Date; resumedAt: Date | null } | undefined;
  const claim = await db.transaction(async (tx) => {
    // A long-poll outlives its authentication: the runner may have been revoked or its token rotated since.
    const [current] = await tx
      .update(runners)
      .set({ lastSeenAt: new Date(), ...(report.version ? { version: report.version } : {}), ...(report.engines ? { engines: { ...report.engines, builtin: report.engines.builtin ?? "builtin" } } : {}) })
      .where(eq(runners.id, runner.id))
      .returning();
    assertRunnerMayWork(current, runner.tokenHash);
    // One statement picks and row-locks the oldest claimable job; the lifecycle then moves it, as every status write does.
    const [pick] = rowsOf<{ id: string }>(
      await tx.execute(sql`
        select j.id from infra_jobs j
         where j.status = 'queued' and ${scope} and ${runnable}
           and not exists (select 1 from infra_components h where h.id = j.component_id and h.state_hold is not null)
           and not exists (
             select 1 from infra_jobs o
              where o.component_id = j.component_id and o.id <> j.id
                and (o.status = 'running'
                     or (o.status = 'awaiting_approval' and o.started_at is not null)
                     or (o.status = 'queued' and (o.created_at, o.id) < (j.created_at, j.id))))
         order by j.created_at, j.id
         for update skip locked
         limit 1`),
    );
    if (!pick) return null;
    const picked = (await lockJob(tx, pick.id))!;
    queued = picked;
    // The claim joins the job's trace (its create span), and hands its own context to the runner's steps.
    span = startSpan("job claim", picked.traceParent, { "planton.job.id": picked.id, "planton.runner": runner.name, "planton.attempt.id": attemptId });
    const row = { id: picked.id, org_id: picked.orgId };
    const credential = await issueJobCredential({ jobId: row.id, orgId: row.org_id, attemptId, runnerTokenHash: current.tokenHash });
    // An earlier attempt of this job (one that paused and was never ended) is replaced: it ends, and so does any lock it left.
    await tx.update(runnerAttempts).set({ endedAt: new Date(), reason: `replaced by attempt ${attemptId}` }).where(and(eq(runnerAttempts.jobId, row.id), isNull(runnerAttempts.endedAt)));
    await releaseStateLocks(tx, row.id);
    await tx.insert(runnerAttempts).values({ id: attemptId, jobId: row.id, runnerId: runner.id, credentialId: credential.credentialId });
    await moveJob(tx, picked, "claim", { runnerId: runner.id, currentAttemptId: attemptId, leaseExpiresAt: new Date(Date.now() + Math.max(1, Math.round(LEASE_SECONDS)) * 1000) }, { runner: runner.name, attemptId });
    await followMovedState(tx, row.id);
    const [job] = await tx.select().from(infraJobs).where(eq(infraJobs.id, row.id));
    const steps = await tx.select().from(jobOperations).where(eq(jobOperations.jobId, row.id)).orderBy(asc(jobOperations.ordinal));
    const [org] = await tx.select({ slug: organizations.slug }).from(organizations).where(eq(organizations.id, row.org_id));
    const input: IacInput = { ...job.iacInput!, orgSlug: org!.slug, steps: steps.filter((s) => s.status === "queued").map((s) => s.step as StepName) };
    // Resuming after an approval: hand over the reviewed plan, so apply runs exactly that plan.
    const [approval] = await tx.select().from(approvals).where(eq(approvals.jobId, row.id)).orderBy(sql`${approvals.pauseOrdinal} desc`).limit(1);
    const planStep = [...steps].reverse().find((s) => s.plan && s.result === "succeeded");
    if (approval?.planSha256 && planStep?.plan) input.approvedPlan = { artifactId: planStep.plan.artifactId, sha256: approval.planSha256 };
    return {
      job: { id: row.id, operation: input.operation },
      attemptId,
      credential: { token: credential.token, expiresAt: credential.expiresAt },
      input,
      ...(span ? { traceparent: traceparentOf(span) } : {}),
    } satisfies ClaimResponse;
  }).catch((err: unknown) => {
    endSpan(span, err);
    throw err;
  });
  endSpan(span);
  if (claim && queued) observeClaim(queued, started);
  return claim;
}

/** A job queued before its component's state moved runs against the backend the component names now, and says so. */
async function followMovedState(tx: Tx, jobId: string) {
  const [row] = await tx
    .select({ job: infraJobs, backend: stateBackends })
    .from(infraJobs)
    .innerJoin(infraComponents, eq(infraComponents.id, infraJobs.componentId))
    .innerJoin(stateBackends, eq(stateBackends.id, infraComponents.stateBackendId))
    .where(eq(infraJobs.id, jobId));
  if (!row || !row.job.iacInput || row.job.backendId === row.backend.id) return;
  const was = row.job.iacInput.backend;
  const backend = { id: row.backend.id, name: row.backend.name, kind: row.backend.kind, config: row.backend.config as Record<string, unknown> };
  await tx.update(infraJobs).set({ backendId: backend.id, iacInput: { ...row.job.iacInput, backend } }).where(eq(infraJobs.id, jobId));
  await appendEvents(tx, jobId, [
    { operation: null, type: "log", payload: { line: `The component's state moved from backend ${was?.name ?? "(none)"} to ${backend.name} (${backend.kind}) after this job was queued; it runs against ${backend.name}.` } },
  ]);
}

/** Long-poll: claims at once when it can, else waits for NOTIFY job_queued (or a slow re-check) up to `waitSeconds`. */
export async function claimJobWaiting(
  handle: DatabaseHandle,
  runner: RunnerRow,
  opts: RunnerReport & {
    waitSeconds: number;
    signal?: AbortSignal;
    /** How often it re-checks without a NOTIFY (a missed one must not strand work). */
    recheckMs?: number;
    /** Called each time it starts waiting with nothing to claim. */
    onIdle?: () => void;
  },
): Promise<ClaimResponse | null> {
  const deadline = Date.now() + opts.waitSeconds * 1000;
  let wake: (() => void) | null = null;
  let poked = false;
  const unsubscribe = await subscribeChannel(handle, JOB_QUEUED_CHANNEL, () => {
    poked = true;
    wake?.();
  });
  const onAbort = () => wake?.();
  opts.signal?.addEventListener("abort", onAbort);
  try {
    for (;;) {
      poked = false;
      const claim = await claimJob(handle.db, runner, { version: opts.version, engines: opts.engines });
      if (claim) return claim;
      const left = deadline - Date.now();
      if (left <= 0 || opts.signal?.aborted) return null;
      if (poked) continue;
      let recheck: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        wake = resolve;
        recheck = setTimeout(resolve, Math.min(left, opts.recheckMs ?? 5000));
        opts.onIdle?.();
      });
      clearTimeout(recheck);
      wake = null;
    }
  } finally {
    opts.signal?.removeEventListener("abort", onAbort);
    unsubscribe();
  }
}
