// The shapes of the public API, defined once: the tRPC procedures declare them as their output (the
// console reads them through tRPC), the REST API under /api/v1 answers with them, the OpenAPI
// document (/api/v1/openapi.json) is generated from them, and lib/client takes its types from them.
import { z } from "zod";
import { ARTIFACT_KINDS } from "../artifacts";
import { DELETE_PROTECTION } from "../delete-protection";
import { POLICY_SELECTORS, POLICY_TOGGLES, type PolicyToggle } from "../flow-control";
import { ESSENTIALS } from "../preflight";
import { ROLES } from "../roles";
import { ROUTE_RULES } from "../runner-routing";
import { EVENT_TYPES, type IacInput, JOB_RESULTS, JOB_STATUSES, OPERATIONS, STEP_NAMES } from "../runner-protocol";

// ── What scripts send ───────────────────────────────────────────────────────────────────────────

/** POST /components/{componentId}/jobs */
export const createJobBody = z.object({
  /** Checked by the service, so an unknown value gets the product's message. */
  operation: z.string().default("preview").meta({ description: `One of ${OPERATIONS.join(", ")}` }),
  versionMessage: z.string().max(500).default(""),
  /** For import jobs: the resource address in the module and the provider's id of the existing object. */
  import: z.object({ address: z.string().min(1), id: z.string().min(1) }).optional(),
});

/** POST /jobs/{jobId}/resume */
export const resumeBody = z.object({
  /** SHA-256 of the plan the approver reviewed; required when the job paused after a preview. */
  expectedChecksum: z.string().optional().meta({ description: "SHA-256 of the plan you reviewed (GET /jobs/{id}/plan → checksum); required when the job paused after a preview" }),
  /** The approver's words, kept on the approval and in the audit record. */
  message: z.string().trim().max(500, { error: "Keep the approval message under 500 characters" }).default(""),
});

/** POST /jobs/{jobId}/rerun */
export const rerunBody = z.object({ versionMessage: z.string().max(500).optional() });

// ── What the API answers ────────────────────────────────────────────────────────────────────────

/** A moment: a Date on the server and in the console (tRPC keeps it), an ISO 8601 string on the wire of REST. */
export const timestamp = z.date().meta({ override: { type: "string", format: "date-time" } });

const jobAction = z.object({ allowed: z.boolean(), why: z.string().nullable().meta({ description: 'Why not, as the clause a refusal completes ("Nothing was approved: <why>.")' }) });

/** What the caller may do with an Infra Job now, computed by the lifecycle and the caller's role. */
export const jobActionsSchema = z
  .object({
    cancel: jobAction.extend({ when: z.enum(["now", "after_step"]).nullable().meta({ description: "now: the job ends at once; after_step: the in-flight step finishes first" }) }),
    approve: jobAction.extend({ gate: z.enum(["plan", "manual_start"]).nullable().meta({ description: "plan: approves the reviewed plan (send its checksum); manual_start: lets the job start" }) }),
    rerun: jobAction,
  })
  .meta({ id: "JobActions" });

export const preflightCheckSchema = z
  .object({
    essential: z.enum(ESSENTIALS),
    passed: z.boolean(),
    resolvedTo: z.string().nullable().meta({ description: "What it resolved to, in words (`static-site@1.0.0 (builtin, platform registry)`)" }),
    errors: z.array(z.string()).meta({ description: "Each names what is missing and the fix" }),
    visited: z.array(z.string()).meta({ description: "The places looked at, most specific first, and what was found there" }),
  })
  .meta({ id: "PreflightCheck" });

/** The four essentials (and the secrets and variables a spec references), each resolved or not. */
export const preflightReportSchema = z
  .object({ passed: z.boolean(), checks: z.array(preflightCheckSchema), reason: z.string().nullable().meta({ description: "The first error: the job's reason when preflight fails" }) })
  .meta({ id: "PreflightReport" });

export const notExecutedSchema = z
  .object({ reason: z.literal(DELETE_PROTECTION), message: z.string().meta({ description: "What will not happen, why, and the fix, naming the resource" }) })
  .meta({ id: "NotExecuted" });

export const progressEventSchema = z
  .object({
    seq: z.number().int().meta({ description: "The job's own, gap-free, from 1" }),
    ts: z.string(),
    operation: z.enum(STEP_NAMES).nullable(),
    type: z.enum(EVENT_TYPES),
    payload: z.record(z.string(), z.unknown()),
  })
  .meta({ id: "ProgressEvent" });

