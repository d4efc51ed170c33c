// The runner protocol (REST, /api/runner/v1): the only thing a runner and the server share.
// Runners never import server code; the server never reaches into a runner.
import { z } from "zod";
import type { NotExecuted } from "./delete-protection";
import type { PolicyToggles } from "./flow-control";
import { STORE_NAME, STORE_NAME_HINT } from "./secrets";
import { PROVISIONERS } from "./catalog";
import type { progressEventSchema } from "./api/schemas";

export const RUNNER_API = "/api/runner/v1";

export const OPERATIONS = ["refresh", "preview", "update", "destroy", "destroy_preview", "import"] as const;
export type JobOperationKind = (typeof OPERATIONS)[number];

/** The steps a job runs; which ones a job gets depends on its operation and its flow-control policy. */
export const STEP_NAMES = ["init", "refresh", "preview", "apply", "destroy", "import"] as const;
export type StepName = (typeof STEP_NAMES)[number];

/** The steps each operation runs before flow control edits them (ARCHITECTURE.md). */
export const OPERATION_STEPS: Record<JobOperationKind, readonly StepName[]> = {
  refresh: ["init", "refresh"],
  preview: ["init", "refresh", "preview"],
  update: ["init", "refresh", "preview", "apply"],
  destroy_preview: ["init", "refresh", "preview"],
  destroy: ["init", "refresh", "preview", "destroy"],
  import: ["init", "import", "refresh"],
};

export function isOperation(value: string): value is JobOperationKind {
  return (OPERATIONS as readonly string[]).includes(value);
}

/** The refusal of an operation that does not exist, said the same by the server and the CLI (which checks before calling). */
export const unknownOperationMessage = (value: string) => `Unknown Operation "${value}": use one of ${OPERATIONS.join(", ")}. No job was created.`;

