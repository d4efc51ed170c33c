// Infra Jobs and what each one keeps: its steps, progress events, artifacts, approvals, runner
// attempts; and the Planton-managed state of each component.
import { sql } from "drizzle-orm";
import { bigint, boolean, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";
import type { PolicySelector, PolicyToggles } from "../../lib/flow-control";
import type { JobModule, PreflightReport } from "../../lib/preflight";
import type { RouteRule } from "../../lib/runner-routing";
import type { IacInput, JobOperationKind, JobResult, JobStatus, OutputsPayload, StepName, StepPlanRef } from "../../lib/runner-protocol";
import type { LockInfo } from "../../lib/state-lock";
import type { ArtifactKind } from "../../lib/artifacts";

/** The IaC input a job keeps; a claim adds the steps still to run and an approved plan. */
export type StoredIacInput = Omit<IacInput, "approvedPlan">;

/** The flow-control policy a job was made under, and which policy it came from. */
export type JobPolicy = PolicyToggles & { selector: PolicySelector; target: string };
import { createdAt, ts, updatedAt } from "./common";
import { infraComponents } from "./components";
import { organizations } from "./organizations";

/** Status and result are text checked by server/services/jobs/lifecycle.ts, the one writer of both. */
export const infraJobs = pgTable(
  "infra_jobs",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    componentId: text("component_id").notNull().references(() => infraComponents.id, { onDelete: "cascade" }),
    operation: text("operation").$type<JobOperationKind>().notNull(),
    status: text("status").$type<JobStatus>().notNull(),
    result: text("result").$type<JobResult>().notNull(),
    /** Why the job ended the way it did, in the product's words (preflight, runner lost, a step's failure). */
    reason: text("reason"),
    versionMessage: text("version_message").notNull().default(""),
    createdBy: text("created_by"),
    createdByLabel: text("created_by_label").notNull().default("system"),
    rerunOf: text("rerun_of"),
    /** The component's spec version the job ran (its registered configuration identity); null for jobs made before versions were kept. */
    specVersion: integer("spec_version"),
    /** The four essentials and the authorization check, as `PreflightReport`. */
    preflight: jsonb("preflight").$type<PreflightReport>().notNull(),
    /** `IacInput` of lib/runner-protocol.ts, minus what a claim adds; null when preflight failed before it could be built. */
    iacInput: jsonb("iac_input").$type<StoredIacInput>(),
    moduleSha256: text("module_sha256"),
    /** The module version it runs and the registry it came from; null when preflight found none, and for jobs made before it was kept. */
    module: jsonb("module").$type<JobModule>(),
    backendId: text("backend_id"),
    policy: jsonb("policy").$type<JobPolicy>(),
    /** For import jobs: `{address, id}`. */
    importTarget: jsonb("import_target").$type<{ address: string; id: string }>(),
    /** Sensitive values only as `$secret/…` references. */
    outputs: jsonb("outputs").$type<OutputsPayload["outputs"]>(),
    /** The last progress event's seq: appends take the row lock, so seqs stay gap-free. */
    eventSeq: integer("event_seq").notNull().default(0),
    cancelRequestedAt: ts("cancel_requested_at"),
    cancelRequestedBy: text("cancel_requested_by"),
    /** Who claimed it (the current attempt's runner). */
    runnerId: text("runner_id"),
    /** Where it must run, fixed at creation (lib/runner-routing.ts): the runner named, or null for a Planton-hosted one. */
    routeRunnerId: text("route_runner_id"),
    /** Which rule chose it: the connection's runner, the organization's default, or Planton-hosted. */
    routeRule: text("route_rule").$type<RouteRule>(),
    leaseExpiresAt: ts("lease_expires_at"),
    currentAttemptId: text("current_attempt_id"),
    /** The job's log, archived once it ended (an artifact of kind `log`: server/services/jobs/job-log.ts); null until then. */
    logArtifactId: text("log_artifact_id"),
    /** The W3C traceparent of the job's create span when the console traces (lib/telemetry.ts): later spans join its trace. */
    traceParent: text("trace_parent"),
    createdAt: createdAt(),
    startedAt: ts("started_at"),
    pausedAt: ts("paused_at"),
    resumedAt: ts("resumed_at"),
    completedAt: ts("completed_at"),
    updatedAt: updatedAt(),
  },
  (t) => [
    // The Jobs list (migration 0015): newest first by (created_at, id) within the organization; the
    // filters' columns ride in the keys after those, so a filter is checked in the index, not on the row.
    index("infra_jobs_org_time_idx").on(t.orgId, t.createdAt, t.id, t.componentId, t.status, t.result, t.operation, t.createdByLabel),
    // A rare or absent operation (migration 0020): found, or found missing, without reading the organization's history.
    index("infra_jobs_org_operation_time_idx").on(t.orgId, t.operation, t.createdAt, t.id),
    index("infra_jobs_org_starter_time_idx").on(t.orgId, t.createdByLabel, t.createdAt, t.id, t.componentId, t.status, t.result, t.operation),
    // The few jobs not completed, and the few that did not succeed: small partial indexes for those filters.
    index("infra_jobs_org_status_time_idx").on(t.orgId, t.status, t.createdAt, t.id).where(sql`${t.status} <> 'completed'`),
    index("infra_jobs_org_result_time_idx").on(t.orgId, t.result, t.createdAt, t.id, t.componentId, t.operation, t.createdByLabel).where(sql`${t.result} <> 'succeeded'`),
    index("infra_jobs_component_idx").on(t.componentId, t.createdAt, t.id),
    index("infra_jobs_status_idx").on(t.status, t.createdAt),
    // Ended jobs whose log is not archived yet (migration 0028): the archiver's queue, empty once it has caught up.
    index("infra_jobs_log_unarchived_idx").on(t.completedAt).where(sql`${t.status} = 'completed' and ${t.logArtifactId} is null`),
  ],
);

