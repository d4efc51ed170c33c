// Reading jobs: lists by organization or component (cursor-paginated, newest first), one job with
// everything it keeps, its IaC input, and the review document of its saved plan.
import { and, asc, count, desc, eq, inArray, sql, type SQL } from "drizzle-orm";
import { createHash } from "node:crypto";
import { z } from "zod";
import { rowsOf, type Queryable } from "@/db/client";
import { approvals, artifacts, connections, environments, infraComponents, infraJobs, jobOperations, runnerAttempts, runners } from "@/db/schema";
import type { NotExecuted } from "@/lib/delete-protection";
import { artifactJson } from "@/lib/artifacts";
import { JOB_RESULTS, JOB_STATUSES, OPERATIONS, planReviewRenditionSchema } from "@/lib/runner-protocol";
import { DELETES_NOT_COMPUTED } from "@/lib/summary-words";
import type { Role } from "@/lib/roles";
import { routeSentence, type JobRoute } from "@/lib/runner-routing";
import { shownConnectionConfig } from "@/lib/catalog";
import { shownBackendConfig } from "@/lib/state-backend-kinds";
import { badRequest, notFound } from "../../errors";
import { REASONS } from "@/lib/job-reasons";
import { jobActions } from "./lifecycle";
import { artifactBytes } from "../runners/artifacts";

export const listJobsInput = z.object({
  componentId: z.string().optional(),
  status: z.enum(JOB_STATUSES).optional(),
  result: z.enum(JOB_RESULTS).optional(),
  operation: z.enum(OPERATIONS).optional(),
  /** The environment's name. */
  environment: z.string().optional(),
  /** Who started it, as shown on the job (`createdByLabel`). */
  createdBy: z.string().optional(),
  /** The `nextCursor` of the previous page. */
  cursor: z.string().optional(),
  limit: z.number().int().min(1).max(200).default(50),
});

const summaryColumns = {
  id: infraJobs.id,
  operation: infraJobs.operation,
  status: infraJobs.status,
  result: infraJobs.result,
  reason: infraJobs.reason,
  versionMessage: infraJobs.versionMessage,
  componentId: infraJobs.componentId,
  componentName: infraComponents.name,
  kind: infraComponents.kind,
  environment: environments.name,
  createdByLabel: infraJobs.createdByLabel,
  rerunOf: infraJobs.rerunOf,
  specVersion: infraJobs.specVersion,
  cancelRequestedAt: infraJobs.cancelRequestedAt,
  createdAt: infraJobs.createdAt,
  startedAt: infraJobs.startedAt,
  completedAt: infraJobs.completedAt,
};

