// The shapes of Infra Components on the direct path (lib/component-lifecycle.ts): what scripts, the
// CLI and the console send to create, change, delete and forget one, and what the API answers. The
// tRPC procedures (server/trpc/routers/components.ts) declare them; REST and the OpenAPI document follow.
import { z } from "zod";
import { COMPONENT_ACTIONS, COMPONENT_LIST_SHOWS, COMPONENT_STATUSES } from "../component-lifecycle";
import { nameSchema } from "../names";
import { MODULE_RULES } from "../modules";
import { JOB_RESULTS, JOB_STATUSES, OPERATIONS } from "../runner-protocol";
import { jobRecordSchema, timestamp } from "./schemas";

const versionMessage = z.string().max(500, { error: "Keep the version message under 500 characters" }).default("").meta({ description: "A description for the job it queues, like a commit message" });
/** A component's module: `name@version` pins a registered version for its kind (the organization's or the platform's); null follows the latest. */
const moduleChoice = z
  .string()
  .trim()
  .regex(/^[a-z][a-z0-9-]{1,62}@\S+$/, { error: "Module must be name@version, e.g. s3-bucket@1.4.0 (or null to follow the registry's latest for the kind)" })
  .nullable()
  .optional()
  .meta({ description: "A registered module version for the kind as name@version (a custom module, pinned); null or left out: follow the latest in the organization's registry, else the platform's" });
const deploy = z.boolean().default(true).meta({ description: "Queue an update job for the change (default); false saves without deploying (a draft, when creating)" });

// ── What scripts send ───────────────────────────────────────────────────────────────────────────

/** POST /components */
export const createComponentBody = z.object({
  environment: z.string().min(1, { error: "Pick an environment" }),
  kind: z.string().min(1, { error: "Pick a catalog kind" }),
  name: nameSchema(),
  description: z.string().max(500).default(""),
  spec: z.record(z.string(), z.unknown()).default({}),
  connection: z.string().optional().meta({ description: "A connection's name, of the provider the kind deploys through; a component without one is refused by preflight until it has one" }),
  stateBackend: z.string().optional().meta({ description: "A state backend's name; left out, the organization's default" }),
  module: moduleChoice,
  deploy,
  versionMessage,
});

/** PATCH /components/{id}: only the fields sent change; baseVersion makes the change refused if someone changed it since. */
export const updateComponentBody = z.object({
  id: z.string().min(1),
  baseVersion: z
    .number()
    .int()
    .min(1)
    .optional()
    .meta({ description: "The spec version your change is based on (GET /components/{id} → specVersion); when someone changed it since, nothing is saved (409) and the answer names both versions" }),
  description: z.string().max(500).optional(),
  spec: z.record(z.string(), z.unknown()).optional(),
  /** A connection name; null clears it. */
  connection: z.string().nullable().optional(),
  stateBackend: z.string().nullable().optional(),
  /** name@version pins a custom module; null clears it (follow the latest); left out, unchanged. */
  module: moduleChoice,
  deploy,
  versionMessage,
});

/** DELETE /components/{id}: runs a destroy job (or removes a draft that never ran at once); also the retry of a failed delete. */
export const deleteComponentBody = z.object({ id: z.string().min(1), versionMessage });

/** POST /components/{id}/forget (admins): confirmName must be the component's name. */
export const forgetComponentBody = z.object({
  id: z.string().min(1),
  confirmName: z.string().optional().meta({ description: "The component's name, to confirm that its resources keep running unmanaged; without it nothing is forgotten and the answer lists them" }),
});

/** GET /components */
export const listComponentsInput = z.object({
  environment: z.string().optional(),
  kind: z.string().optional(),
  show: z.enum(COMPONENT_LIST_SHOWS).default("current").meta({ description: "current: the managed ones (default); gone: the deleted and forgotten; all" }),
});

// ── What the API answers ────────────────────────────────────────────────────────────────────────

const componentAction = z.object({ allowed: z.boolean(), why: z.string().nullable().meta({ description: 'Why not, as the clause a refusal completes ("Nothing was changed: <why>.")' }) });