/** One step of a job (init, refresh, preview, apply, destroy, import), in order. */
export const jobOperations = pgTable(
  "job_operations",
  {
    id: text("id").primaryKey(),
    jobId: text("job_id").notNull().references(() => infraJobs.id, { onDelete: "cascade" }),
    step: text("step").$type<StepName>().notNull(),
    ordinal: integer("ordinal").notNull(),
    status: text("status").$type<JobStatus>().notNull(),
    result: text("result").$type<JobResult>().notNull(),
    reason: text("reason"),
    /** For a preview: `{artifactId, sha256, summary}` of the saved plan. */
    plan: jsonb("plan").$type<StepPlanRef>(),
    /** Pause after this step succeeds (pause_before_apply on a preview). */
    pauseAfter: integer("pause_after").notNull().default(0),
    startedAt: ts("started_at"),
    endedAt: ts("ended_at"),
  },
  (t) => [uniqueIndex("job_operations_job_ordinal_uq").on(t.jobId, t.ordinal)],
);

export const progressEvents = pgTable(
  "progress_events",
  {
    /**
     * The job's id. Not a foreign key: the rules one kept (the job exists and is locked against deletion
     * until the writer commits; deleting a job deletes its events; a job's id never changes) are kept by
     * statement-level triggers (migration 0023), once per statement rather than once per event.
     */
    jobId: text("job_id").notNull(),
    seq: integer("seq").notNull(),
    ts: ts("ts").notNull(),
    operation: text("operation"),
    type: text("type").notNull(),
    payload: jsonb("payload").notNull(),
    /** Set for runner uploads: (job, attempt, runner seq) makes a retried batch a no-op. */
    attemptId: text("attempt_id"),
    runnerSeq: integer("runner_seq"),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.seq] }), uniqueIndex("progress_events_runner_seq_uq").on(t.jobId, t.attemptId, t.runnerSeq)],
);

/** Plan files, logs, state snapshots and IaC inputs, with their SHA-256. Bytes are base64 text (same on both drivers). */
export const artifacts = pgTable(
  "artifacts",
  {
    id: text("id").primaryKey(),
    jobId: text("job_id").notNull().references(() => infraJobs.id, { onDelete: "cascade" }),
    kind: text("kind").$type<ArtifactKind>().notNull(),
    name: text("name").notNull(),
    sha256: text("sha256").notNull(),
    size: integer("size").notNull(),
    content: text("content").notNull(),
    /** Content is AES-256-GCM ciphertext (base64 of iv | tag | ciphertext); sha256 and size are of the plaintext. */
    encrypted: boolean("encrypted").notNull().default(false),
    createdAt: createdAt(),
  },
  (t) => [
    index("artifacts_job_idx").on(t.jobId),
    // One archived log per job (migration 0028), however many archivers race for it.
    uniqueIndex("artifacts_job_log_uq").on(t.jobId).where(sql`${t.kind} = 'log'`),
  ],
);

