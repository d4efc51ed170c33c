// The shapes the public REST API (/api/v1) answers with, as a script sees them (dates as ISO strings).
import type { ArtifactKind } from "../artifacts";
import type { NotExecuted } from "../delete-protection";
import type { PreflightCheck, PreflightReport } from "../preflight";
import type { JobActions } from "../job-actions";
import type { JobOperationKind, JobResult, JobStatus, ProgressEvent, StepName } from "../runner-protocol";

export type { JobActions, NotExecuted, ProgressEvent };

export interface InfraJobSummary {
  id: string;
  operation: JobOperationKind;
  status: JobStatus;
  result: JobResult;
  reason: string | null;
  versionMessage: string;
  componentId: string;
  componentName: string;
  kind: string;
  environment: string;
  createdByLabel: string;
  rerunOf: string | null;
  cancelRequestedAt: string | null;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
  /** What the caller may do with the job now, and why not. */
  actions: JobActions;
}

export interface JobOperation {
  id: string;
  step: StepName;
  ordinal: number;
  status: JobStatus;
  result: JobResult;
  reason: string | null;
  startedAt: string | null;
  endedAt: string | null;
  /** A preview's saved plan: its checksum and the counts the runner reported (skippedDeletes: what delete protection leaves out). */
  plan: { artifactId: string; sha256: string; summary?: Record<string, unknown> } | null;
}

export interface ArtifactRef {
  id: string;
  kind: ArtifactKind;
  name: string;
  sha256: string;
  size: number;
  /** Held encrypted (the executable plan, state snapshots): only the job's runner can download it. */
  encrypted: boolean;
  createdAt: string;
}

export interface InfraJob extends InfraJobSummary {
  orgId: string;
  eventSeq: number;
  pausedAt: string | null;
  preflight: PreflightReport | null;
  outputs: Record<string, { value: unknown; sensitive: boolean }> | null;
  moduleSha256: string | null;
  hasIacInput: boolean;
  steps: JobOperation[];
  attempts: { id: string; runnerId: string; runnerName: string | null; startedAt: string; endedAt: string | null; exitCode: number | null; reason: string | null }[];
  approvals: { id: string; userLabel: string; planSha256: string | null; message: string; createdAt: string }[];
  artifacts: ArtifactRef[];
}

/** Created and rerun jobs answer with the job's row (no steps). */
export type CreatedJob = Omit<InfraJob, "steps" | "attempts" | "approvals" | "artifacts" | "componentName" | "kind" | "environment" | "hasIacInput" | "actions">;

export type { PreflightCheck, PreflightReport };

export interface PreflightResult {
  kind: string;
  reports: (PreflightReport & { environment: string })[];
}

/** One operation of a saved plan: whether apply carries it out, and if not, why (with the fix). */
export interface PlanOperation {
  address: string;
  type: string;
  action: string;
  executes: boolean;
  notExecuted: NotExecuted | null;
}

/** The review document of a job's saved plan (spec: runs-and-plans-api.md). */
export interface PlanReview {
  jobId: string;
  artifactId: string;
  checksum: string;
  verification: "verified" | "mismatch";
  /** A destroy plan deletes everything; delete protection holds none of it back. */
  destroy: boolean;
  state: { lineage: string | null; serial: number | null };
  notes: string[];
  /** byAction and byKind count every operation; notExecuted counts, by action, those apply leaves out. */
  counts: { byAction: Record<string, number>; byKind: Record<string, Record<string, number>>; notExecuted: Record<string, number> };
  deleteOperationsComputed: boolean;
  /** Deletes and replaces shown but not carried out (delete protection). */
  deletesNotExecuted: number;
  /** Each replacement deletes its object before creating the new one. */
  deletesInsideReplacements: { address: string; executes: boolean }[];
  operations: PlanOperation[];
  summary: Record<string, unknown> | null;
}

export interface WhoAmI {
  user: { id: string; label: string };
  organization: { id: string; slug: string; name: string };
  role: "viewer" | "engineer" | "admin";
}

export interface CreateJobRequest {
  operation?: string;
  versionMessage?: string;
  import?: { address: string; id: string };
}