export const componentJobRefSchema = z
  .object({ id: z.string(), operation: z.enum(OPERATIONS), status: z.enum(JOB_STATUSES), result: z.enum(JOB_RESULTS), specVersion: z.number().int().nullable(), createdAt: timestamp })
  .meta({ id: "InfraComponentJobRef" });

/** Which module the component's next job runs and the rule that chose it (the preflight's order). */
export const componentModuleSchema = z
  .object({
    rule: z.enum(MODULE_RULES).meta({ description: "custom: pinned on the component; organization / platform: the latest in that registry for its kind; none: nothing registered" }),
    pinned: z.string().nullable().meta({ description: "The custom module the component pins (name@version), or null when it follows the latest" }),
    resolved: z.string().nullable().meta({ description: "The version its next job runs (name@version), or null when none resolves" }),
    sha256: z.string().nullable().meta({ description: "That version's bundle checksum, as recorded at registration" }),
  })
  .meta({ id: "InfraComponentModule" });

export const componentSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    kind: z.string(),
    description: z.string(),
    spec: z.record(z.string(), z.unknown()).meta({ description: "Secrets only as `$secret/<name>` references" }),
    environment: z.string(),
    environmentId: z.string(),
    connection: z.string().nullable(),
    stateBackend: z.string().nullable(),
    customModuleId: z.string().nullable(),
    module: componentModuleSchema,
    status: z.enum(COMPONENT_STATUSES),
    statusReason: z.string().nullable().meta({ description: "Why it is in that status (a failed destroy's reason)" }),
    specVersion: z.number().int().meta({ description: "The version it is at; send it as baseVersion when changing it" }),
    deleteJobId: z.string().nullable().meta({ description: "The destroy job deleting (or that deleted, or failed to delete) it" }),
    deletedAt: timestamp.nullable(),
    deletedBy: z.string().nullable(),
    createdByLabel: z.string().nullable(),
    createdAt: timestamp,
    updatedAt: timestamp,
    lastJob: componentJobRefSchema.nullable().meta({ description: "Its newest job" }),
    actions: z.object(Object.fromEntries(COMPONENT_ACTIONS.map((a) => [a, componentAction])) as Record<(typeof COMPONENT_ACTIONS)[number], typeof componentAction>),
  })
  .meta({ id: "InfraComponent" });

export const componentListSchema = z.object({ components: z.array(componentSchema) }).meta({ id: "InfraComponentList" });

/** What create, update and delete answer: the component as it is now and the job it queued (null when none: a draft, no change, a draft deleted at once). */
export const componentChangeSchema = z
  .object({
    component: componentSchema,
    job: jobRecordSchema.nullable(),
    queuedBehind: z.string().nullable().meta({ description: "The component's job already running or waiting, which the new job waits for" }),
  })
  .meta({ id: "InfraComponentChange" });

export const fieldChangeSchema = z.object({ from: z.unknown(), to: z.unknown() });

export const componentVersionSchema = z
  .object({
    version: z.number().int(),
    description: z.string(),
    spec: z.record(z.string(), z.unknown()),
    connection: z.string().nullable(),
    stateBackend: z.string().nullable(),
    customModuleId: z.string().nullable(),
    module: z.string().nullable().meta({ description: "The custom module this version pins (name@version), or null: it follows the latest" }),
    changes: z.record(z.string(), fieldChangeSchema).meta({ description: "From the version before, field by field (spec keys as `spec.<key>`); version 1: every field from null" }),
    createdByLabel: z.string(),
    createdAt: timestamp,
    jobIds: z.array(z.string()).meta({ description: "The jobs that ran this version, oldest first" }),
  })
  .meta({ id: "InfraComponentVersion" });

export const componentVersionListSchema = z.object({ versions: z.array(componentVersionSchema).meta({ description: "Newest first" }) }).meta({ id: "InfraComponentVersionList" });

/** What forget answers: the component (status forgotten) and the resources left running unmanaged. */
export const forgetResultSchema = z
  .object({ component: componentSchema, unmanaged: z.array(z.string()).meta({ description: "The resource addresses its state held, which keep running" }) })
  .meta({ id: "ForgetResult" });