/** Who let a paused job carry on, bound to the plan they reviewed; one per pause (job, step ordinal). */
export const approvals = pgTable(
  "approvals",
  {
    id: text("id").primaryKey(),
    jobId: text("job_id").notNull().references(() => infraJobs.id, { onDelete: "cascade" }),
    /** The ordinal of the step the job continues from. */
    pauseOrdinal: integer("pause_ordinal").notNull(),
    userId: text("user_id"),
    userLabel: text("user_label").notNull(),
    planSha256: text("plan_sha256"),
    /** The approver's words (`planton infra job resume -m "…"`). */
    message: text("message").notNull().default(""),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("approvals_job_pause_uq").on(t.jobId, t.pauseOrdinal)],
);

export const runnerAttempts = pgTable(
  "runner_attempts",
  {
    id: text("id").primaryKey(),
    jobId: text("job_id").notNull().references(() => infraJobs.id, { onDelete: "cascade" }),
    runnerId: text("runner_id").notNull(),
    credentialId: text("credential_id").notNull(),
    startedAt: createdAt(),
    endedAt: ts("ended_at"),
    exitCode: integer("exit_code"),
    reason: text("reason"),
  },
  (t) => [index("runner_attempts_job_idx").on(t.jobId)],
);

/** A component's Planton-managed state (OpenTofu v4 JSON) and its lock. Pages keep room for HOT updates (fillfactor 70, migration 0017). */
export const stateObjects = pgTable("state_objects", {
  id: text("id").primaryKey(),
  orgId: text("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
  componentId: text("component_id").notNull().unique().references(() => infraComponents.id, { onDelete: "cascade" }),
  backendId: text("backend_id").notNull(),
  key: text("key").notNull(),
  lineage: text("lineage"),
  /** bigint: a Pulumi checkpoint's serial is its deployment's time in milliseconds (state-backends/rules.ts pulumiIdentity). */
  serial: bigint("serial", { mode: "number" }),
  checksum: text("checksum"),
  /** The state's size in bytes (its canonical JSON, as its version's); null on a row not written since migration 0024. */
  size: integer("size"),
  state: jsonb("state"),
  /** OpenTofu lock info (ID, Path, Operation, Who, Version, Created, Info); null when unlocked. */
  lockInfo: jsonb("lock_info").$type<LockInfo>(),
  lockedByJob: text("locked_by_job"),
  /** Set when a move copied this state to another backend: kept (read-only) for the move's rollback. */
  movedToBackendId: text("moved_to_backend_id"),
  movedAt: ts("moved_at"),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

/**
 * A job's state changes at resource level (lib/state-delta.ts), kept as they complete until they are
 * compacted into one full state write (server/services/state/state-journal.ts). Per attempt, step and
 * seq, so a retried upload applies once; the change itself is sealed with the server key (it carries
 * the state's values), `addresses` only names the resources it touches.
 */
export const stateJournal = pgTable(
  "state_journal",
  {
    attemptId: text("attempt_id").notNull(),
    step: text("step").notNull(),
    seq: integer("seq").notNull(),
    jobId: text("job_id").notNull().references(() => infraJobs.id, { onDelete: "cascade" }),
    orgId: text("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    componentId: text("component_id").notNull().references(() => infraComponents.id, { onDelete: "cascade" }),
    /** The state lock the runner held when it sent the change (a compaction writes under it). */
    lockId: text("lock_id").notNull(),
    lineage: text("lineage").notNull(),
    /** The serial the change applies onto, and the serial it makes. */
    baseSerial: bigint("base_serial", { mode: "number" }).notNull(),
    serial: bigint("serial", { mode: "number" }).notNull(),
    addresses: text("addresses").array().notNull(),
    change: text("change").notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.attemptId, t.step, t.seq] }), index("state_journal_job_idx").on(t.jobId), index("state_journal_component_idx").on(t.componentId)],
);

/**
 * Every content a component's Planton-managed state has had, newest last: appended in the write's
 * transaction; a write of the same checksum adds none. A rollback appends the old content at a new serial.
 */
export const stateVersions = pgTable(
  "state_versions",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    componentId: text("component_id").notNull().references(() => infraComponents.id, { onDelete: "cascade" }),
    serial: bigint("serial", { mode: "number" }).notNull(),
    lineage: text("lineage").notNull(),
    checksum: text("checksum").notNull(),
    size: integer("size").notNull(),
    state: jsonb("state").notNull(),
    /** The job and attempt that wrote it; null for a rollback or a content written before versions were kept. */
    jobId: text("job_id"),
    attemptId: text("attempt_id"),
    /** Who rolled back to it (email or token name), and the version it restores; null for a job's write. */
    actorLabel: text("actor_label"),
    restoredFrom: text("restored_from"),
    createdAt: createdAt(),
  },
  (t) => [index("state_versions_component_idx").on(t.componentId, t.createdAt)],
);
