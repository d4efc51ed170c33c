// The shapes the public REST API (/api/v1) answers with, as a script sees them (dates as ISO strings):
// each is the wire form of the procedure's output schema in lib/api/schemas.ts, never written by hand.
import type { z } from "zod";
import type {
  artifactRefSchema,
  createJobBody,
  eventsPageSchema,
  iacInputSchema,
  jobPageSchema,
  jobRecordSchema,
  jobSchema,
  jobSummarySchema,
  planOperationSchema,
  planReviewSchema,
  preflightResultSchema,
  resumeBody,
  resumeResultSchema,
  rerunBody,
  whoAmISchema,
} from "../api/schemas";
import type {
  accessCheckSchema,
  componentStateSchema,
  forceUnlockSchema,
  plantonManagedUsageSchema,
  stateBackendBody,
  stateBackendDeletedSchema,
  stateBackendListSchema,
  stateBackendPatch,
  stateBackendSavedSchema,
  stateBackendSchema,
  testAccessBody,
} from "../api/state-schemas";
import type { Answer } from "../api/wire";
import type { moduleListSchema, modulePolicySchema, moduleRowSchema, moduleVersionListSchema, moduleVersionSchema, registerModuleBody } from "../api/module-schemas";
import type { defaultRunnerSchema, registerRunnerBody, runnerDetailSchema, runnerListSchema, runnerRevokedSchema, runnerSchema, runnerTokenSchema } from "../api/runner-schemas";
import type { addAuthorizationBody, authorizationChangeSchema, authorizationListSchema, connectionAuthorizationsSchema, removeAuthorizationInput } from "../api/connection-schemas";
import type { auditCheckpointListSchema, auditEventSchema, auditFilterInput, auditPageSchema, auditVerifySchema } from "../api/audit-schemas";
import type { currentMoveSchema, dryRunSchema, migrateBackendResultSchema, moveItemSchema, stateMoveSchema } from "../api/state-schemas";
import type {
  componentChangeSchema,
  componentListSchema,
  componentSchema,
  componentVersionListSchema,
  componentVersionSchema,
  createComponentBody,
  deleteComponentBody,
  forgetComponentBody,
  forgetResultSchema,
  listComponentsInput,
  updateComponentBody,
} from "../api/component-schemas";

export type { JobActions } from "../job-actions";
export type { NotExecuted } from "../delete-protection";
export type { PreflightCheck, PreflightReport } from "../preflight";
export type { ProgressEvent } from "../runner-protocol";

export type InfraJobSummary = Answer<typeof jobSummarySchema>;
export type InfraJobPage = Answer<typeof jobPageSchema>;
export type InfraJob = Answer<typeof jobSchema>;
export type JobOperation = InfraJob["steps"][number];
/** What create, cancel, resume and rerun answer with: the job's own record. */
export type CreatedJob = Answer<typeof jobRecordSchema>;
export type ArtifactRef = Answer<typeof artifactRefSchema>;
export type ResumeResult = Answer<typeof resumeResultSchema>;
export type EventsPage = Answer<typeof eventsPageSchema>;
export type PreflightResult = Answer<typeof preflightResultSchema>;
export type PlanOperation = Answer<typeof planOperationSchema>;
export type PlanReview = Answer<typeof planReviewSchema>;
export type WhoAmI = Answer<typeof whoAmISchema>;
export type JobIacInput = Answer<typeof iacInputSchema>;

export type CreateJobRequest = z.input<typeof createJobBody>;
export type ResumeRequest = z.input<typeof resumeBody>;
export type RerunRequest = z.input<typeof rerunBody>;

export type StateBackend = Answer<typeof stateBackendSchema>;
export type StateBackendList = Answer<typeof stateBackendListSchema>;
export type StateBackendSaved = Answer<typeof stateBackendSavedSchema>;
export type StateBackendDeleted = Answer<typeof stateBackendDeletedSchema>;
export type StateBackendAccessCheck = Answer<typeof accessCheckSchema>;
export type PlantonManagedUsage = Answer<typeof plantonManagedUsageSchema>;
export type ForceUnlockResult = Answer<typeof forceUnlockSchema>;
export type ComponentState = Answer<typeof componentStateSchema>;
export type CreateStateBackendRequest = z.input<typeof stateBackendBody>;
export type UpdateStateBackendRequest = Omit<z.input<typeof stateBackendPatch>, "name">;
export type TestAccessRequest = z.input<typeof testAccessBody>;
export type StateMove = Answer<typeof stateMoveSchema>;
export type StateMoveItem = Answer<typeof moveItemSchema>;
export type StateMoveDryRun = Answer<typeof dryRunSchema>;
export type CurrentStateMove = Answer<typeof currentMoveSchema>;
export type MigrateBackendResult = Answer<typeof migrateBackendResultSchema>;

export type Runner = Answer<typeof runnerSchema>;
export type RunnerList = Answer<typeof runnerListSchema>;
export type RunnerDetail = Answer<typeof runnerDetailSchema>;
/** What register and rotate-token answer: the token, shown once. */
export type RunnerToken = Answer<typeof runnerTokenSchema>;
export type RunnerRevoked = Answer<typeof runnerRevokedSchema>;
export type DefaultRunner = Answer<typeof defaultRunnerSchema>;
export type RegisterRunnerRequest = z.input<typeof registerRunnerBody>;

export type ConnectionAuthorizations = Answer<typeof connectionAuthorizationsSchema>;
export type ConnectionAuthorizationList = Answer<typeof authorizationListSchema>;
export type ConnectionAuthorizationChange = Answer<typeof authorizationChangeSchema>;
export type AddAuthorizationRequest = Omit<z.input<typeof addAuthorizationBody>, "connection">;
export type RemoveAuthorizationRequest = { provider?: string; scope: z.input<typeof removeAuthorizationInput>["scope"]; environments?: string[] };

export type AuditEvent = Answer<typeof auditEventSchema>;
export type AuditPage = Answer<typeof auditPageSchema>;
export type AuditVerification = Answer<typeof auditVerifySchema>;
export type AuditCheckpointList = Answer<typeof auditCheckpointListSchema>;
/** The filters of audit.list and the export: actor, action (or family), targetKind, target, component, environment, result, from, to, q. */
export type AuditFilter = z.input<typeof auditFilterInput>;

export type InfraComponent = Answer<typeof componentSchema>;
export type InfraComponentList = Answer<typeof componentListSchema>;
/** What create, update and delete answer: the component now and the job it queued (null: a draft, no change). */
export type ComponentChange = Answer<typeof componentChangeSchema>;
export type ComponentVersion = Answer<typeof componentVersionSchema>;
export type ComponentVersionList = Answer<typeof componentVersionListSchema>;
export type ForgetResult = Answer<typeof forgetResultSchema>;
export type ListComponentsFilter = z.input<typeof listComponentsInput>;
export type CreateComponentRequest = z.input<typeof createComponentBody>;
export type UpdateComponentRequest = Omit<z.input<typeof updateComponentBody>, "id">;
export type DeleteComponentRequest = Omit<z.input<typeof deleteComponentBody>, "id">;
export type ForgetComponentRequest = Omit<z.input<typeof forgetComponentBody>, "id">;

export type ModuleList = Answer<typeof moduleListSchema>;
export type ModuleListRow = Answer<typeof moduleRowSchema>;
export type ModuleVersion = Answer<typeof moduleVersionSchema>;
export type ModuleVersionList = Answer<typeof moduleVersionListSchema>;
export type ModulePolicy = Answer<typeof modulePolicySchema>;
export type RegisterModuleRequest = z.input<typeof registerModuleBody>;