/** A job's creation time to the microsecond, as text: the cursor must carry what Postgres holds, not a JS Date's milliseconds. */
export const createdAtText = sql<string>`to_char(${infraJobs.createdAt} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** Up to this many components, an environment filter names them to the planner (above: a subquery). */
const ENVIRONMENT_AS_VALUES = 1000;

/**
 * A page of the organization's jobs, newest first, keyset-paginated on (created_at, id). The page's ids
 * come first from an index alone (migration 0015: the filters' columns ride in the indexes, so a filter
 * is checked without reading a job's row), then those ids' rows are joined to their components.
 */
export async function listJobs(db: Queryable, orgId: string, raw: z.input<typeof listJobsInput> = {}, role: Role | null = null) {
  const f = listJobsInput.parse(raw);
  const conds: SQL[] = [eq(infraJobs.orgId, orgId)];
  if (f.cursor) {
    const [at, id] = decodeJobCursor(f.cursor);
    conds.push(sql`(${infraJobs.createdAt}, ${infraJobs.id}) < (${at}::timestamptz, ${id})`);
  }
  if (f.componentId) conds.push(eq(infraJobs.componentId, f.componentId));
  if (f.status) conds.push(eq(infraJobs.status, f.status));
  if (f.result) conds.push(eq(infraJobs.result, f.result));
  if (f.operation) conds.push(eq(infraJobs.operation, f.operation));
  const environment = f.environment;
  if (environment) {
    // The environment's components first, as values the planner can weigh: as a subquery it could not tell a
    // new or quiet environment (a few jobs: read them by component) from prod (read the newest and check each),
    // and read every job of the organization looking for the few that were not there. An environment of more
    // components than that stays a subquery: its jobs are many, and so would the statement's parameters be.
    // A builder each time: drizzle's builders change in place (a limit set on one would stay on the subquery).
    const components = () =>
      db
        .select({ id: infraComponents.id })
        .from(infraComponents)
        .innerJoin(environments, eq(environments.id, infraComponents.environmentId))
        .where(and(eq(infraComponents.orgId, orgId), eq(environments.name, environment)));
    const some = await components().limit(ENVIRONMENT_AS_VALUES + 1);
    if (!some.length) return { jobs: [], nextCursor: null };
    conds.push(inArray(infraJobs.componentId, some.length > ENVIRONMENT_AS_VALUES ? components() : some.map((c) => c.id)));
  }
  if (f.createdBy) conds.push(eq(infraJobs.createdByLabel, f.createdBy));
  const page = db
    .select({ id: infraJobs.id })
    .from(infraJobs)
    .where(and(...conds))
    .orderBy(desc(infraJobs.createdAt), desc(infraJobs.id))
    .limit(f.limit + 1)
    .as("page");
  const rows = await db
    .select({ ...summaryColumns, stateHold: infraComponents.stateHold, at: createdAtText })
    .from(page)
    .innerJoin(infraJobs, eq(infraJobs.id, page.id))
    .innerJoin(infraComponents, eq(infraComponents.id, infraJobs.componentId))
    .innerJoin(environments, eq(environments.id, infraComponents.environmentId))
    .orderBy(desc(infraJobs.createdAt), desc(infraJobs.id));
  const jobs = rows.slice(0, f.limit).map(({ stateHold, at: _at, ...j }) => ({ ...j, reason: j.status === "queued" && stateHold ? REASONS.heldByStateMove(stateHold) : j.reason, actions: jobActions(j, role) }));
  const last = rows[f.limit - 1];
  return { jobs, nextCursor: rows.length > f.limit && last ? encodeJobCursor(last.at, last.id) : null };
}

/** How many of the organization's jobs wait for an approval (the navigation's badge). */
export async function countAwaitingApproval(db: Queryable, orgId: string): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(infraJobs)
    .where(and(eq(infraJobs.orgId, orgId), eq(infraJobs.status, "awaiting_approval")));
  return Number(row?.n ?? 0);
}

/**
 * The people who started the organization's jobs, for the list's "started by" filter. A skip scan of the
 * (org_id, created_by_label, …) index: one index probe per person, not a read of every job.
 */
export async function listJobStarters(db: Queryable, orgId: string): Promise<string[]> {
  const rows = await db.execute(sql`
    with recursive starters(label) as (
      (select ${infraJobs.createdByLabel} from ${infraJobs} where ${infraJobs.orgId} = ${orgId} order by ${infraJobs.createdByLabel} limit 1)
      union all
      select (select j.created_by_label from ${infraJobs} j where j.org_id = ${orgId} and j.created_by_label > s.label order by j.created_by_label limit 1)
      from starters s where s.label is not null
    )
    select label from starters where label is not null limit 200`);
  return rowsOf<{ label: string }>(rows).map((r) => r.label);
}

export const encodeJobCursor = (at: Date | string, id: string) => Buffer.from(`${typeof at === "string" ? at : at.toISOString()}|${id}`).toString("base64url");
function decodeJobCursor(cursor: string): [string, string] {
  const [at, id, ...rest] = Buffer.from(cursor, "base64url").toString().split("|");
  if (rest.length || !id || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z$/.test(at) || Number.isNaN(new Date(at).getTime())) {
    throw badRequest("Nothing was listed: the cursor is not one this list gave out. Pass the nextCursor of the previous page as is, or leave it out to start from the newest.", "cursor");
  }
  return [at, id];
}

async function jobRow(db: Queryable, orgId: string, id: string) {
  const [row] = await db
    .select({ job: infraJobs, componentName: infraComponents.name, kind: infraComponents.kind, environment: environments.name, stateHold: infraComponents.stateHold })
    .from(infraJobs)
    .innerJoin(infraComponents, eq(infraComponents.id, infraJobs.componentId))
    .innerJoin(environments, eq(environments.id, infraComponents.environmentId))
    .where(and(eq(infraJobs.id, id), eq(infraJobs.orgId, orgId)));
  if (!row) throw notFound(`Infra Job ${id}`, "Check the id, or find it in the component's Infra Jobs tab.");
  return row;
}

/** Refuses, as every read of one job does, unless the organization has job `id` (one query: the live stream's access check). */
export async function assertJobInOrg(db: Queryable, orgId: string, id: string): Promise<void> {
  await jobRow(db, orgId, id);
}

/** One job with its steps, runner attempts, approvals, artifacts (without their bytes) and what `role` may do with it now. */
export async function getJob(db: Queryable, orgId: string, id: string, role: Role | null = null) {
  const { job, componentName, kind, environment, stateHold } = await jobRow(db, orgId, id);
  const { iacInput, ...rest } = job;
  // A queued job of a component a state move holds says why it waits (claim.ts skips it until the move releases it).
  if (job.status === "queued" && stateHold) rest.reason = REASONS.heldByStateMove(stateHold);
  const [steps, attempts, approvalRows, artifactRows] = await Promise.all([
    db.select().from(jobOperations).where(eq(jobOperations.jobId, id)).orderBy(asc(jobOperations.ordinal)),
    db
      .select({ a: runnerAttempts, runnerName: runners.name })
      .from(runnerAttempts)
      .leftJoin(runners, eq(runners.id, runnerAttempts.runnerId))
      .where(eq(runnerAttempts.jobId, id))
      .orderBy(asc(runnerAttempts.startedAt)),
    db.select().from(approvals).where(eq(approvals.jobId, id)).orderBy(asc(approvals.createdAt)),
    db
      .select({ id: artifacts.id, kind: artifacts.kind, name: artifacts.name, sha256: artifacts.sha256, size: artifacts.size, encrypted: artifacts.encrypted, createdAt: artifacts.createdAt })
      .from(artifacts)
      .where(eq(artifacts.jobId, id))
      .orderBy(asc(artifacts.createdAt)),
  ]);
  return {
    ...rest,
    hasIacInput: !!iacInput,
    componentName,
    kind,
    environment,
    steps,
    attempts: attempts.map(({ a, runnerName }) => ({ ...a, runnerName })),
    approvals: approvalRows,
    artifacts: artifactRows,
    actions: jobActions(job, role),
    route: await jobRoute(db, job),
  };
}

/** Where the job runs and which rule chose it, in the words of lib/runner-routing.ts. */
async function jobRoute(db: Queryable, job: typeof infraJobs.$inferSelect) {
  if (!job.routeRule) return null;
  const [runner] = job.routeRunnerId ? await db.select({ name: runners.name }).from(runners).where(eq(runners.id, job.routeRunnerId)) : [];
  let connection = job.routeRule === "connection" ? (job.iacInput?.connection?.name ?? null) : null;
  if (job.routeRule === "connection" && !connection) {
    // Preflight failed, so no input was kept: the component's connection is the one that named the runner.
    const [row] = await db.select({ name: connections.name }).from(infraComponents).innerJoin(connections, eq(connections.id, infraComponents.connectionId)).where(eq(infraComponents.id, job.componentId));
    connection = row?.name ?? "(deleted)";
  }
  const route: JobRoute = { rule: job.routeRule, runner: runner?.name ?? job.routeRunnerId, connection };
  return { ...route, sentence: routeSentence(route) };
}

/** `planton infra job iac-input`: the input the job ran with (module files, variables with secret references, backend, policy). */
export async function getIacInput(db: Queryable, orgId: string, id: string) {
  const { job } = await jobRow(db, orgId, id);
  if (!job.iacInput) throw notFound(`The IaC input of job ${id}`, `Its preflight failed before one could be built: ${job.reason ?? "see the preflight report"}.`);
  const { connection, backend } = job.iacInput;
  return {
    ...job.iacInput,
    connection: connection && { ...connection, config: shownConnectionConfig(connection.provider, connection.config) },
    backend: backend && { ...backend, config: shownBackendConfig(backend.kind, backend.config) },
  };
}

interface PlanChange {
  address: string;
  type: string;
  action: string;
  not_executed?: NotExecuted;
}

/** What the review reads of a plan: the builtin engine's SavedPlan, or an engine's review rendition (PlanReviewRendition). */
type ReviewablePlan = {
  planton_plan_format?: number;
  state_lineage?: string | null;
  state_serial?: number | null;
  delete_operations_computed?: boolean;
  provider_schema_hash?: string;
  resource_changes?: PlanChange[];
  operation?: string;
};

/** The job's review rendition of the plan with this checksum (the latest, if a retried step sent more than one), or null. */
async function reviewRendition(db: Queryable, jobId: string, planSha256: string): Promise<ReviewablePlan | null> {
  const rows = await db.select().from(artifacts).where(and(eq(artifacts.jobId, jobId), eq(artifacts.kind, "plan_review"))).orderBy(desc(artifacts.createdAt));
  for (const row of rows) {
    const doc = planReviewRenditionSchema.safeParse(artifactJson(artifactBytes(row)));
    if (doc.success && doc.data.plan_sha256 === planSha256) return doc.data;
  }
  return null;
}

/**
 * The review document of a job's saved plan (runs-and-plans-api.md): checksum and its verification,
 * the state it was made against, counts by action and kind, whether deletes were computed, how many
 * deletes will not execute, the deletions inside replacements, and every operation in order. What
 * executes is read from the plan itself: the engine marks what delete protection leaves out.
 */
export async function getPlanReview(db: Queryable, orgId: string, id: string) {
  await jobRow(db, orgId, id);
  const steps = await db.select().from(jobOperations).where(eq(jobOperations.jobId, id)).orderBy(asc(jobOperations.ordinal));
  const preview = steps.find((s) => s.plan);
  if (!preview) throw notFound(`A saved plan for job ${id}`, "Only a job whose preview step succeeded has one; run a preview or update job.");
  const ref = preview.plan!;
  const [art] = await db.select().from(artifacts).where(and(eq(artifacts.id, ref.artifactId), eq(artifacts.jobId, id)));
  if (!art) throw notFound(`Plan artifact ${ref.artifactId}`, "The plan was not stored; run the preview again.");
  const bytes = artifactBytes(art);
  const actual = createHash("sha256").update(bytes).digest("hex");
  const notes: string[] = [];
  const verified = actual === ref.sha256 && actual === art.sha256;
  if (!verified) notes.push(`The stored plan's SHA-256 is ${actual}, but the preview recorded ${ref.sha256}: do not approve it; run the preview again.`);
  let plan = artifactJson(bytes) as ReviewablePlan | null;
  // The builtin engine's plan is read as is. OpenTofu's and Terraform's plans are binary and Pulumi's is its own
  // format: their runner sends a review rendition (kind plan_review) naming the plan's checksum, read instead.
  if (plan?.planton_plan_format === undefined) plan = await reviewRendition(db, id, ref.sha256);
  const changesListed = plan !== null;
  if (!plan) {
    plan = {};
    notes.push(
      "This plan's changes could not be listed: it is not a builtin-engine plan and its runner sent no review of it. No counts below does not mean no changes — read the preview's log (the engine's own plan output) before approving.",
    );
  }
  const operations = (plan.resource_changes ?? [])
    .filter((c) => c.action !== "noop")
    .map((c) => ({ address: c.address, type: c.type, action: c.action, executes: !c.not_executed, notExecuted: c.not_executed ?? null }));
  const byAction: Record<string, number> = {};
  const byKind: Record<string, Record<string, number>> = {};
  const notExecuted: Record<string, number> = {};
  for (const o of operations) {
    byAction[o.action] = (byAction[o.action] ?? 0) + 1;
    (byKind[o.type] ??= {})[o.action] = (byKind[o.type]?.[o.action] ?? 0) + 1;
    if (!o.executes) notExecuted[o.action] = (notExecuted[o.action] ?? 0) + 1;
  }
  if (changesListed && plan.delete_operations_computed === false) notes.push(DELETES_NOT_COMPUTED);
  return {
    jobId: id,
    artifactId: art.id,
    checksum: ref.sha256,
    verification: verified ? ("verified" as const) : ("mismatch" as const),
    /** A destroy plan deletes everything: delete protection never holds any of it back. */
    destroy: plan.operation === "destroy",
    state: { lineage: plan.state_lineage ?? null, serial: plan.state_serial ?? null, providerSchemaHash: plan.provider_schema_hash ?? null },
    notes,
    changesListed,
    counts: { byAction, byKind, notExecuted },
    deleteOperationsComputed: changesListed && plan.delete_operations_computed !== false,
    /** Deletes and replaces the plan shows but apply leaves out (delete protection). */
    deletesNotExecuted: operations.filter((o) => !o.executes).length,
    /** Each replacement deletes its object before creating the new one. */
    deletesInsideReplacements: operations.filter((o) => o.action === "replace").map((o) => ({ address: o.address, executes: o.executes })),
    operations,
    summary: ref.summary ?? null,
  };
}

/** How an audit event names a job: by its component, in the component's environment. */
export async function jobAuditTarget(db: Queryable, jobId: string): Promise<{ targetName: string | null; environment: string | null }> {
  const [row] = await db
    .select({ component: infraComponents.name, environment: environments.name })
    .from(infraJobs)
    .innerJoin(infraComponents, eq(infraComponents.id, infraJobs.componentId))
    .innerJoin(environments, eq(environments.id, infraComponents.environmentId))
    .where(eq(infraJobs.id, jobId));
  return { targetName: row?.component ?? null, environment: row?.environment ?? null };
}