export const JOB_STATUSES = ["queued", "running", "awaiting_approval", "completed"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const JOB_RESULTS = ["tbd", "succeeded", "failed", "cancelled", "skipped"] as const;
export type JobResult = (typeof JOB_RESULTS)[number];

// ── Progress events ────────────────────────────────────────────────────────────────────────────
export const EVENT_TYPES = ["job_status", "operation_status", "log", "resource", "diagnostic", "summary", "outputs"] as const;
export type ProgressEventType = (typeof EVENT_TYPES)[number];
/** What a runner produces; job_status and operation_status are the server's own, written as it moves the job. */
export const RUNNER_EVENT_TYPES = ["log", "resource", "diagnostic", "summary", "outputs"] as const satisfies readonly ProgressEventType[];
export type RunnerEventType = (typeof RUNNER_EVENT_TYPES)[number];
const SERVER_EVENT_TYPES = EVENT_TYPES.filter((t) => !(RUNNER_EVENT_TYPES as readonly string[]).includes(t));

export const RESOURCE_ACTIONS = ["create", "update", "delete", "replace", "read", "import", "move", "forget", "noop"] as const;
export const RESOURCE_PHASES = ["planned", "drift", "start", "progress", "complete", "errored"] as const;

/** One event as a runner uploads it: `seq` is the runner's own, per job attempt, starting at 1. */
export const uploadedEvent = z.object({
  seq: z.int32().positive(),
  ts: z.string(),
  /** The step this event belongs to (init, refresh, preview, apply, destroy, import), or null for job-level. */
  operation: z.enum(STEP_NAMES).nullable(),
  type: z.enum(RUNNER_EVENT_TYPES, {
    error: (issue) =>
      `${SERVER_EVENT_TYPES.includes(issue.input as ProgressEventType) ? `${String(issue.input)} events are written by the server, not by runners` : `${JSON.stringify(issue.input)} is not an event type`}; a runner uploads only ${RUNNER_EVENT_TYPES.join(", ")}.`,
  }),
  payload: z.record(z.string(), z.unknown()),
});
export type UploadedEvent = z.infer<typeof uploadedEvent>;

export const eventsUploadRequest = z.object({ attemptId: z.string(), events: z.array(uploadedEvent).max(5000) });

/** Output names follow the secret store's rule: a sensitive output is stored as a secret under its name. */
export const outputName = z.string().regex(STORE_NAME, {
  error: (issue) => `output ${JSON.stringify(issue.input)} has a name the console cannot store: output names must be ${STORE_NAME_HINT}. Rename the output in the module`,
});
export const outputsRequest = z.object({ attemptId: z.string(), outputs: z.record(outputName, z.object({ value: z.unknown(), sensitive: z.boolean() })) });

/** Payload shapes, per type (documentation for both sides; validated loosely). */
export interface LogPayload {
  /** One raw line, ANSI colours allowed. */
  line: string;
  stream?: "stdout" | "stderr";
}
export interface ResourcePayload {
  address: string;
  type: string;
  action: (typeof RESOURCE_ACTIONS)[number];
  phase: (typeof RESOURCE_PHASES)[number];
  before?: unknown;
  after?: unknown;
  message?: string;
  elapsedSeconds?: number;
  /** A planned change that will not be carried out (delete protection), with the reason and the fix. */
  notExecuted?: NotExecuted;
}
/** What a change summary counts, as OpenTofu's change_summary names it: planned, or carried out. */
export const SUMMARY_OPERATIONS = ["plan", "apply", "destroy"] as const;
export type SummaryOperation = (typeof SUMMARY_OPERATIONS)[number];

/** The summary operation of each step, for engines whose output does not name it. */
export const STEP_SUMMARY_OPERATION: Record<StepName, SummaryOperation> = { init: "plan", refresh: "apply", preview: "plan", apply: "apply", destroy: "destroy", import: "apply" };

export interface SummaryPayload {
  /** The engine command that ran, e.g. `builtin apply`, `tofu apply`, `pulumi up`. */
  command: string;
  /** plan: counts of what would change; apply and destroy: of what changed. */
  operation: SummaryOperation;
  add: number;
  change: number;
  remove: number;
  import?: number;
  /** Deletes and replaces shown but not carried out under delete protection (not in add or remove). */
  skippedDeletes?: number;
  /** Addresses of replacements: each one's delete is counted in remove, its create in add. */
  replacements?: string[];
  forget?: number;
}
export interface OutputsPayload {
  /** Sensitive values appear only as `$secret/<name>` references. */
  outputs: Record<string, { value: unknown; sensitive: boolean }>;
}

/** An event as the server stores and streams it (its shape: lib/api/schemas.ts). */
export type ProgressEvent = z.infer<typeof progressEventSchema>;

// ── What a claim hands the runner ──────────────────────────────────────────────────────────────
export interface IacInput {
  jobId: string;
  orgId: string;
  /** Added at claim: names the organization's folder under a hosted runner's local base. */
  orgSlug?: string;
  component: { id: string; name: string; kind: string; environment: string };
  operation: JobOperationKind;
  /** The steps to run, in order, after flow control edited the list. Skipped steps are not included. */
  steps: StepName[];
  module: {
    name: string;
    version: string;
    provisioner: "builtin" | "tofu" | "terraform" | "pulumi";
    source: string;
    /** The module's files, relative path → content. */
    files: Record<string, string>;
    /** SHA-256 of the canonical bundle (sorted paths, each `path\0content\0`). */
    sha256: string;
  };
  /** Variables from the component's spec; secrets only as `$secret/<name>` references the runner resolves. */
  variables: Record<string, unknown>;
  connection: { name: string; provider: string; mode: "stored" | "runner"; config: Record<string, unknown> } | null;
  backend: { id: string; name: string; kind: string; config: Record<string, unknown> };
  policy: PolicyToggles;
  /** For import jobs: resource address and provider id. */
  import?: { address: string; id: string };
  /** When resuming after an approval: the reviewed plan to apply and its checksum. */
  approvedPlan?: { artifactId: string; sha256: string };
  parallelism: number;
}

export interface ClaimResponse {
  job: { id: string; operation: JobOperationKind };
  attemptId: string;
  /** The job credential: bearer token for every /jobs/{id}/… call; scoped to this job, one hour at most. */
  credential: { token: string; expiresAt: string };
  input: IacInput;
  /**
   * The claim's span as a W3C trace context (`00-<trace id>-<span id>-<flags>`), present when the console
   * traces (OTEL_EXPORTER_OTLP_ENDPOINT): the runner's step spans are its children, in the job's trace.
   */
  traceparent?: string;
}

export const claimRequest = z.object({
  /** How many more jobs this runner can take now. */
  capacity: z.number().int().min(1).max(64).default(1),
  /** Long-poll: how long the server may hold the request open when there is no work. */
  waitSeconds: z.number().int().min(0).max(60).default(25),
  version: z.string().optional(),
  /** The engines this runner has, provisioner → version; a job whose module needs one it lacks is left for another runner. */
  engines: z.partialRecord(z.enum(PROVISIONERS), z.string().max(100)).optional(),
});

export interface HeartbeatResponse {
  /** `cancel`: stop at the next step boundary. `none`: carry on. */
  signal: "none" | "cancel";
  leaseExpiresAt: string;
  /** A renewed credential when the old one is close to expiry (only while the job runs). */
  credential?: { token: string; expiresAt: string };
}

export const stepStartRequest = z.object({ attemptId: z.string() });
/** `proceed: false` means the job was cancelled: mark nothing, stop. */
export interface StepStartResponse {
  proceed: boolean;
}

export const stepFinishRequest = z.object({
  attemptId: z.string(),
  result: z.enum(["succeeded", "failed"]),
  /** Why it failed, in the product's words. */
  reason: z.string().optional(),
  /** For preview steps: the saved plan artifact and its checksum. */
  plan: z.object({ artifactId: z.string(), sha256: z.string(), summary: z.record(z.string(), z.unknown()) }).optional(),
});
/** A step's saved plan as the job keeps it: the artifact, its checksum, and the counts the step reported. */
export type StepPlanRef = NonNullable<z.infer<typeof stepFinishRequest>["plan"]>;

/**
 * The review rendition of an engine plan the console cannot read itself (OpenTofu's and Terraform's binary plans,
 * Pulumi's): uploaded by the preview step as an artifact of kind plan_review, bound to the plan by its checksum. It
 * lists what the plan changes — addresses, types and actions in the builtin engine's words, no values — so the plan
 * review (and whoever approves it) sees the same counts and operations as for a builtin plan.
 */
export const planReviewRenditionSchema = z.object({
  planton_plan_review: z.literal(1),
  /** SHA-256 (hex) of the plan artifact this describes. */
  plan_sha256: z.string().regex(/^[0-9a-f]{64}$/),
  engine: z.string(),
  operation: z.enum(["plan", "destroy"]),
  state_lineage: z.string().nullable(),
  state_serial: z.number().int().nullable(),
  /** False when refresh was skipped: deletes of things already gone could not be computed. */
  delete_operations_computed: z.boolean(),
  resource_changes: z.array(z.object({ address: z.string(), type: z.string(), action: z.string() })),
});
export type PlanReviewRendition = z.infer<typeof planReviewRenditionSchema>;

/** What the runner does next: run the following step, stop (job paused for approval, cancelled, or done). */
export interface StepFinishResponse {
  next: "continue" | "stop";
}

export const attemptEndRequest = z.object({
  attemptId: z.string(),
  exitCode: z.int32(),
  reason: z.string().optional(),
});

/** Who a runner token belongs to: checked by a runner before it says it started. */
export interface WhoamiResponse {
  runner: { id: string; name: string; kind: "hosted" | "self_hosted"; orgId: string | null };
}

// Routes (all JSON unless noted; runner token = `Authorization: Bearer rnr_…`, job credential = `Bearer jcr_…`).
// Every /jobs/{jobId}/… call needs the credential of the job's current attempt, issued under the
// runner's current token to a runner that is not revoked, while the job runs; events, step start/finish
// and attempt/end are also taken from that attempt after its own last step ended the job.
//   GET  {RUNNER_API}/whoami                                  runner token   → WhoamiResponse
//   POST {RUNNER_API}/claim                                   runner token   claimRequest → 200 ClaimResponse | 204
//   POST {RUNNER_API}/jobs/{jobId}/heartbeat                  credential     {attemptId} → HeartbeatResponse
//   POST {RUNNER_API}/jobs/{jobId}/events                     credential     eventsUploadRequest (RUNNER_EVENT_TYPES only) → {acceptedThrough: seq}
//   POST {RUNNER_API}/jobs/{jobId}/steps/{step}/start         credential     stepStartRequest → StepStartResponse
//   POST {RUNNER_API}/jobs/{jobId}/steps/{step}/finish        credential     stepFinishRequest → StepFinishResponse
//   POST {RUNNER_API}/jobs/{jobId}/artifacts?kind=&name=      credential     raw bytes, header `Digest: sha-256=<base64>` → {artifactId, sha256}
//   GET  {RUNNER_API}/jobs/{jobId}/artifacts/{artifactId}     credential     → bytes with `Digest: sha-256=…`
//   POST {RUNNER_API}/jobs/{jobId}/state/lock                 credential     LockInfo → 200 | 409 {lock: LockInfo, message}
//   DELETE {RUNNER_API}/jobs/{jobId}/state/lock?id=           credential     → 200
//   GET  {RUNNER_API}/jobs/{jobId}/state                      credential     → state JSON | 204 when none
//   PUT  {RUNNER_API}/jobs/{jobId}/state?lockId=              credential     state JSON → 200
//   GET  {RUNNER_API}/jobs/{jobId}/secrets/{name}             credential     → {value} (only secrets the job references)
//   POST {RUNNER_API}/jobs/{jobId}/outputs                    credential     outputsRequest → OutputsPayload (sensitive → `$secret/…`)
//   POST {RUNNER_API}/jobs/{jobId}/attempt/end                credential     attemptEndRequest → 200

/** GET /jobs/{jobId}/connection: the job's connection as environment variables for its engine process only. */
export interface JobConnectionEnv {
  provider: string | null;
  mode: "stored" | "runner" | null;
  /** Variable → value (lib/catalog.ts CONNECTION_PROVIDERS[…].env); empty for a runner-mode connection. */
  env: Record<string, string>;
}
