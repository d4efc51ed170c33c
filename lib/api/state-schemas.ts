// The shapes of state backends and state moves on the public API, defined once (as lib/api/schemas.ts
// is for jobs): the tRPC procedures declare them as input and output, REST and the OpenAPI document
// are generated from them, lib/client, the CLI and the console take their types from them.
import { z } from "zod";
import { PROVISIONERS } from "../catalog";
import { backendNameSchema, STATE_BACKEND_KIND_NAMES } from "../state-backend-kinds";
import { MOVE_ITEMS_SHOWN, MOVE_STATUSES, MOVE_STEPS } from "../state-moves";
import { timestamp } from "./schemas";

const provisioner = z.enum(PROVISIONERS);

/** A view's `limit`: at most that many rows (0: the counts alone), every row when left out. */
export const viewLimit = (description: string) => z.number().int().min(0).optional().meta({ description });
/** The rows a `limit` leaves: the first that many, or all of them. */
export const firstOf = <T>(rows: T[], limit: number | undefined): T[] => (limit === undefined ? rows : rows.slice(0, limit));
const kind = z.enum(STATE_BACKEND_KIND_NAMES as [string, ...string[]]);

// ── Backends ────────────────────────────────────────────────────────────────────────────────────

/** POST /state-backends (and PATCH /state-backends/{name} with the same fields, all optional but name). */
export const stateBackendBody = z.object({
  name: backendNameSchema,
  kind: z.string().min(1).meta({ description: `One of ${STATE_BACKEND_KIND_NAMES.filter((k) => k !== "planton_managed").join(", ")}` }),
  /** The kind's own fields (lib/state-backend-kinds.ts); checked by the service so a wrong field gets the product's message. */
  config: z.record(z.string(), z.unknown()).default({}),
  /** The connection the credentials come from (its name); required when the kind needs one. */
  connection: z.string().min(1).nullable().optional(),
});

/** PATCH /state-backends/{name}: the fields to change (the name is the backend's, from the path). */
export const stateBackendPatch = z.object({
  name: z.string().min(1).meta({ description: "The backend to change" }),
  kind: z.string().min(1).optional(),
  /** Replaces the kind's fields whole when sent. */
  config: z.record(z.string(), z.unknown()).optional(),
  connection: z.string().min(1).nullable().optional(),
});

/** POST /state-backends/test-access: a saved backend by name, or an unsaved one by kind, config and connection. */
export const testAccessBody = z.object({
  name: z.string().min(1).optional().meta({ description: "A saved backend to test; or give kind (with config and connection) to test one before saving it" }),
  kind: z.string().min(1).optional(),
  config: z.record(z.string(), z.unknown()).optional(),
  connection: z.string().min(1).nullable().optional(),
});

/** PUT /state-backends/defaults/{provisioner}: the backend new components of that provisioner keep their state in. */
export const setDefaultBody = z.object({ provisioner: z.string().min(1), backend: z.string().min(1) });

export const accessCheckSchema = z
  .object({
    ok: z.boolean(),
    /** Each probe step: write, read back, compare, delete. */
    steps: z.array(z.object({ step: z.enum(["open", "write", "read", "compare", "delete"]), ok: z.boolean(), detail: z.string() })),
    /** When not ok: what failed and the fix, in one sentence. */
    error: z.string().nullable(),
  })
  .meta({ id: "StateBackendAccessCheck", description: "The access test: write, read back and delete a probe object" });

export const stateBackendSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    kind,
    config: z.record(z.string(), z.unknown()),
    connection: z.string().nullable().meta({ description: "The connection its credentials come from" }),
    /** Provisioners for which this backend is the organization's default. */
    defaultFor: z.array(provisioner),
    /** How many components keep their state here. */
    components: z.number().int(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: "StateBackend" });

export const stateBackendListSchema = z
  .object({
    backends: z.array(stateBackendSchema),
    /** The organization's default backend per provisioner (backend name). */
    defaults: z.record(z.string(), z.string()),
  })
  .meta({ id: "StateBackendList" });

/** What create and update answer: the saved backend and the access test it passed. */
export const stateBackendSavedSchema = z.object({ backend: stateBackendSchema, access: accessCheckSchema }).meta({ id: "StateBackendSaved" });

/** DELETE /state-backends/{name}. */
export const stateBackendDeletedSchema = z.object({ name: z.string(), deleted: z.literal(true) }).meta({ id: "StateBackendDeleted" });

/** One state kept on Planton-managed storage. */
export const plantonManagedStateSchema = z
  .object({
    componentId: z.string(),
    component: z.string(),
    environment: z.string(),
    kind: z.string(),
    provisioner,
    key: z.string(),
    size: z.number().int(),
    serial: z.number().int().nullable(),
    checksum: z.string().nullable(),
    updatedAt: timestamp,
  })
  .meta({ id: "PlantonManagedState" });

/** GET /state-backends/planton-managed: `limit` bounds the list (the totals cover every state). */
export const plantonManagedUsageInput = z.object({
  limit: viewLimit("At most this many states, by environment and component (0: the totals alone); every state when left out"),
});