const toggles = Object.fromEntries(POLICY_TOGGLES.map((t) => [t, z.boolean()])) as Record<PolicyToggle, z.ZodBoolean>;
export const jobPolicySchema = z.object({ ...toggles, selector: z.enum(POLICY_SELECTORS), target: z.string() }).meta({ id: "JobPolicy", description: "The flow-control policy the job was made under, and where it came from" });

const outputsSchema = z.record(z.string(), z.object({ value: z.unknown(), sensitive: z.boolean() })).meta({ description: "Sensitive values only as `$secret/<name>` references" });

const jobFields = {
  id: z.string(),
  operation: z.enum(OPERATIONS),
  status: z.enum(JOB_STATUSES),
  result: z.enum(JOB_RESULTS),
  reason: z.string().nullable().meta({ description: "Why the job ended the way it did, in the product's words" }),
  versionMessage: z.string(),
  componentId: z.string(),
  createdByLabel: z.string(),
  rerunOf: z.string().nullable(),
  specVersion: z.number().int().nullable().meta({ description: "The component's spec version the job ran (GET /components/{id}/versions); null for jobs made before versions were kept" }),
  cancelRequestedAt: timestamp.nullable(),
  createdAt: timestamp,
  startedAt: timestamp.nullable(),
  completedAt: timestamp.nullable(),
};

/** A job as lists show it, with what the caller may do with it now. */
export const jobSummarySchema = z
  .object({ ...jobFields, componentName: z.string(), kind: z.string(), environment: z.string(), actions: jobActionsSchema })
  .meta({ id: "InfraJobSummary" });

export const jobPageSchema = z
  .object({ jobs: z.array(jobSummarySchema), nextCursor: z.string().nullable().meta({ description: "Pass as ?cursor= for the next page; null on the last" }) })
  .meta({ id: "InfraJobPage" });

/** The IaC module version a job runs, as its record keeps it (its bundle's SHA-256 is the job's moduleSha256). */
export const jobModuleSchema = z.object({
  name: z.string(),
  version: z.string(),
  provisioner: z.string(),
  registry: z.enum(["platform", "organization"]).meta({ description: "The registry the version came from" }),
});

/** The job's own record: what create, cancel, resume and rerun answer with. */
export const jobRecordSchema = z
  .object({
    ...jobFields,
    orgId: z.string(),
    preflight: preflightReportSchema,
    moduleSha256: z.string().nullable(),
    module: jobModuleSchema
      .nullable()
      .meta({ description: "The IaC module version the job runs (its bundle's SHA-256 is moduleSha256); null when preflight found none, and for jobs made before it was kept" }),
    policy: jobPolicySchema.nullable(),
    importTarget: z.object({ address: z.string(), id: z.string() }).nullable(),
    outputs: outputsSchema.nullable(),
    eventSeq: z.number().int().meta({ description: "The last progress event's seq" }),
    runnerId: z.string().nullable(),
    cancelRequestedBy: z.string().nullable().meta({ description: "Who asked to cancel it" }),
    pausedAt: timestamp.nullable(),
    resumedAt: timestamp.nullable(),
    updatedAt: timestamp,
  })
  .meta({ id: "InfraJobRecord" });

export const jobStepSchema = z
  .object({
    id: z.string(),
    step: z.enum(STEP_NAMES),
    ordinal: z.number().int(),
    status: z.enum(JOB_STATUSES),
    result: z.enum(JOB_RESULTS),
    reason: z.string().nullable(),
    startedAt: timestamp.nullable(),
    endedAt: timestamp.nullable(),
    plan: z
      .object({ artifactId: z.string(), sha256: z.string(), summary: z.record(z.string(), z.unknown()) })
      .nullable()
      .meta({ description: "A preview's saved plan: its checksum and the counts the runner reported (skippedDeletes: what delete protection leaves out)" }),
  })
  .meta({ id: "JobStep" });

export const artifactRefSchema = z
  .object({
    id: z.string(),
    kind: z.enum(ARTIFACT_KINDS),
    name: z.string(),
    sha256: z.string(),
    size: z.number().int(),
    encrypted: z.boolean().meta({ description: "Held encrypted (the executable plan, state snapshots): only the job's runner can download it" }),
    createdAt: timestamp,
  })
  .meta({ id: "ArtifactRef" });

export const approvalSchema = z
  .object({ id: z.string(), userLabel: z.string(), planSha256: z.string().nullable().meta({ description: "The checksum of the plan approved" }), message: z.string(), createdAt: timestamp })
  .meta({ id: "Approval" });