export const plantonManagedUsageSchema = z
  .object({
    states: z.array(plantonManagedStateSchema).meta({ description: "Every state by environment and component, or the first `limit` of them" }),
    totals: z.object({ count: z.number().int(), size: z.number().int() }),
    byEnvironment: z.array(z.object({ environment: z.string(), count: z.number().int(), size: z.number().int() })),
    byProvisioner: z.array(z.object({ provisioner, count: z.number().int(), size: z.number().int() })).meta({ description: "The provisioners whose states are there (a move-off needs a destination for each), by name" }),
  })
  .meta({ id: "PlantonManagedUsage" });

export const forceUnlockSchema = z
  .object({ componentId: z.string(), released: z.record(z.string(), z.unknown()).nullable().meta({ description: "The lock info that was removed; null when nothing was locked" }) })
  .meta({ id: "ForceUnlockResult" });

/** GET /components/{componentId}/state: what its state holds (what a destroy deletes, what a forget leaves running); never a value. */
/** What a state document is: an OpenTofu version-4 state, or a Pulumi checkpoint (its serial is its deployment time in ms). */
export const stateFormatSchema = z.enum(["opentofu", "pulumi"]);
export type StateFormat = z.infer<typeof stateFormatSchema>;

export const componentStateSchema = z
  .object({
    componentId: z.string(),
    format: stateFormatSchema.nullable().meta({ description: "opentofu (a version-4 state) or pulumi (a checkpoint, whose serial is its deployment time in milliseconds); null when no state was written yet" }),
    backend: z.string().nullable().meta({ description: "The state backend's name; null when no state was written yet" }),
    serial: z.number().int().nullable(),
    lineage: z.string().nullable(),
    updatedAt: timestamp.nullable(),
    resources: z.array(z.object({ address: z.string(), type: z.string(), instances: z.number().int() })).meta({ description: "The managed resources, in the state's order" }),
  })
  .meta({ id: "ComponentState" });

// ── Moves ───────────────────────────────────────────────────────────────────────────────────────

/** POST /state-moves/dry-run and POST /state-moves: move every Planton-managed state off. */
export const moveOffBody = z.object({
  /** Destination backend name per provisioner in use, e.g. { "builtin": "prod-s3" }; "*" names it for the one provisioner in use. */
  to: z.record(z.string(), z.string().min(1)).meta({ description: 'Destination backend name per provisioner in use; the key "*" stands for the one provisioner in use' }),
});

/** POST /state-moves/dry-run: `limit` bounds the items answered (the totals cover every one). */
export const dryRunBody = moveOffBody.extend({
  limit: viewLimit("At most this many items, by environment and component (the totals cover every state); every item when left out"),
});

/** POST /components/{componentId}/state/migrate-backend (dry run with ?dryRun=true): one component's state to another backend. */
export const migrateBackendBody = z.object({ to: z.string().min(1), dryRun: z.boolean().default(false) });

export const moveItemSchema = z
  .object({
    id: z.string().nullable().meta({ description: "Null in a dry run" }),
    componentId: z.string(),
    component: z.string(),
    environment: z.string(),
    provisioner,
    from: z.string().meta({ description: "Source backend name" }),
    to: z.string().meta({ description: "Destination backend name" }),
    fromKey: z.string(),
    toKey: z.string(),
    size: z.number().int(),
    serial: z.number().int().nullable(),
    checksum: z.string().nullable(),
    step: z.enum(MOVE_STEPS),
    error: z.string().nullable(),
    /** Whether this component's move can be rolled back now (the old copy exists and nothing newer was lost). */
    canRollBack: z.boolean(),
  })
  .meta({ id: "StateMoveItem" });

export const dryRunSchema = z
  .object({
    items: z.array(moveItemSchema).meta({ description: "Every state that would move, by environment and component, or the first `limit` of them" }),
    totals: z.object({ count: z.number().int(), size: z.number().int() }),
  })
  .meta({ id: "StateMoveDryRun", description: "What a move would do; nothing was changed" });

export const stateMoveSchema = z
  .object({
    id: z.string(),
    status: z.enum(MOVE_STATUSES),
    scope: z.enum(["move_off_planton", "migrate_backend"]),
    destinations: z.record(z.string(), z.string()).meta({ description: "Destination backend name per provisioner" }),
    startedBy: z.string(),
    createdAt: timestamp,
    finishedAt: timestamp.nullable(),
    progress: z
      .object({ total: z.number().int(), done: z.number().int(), failed: z.number().int(), rolledBack: z.number().int(), inFlight: z.number().int() })
      .meta({ description: "Counts over every item, also when `items` carries only some" }),
    items: z.array(moveItemSchema).meta({
      description: `Every item, by environment and component, from GET /state-moves/{id}; a live view (current, the watch, get with limit, and what start, retry and rollback answer) carries at most ${MOVE_ITEMS_SHOWN} (or limit): failed first, then in flight, then the rest`,
    }),
  })
  .meta({ id: "StateMove" });

/** GET /state-moves/current: the running move, else the latest one, else null; plus what is still on Planton-managed storage. */
export const currentMoveSchema = z
  .object({
    move: stateMoveSchema.nullable(),
    remainingOnPlanton: z.number().int().nullable().meta({ description: "How many states are still on Planton-managed storage; null while a move runs (each of its steps changes it): read it once the move has ended" }),
  })
  .meta({ id: "CurrentStateMove" });

/** What migrate-backend answers: the dry run (dryRun: true), or the move it started. */
export const migrateBackendResultSchema = z
  .object({ dryRun: dryRunSchema.nullable(), move: stateMoveSchema.nullable() })
  .meta({ id: "MigrateBackendResult" });