export const runnerAttemptSchema = z
  .object({
    id: z.string(),
    runnerId: z.string(),
    runnerName: z.string().nullable(),
    credentialId: z.string().meta({ description: "The job-scoped credential this attempt ran with (its id; the credential itself is never answered)" }),
    startedAt: timestamp, endedAt: timestamp.nullable(), exitCode: z.number().int().nullable(), reason: z.string().nullable() })
  .meta({ id: "RunnerAttempt" });

/** One job with everything it keeps (but its IaC input, read on its own). */
/** A job's route, as the job page and `planton infra job get` show it (lib/runner-routing.ts routeSentence). */
export const jobRouteSchema = z
  .object({ rule: z.enum(ROUTE_RULES), runner: z.string().nullable(), connection: z.string().nullable(), sentence: z.string() })
  .meta({ id: "JobRoute" });

export const jobSchema = jobRecordSchema
  .extend({
    componentName: z.string(),
    kind: z.string(),
    environment: z.string(),
    actions: jobActionsSchema,
    hasIacInput: z.boolean(),
    steps: z.array(jobStepSchema),
    attempts: z.array(runnerAttemptSchema),
    approvals: z.array(approvalSchema),
    artifacts: z.array(artifactRefSchema),
    route: jobRouteSchema.nullable().meta({ description: "Where it runs and which rule chose that (null for jobs from before routing was recorded)" }),
  })
  .meta({ id: "InfraJob" });

export const resumeResultSchema = z.object({ job: jobRecordSchema, approval: approvalSchema }).meta({ id: "ResumeResult" });

export const eventsPageSchema = z
  .object({ events: z.array(progressEventSchema), lastSeq: z.number().int().meta({ description: "The job's last seq now" }), status: z.enum(JOB_STATUSES) })
  .meta({ id: "ProgressEventPage" });

export const artifactListSchema = z.object({ artifacts: z.array(artifactRefSchema) }).meta({ id: "ArtifactList" });

/** The input the job ran with: module files, variables with secret references, backend, policy. */
export const iacInputSchema = z
  .custom<Omit<IacInput, "approvedPlan">>((v) => typeof v === "object" && v !== null)
  .meta({ id: "IacInput", override: { type: "object", description: "See IacInput in lib/runner-protocol.ts" } });

export const planOperationSchema = z
  .object({ address: z.string(), type: z.string(), action: z.string(), executes: z.boolean(), notExecuted: notExecutedSchema.nullable() })
  .meta({ id: "PlanOperation" });

const counts = z.record(z.string(), z.number().int());

/** The review document of a job's saved plan (spec: runs-and-plans-api.md). */
export const planReviewSchema = z
  .object({
    jobId: z.string(),
    artifactId: z.string(),
    checksum: z.string(),
    verification: z.enum(["verified", "mismatch"]),
    destroy: z.boolean().meta({ description: "A destroy plan deletes everything; delete protection holds none of it back" }),
    state: z.object({
      lineage: z.string().nullable(),
      serial: z.number().int().nullable(),
      providerSchemaHash: z.string().nullable().meta({ description: "SHA-256 of the schemas of the providers the plan uses; apply refuses the plan on an engine whose schemas differ (null: not recorded by this plan's engine)" }),
    }),
    notes: z.array(z.string()),
    changesListed: z.boolean().meta({
      description: "False when the plan's changes could not be read (an engine's own plan format with no review rendition of it): the counts and operations are then empty, which does not mean no changes",
    }),
    counts: z.object({ byAction: counts, byKind: z.record(z.string(), counts), notExecuted: counts }),
    deleteOperationsComputed: z.boolean(),
    deletesNotExecuted: z.number().int().meta({ description: "Deletes and replaces shown but not carried out (delete protection)" }),
    deletesInsideReplacements: z.array(z.object({ address: z.string(), executes: z.boolean() })),
    operations: z.array(planOperationSchema),
    summary: z.record(z.string(), z.unknown()).nullable(),
  })
  .meta({ id: "PlanReview" });

export const preflightResultSchema = z
  .object({ kind: z.string(), reports: z.array(preflightReportSchema.extend({ environment: z.string() })) })
  .meta({ id: "PreflightResult" });

export const organizationRefSchema = z.object({ id: z.string(), slug: z.string(), name: z.string() }).meta({ id: "OrganizationRef" });

export const whoAmISchema = z
  .object({ user: z.object({ id: z.string(), label: z.string() }), organization: organizationRefSchema, role: z.enum(ROLES) })
  .meta({ id: "WhoAmI" });
