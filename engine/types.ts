/** Public types of the builtin engine. Everything here is plain JSON-compatible data. */
import type { NotExecuted } from "../lib/delete-protection";
import type { Value, Attrs } from "./values";

export type { Value, Attrs, NotExecuted };

// ---------------------------------------------------------------- state (OpenTofu v4 layout)

export interface StateV4 {
  version: 4;
  terraform_version: string;
  serial: number;
  lineage: string;
  outputs: Record<string, StateOutput>;
  resources: StateResource[];
  check_results: null;
}

export interface StateOutput {
  value: Value;
  type: unknown;
  sensitive?: boolean;
}

export interface StateResource {
  /** The module instance, e.g. `module.site` or `module.site["a"]`; absent for the root module. */
  module?: string;
  mode: "managed" | "data";
  type: string;
  name: string;
  /** e.g. provider["registry.opentofu.org/hashicorp/random"] */
  provider: string;
  instances: StateInstance[];
}

export type SensitivePath = { type: "get_attr"; value: string }[];

export interface StateInstance {
  /** count index (number) or for_each key (string). */
  index_key?: number | string;
  schema_version: number;
  attributes: Attrs;
  sensitive_attributes: SensitivePath[];
  dependencies: string[];
}

// ---------------------------------------------------------------- locking

import type { LockInfo } from "../lib/state-lock";
export type { LockInfo };

/** Where a component's state lives. The server implements the same interface against Postgres. */
export interface StateBackend {
  /** Takes the lock or throws StateLockedError naming the holder. */
  lock(info: Partial<LockInfo> & { Operation: string }): Promise<LockInfo>;
  unlock(id: string): Promise<void>;
  get(): Promise<StateV4 | null>;
  put(state: StateV4): Promise<void>;
}

// ---------------------------------------------------------------- diagnostics and UI lines

export interface Diagnostic {
  severity: "error" | "warning";
  summary: string;
  detail: string;
  address?: string;
  range?: {
    filename: string;
    start: { line: number; column: number; byte: number };
    end: { line: number; column: number; byte: number };
  };
}

/** Actions as the product names them (progress events use the same words). */
export type ChangeAction = "noop" | "create" | "read" | "update" | "replace" | "delete" | "import" | "move" | "forget";

export interface UiResourceAddr {
  addr: string;
  module: string;
  resource: string;
  implied_provider: string;
  resource_type: string;
  resource_name: string;
  resource_key: number | string | null;
}

export interface UiChange {
  resource: UiResourceAddr;
  action: ChangeAction;
  reason?: string;
  previous_resource?: UiResourceAddr;
  importing?: { id: string };
  /** Shown in the plan but not carried out (delete protection). */
  not_executed?: NotExecuted;
}

interface UiBase {
  "@level": "info" | "warn" | "error";
  "@message": string;
  "@module": "tofu.ui";
  "@timestamp": string;
}

export type UiMessage = UiBase &
  (
    | { type: "version"; tofu: string; ui: string; engine: "planton-builtin" }
    | { type: "log" }
    | { type: "planned_change"; change: UiChange }
    | { type: "resource_drift"; change: UiChange }
    | {
        type: "change_summary";
        changes: ChangeSummary & { operation: "plan" | "apply" | "destroy" };
      }
    | { type: "apply_start"; hook: { resource: UiResourceAddr; action: ChangeAction; id_key?: string; id_value?: string } }
    | { type: "apply_progress"; hook: { resource: UiResourceAddr; action: ChangeAction; elapsed_seconds: number } }
    | {
        type: "apply_complete";
        hook: { resource: UiResourceAddr; action: ChangeAction; id_key?: string; id_value?: string; elapsed_seconds: number };
      }
    | { type: "apply_errored"; hook: { resource: UiResourceAddr; action: ChangeAction; elapsed_seconds: number } }
    | { type: "refresh_start"; hook: { resource: UiResourceAddr; id_key: string; id_value: string } }
    | { type: "refresh_complete"; hook: { resource: UiResourceAddr; id_key: string; id_value: string } }
    | { type: "outputs"; outputs: Record<string, { sensitive: boolean; type?: unknown; value?: Value; action?: "create" | "update" | "delete" | "noop" }> }
    | { type: "diagnostic"; diagnostic: Diagnostic }
  );

// ---------------------------------------------------------------- options and results

export interface ProviderConfig {
  /** The local provider's root; `ownerOnly`: what it writes is readable by the engine's user only. */
  local?: { root: string; ownerOnly?: boolean };
  /** Test-only: enables the plantontest_gate resource, whose marker files live in `dir`. */
  testGates?: { dir: string };
}

export interface EngineOptions {
  /** Folder of *.tf files. */
  moduleDir: string;
  /** Values for the module's variable blocks (from the component's spec). */
  variables?: Record<string, Value>;
  /** The current state, or null when the component has none yet. */
  state: StateV4 | null;
  providerConfig?: ProviderConfig;
  /** How many resources may be worked on at once (default 10). */
  parallelism?: number;
  /** Receives every machine-readable UI line. */
  emit?: (line: UiMessage) => void;
  /** Traces the operation's walk when given (trace.ts); nothing is traced without one. */
  tracer?: import("./trace").EngineTracer;
}

export interface PlanRequest {
  destroy?: boolean;
  /** Skip refreshing; the plan then says delete_operations_computed: false. */
  refresh?: boolean;
  /**
   * Delete protection: a plan that is not a destroy keeps its deletes and replaces, marked
   * not_executed, and apply leaves them out. A destroy plan ignores it.
   */
  protectDeletes?: boolean;
}

/** One save of apply's state as a change: applied onto the state of serial `baseSerial`, it gives the saved state. */
export interface StateChange {
  baseSerial: number;
  delta: import("../lib/state-delta").StateDelta;
}

export interface ApplyOptions extends Omit<EngineOptions, "moduleDir" | "variables"> {
  /** Saved after each resource completes, and once more at the end. */
  persistState?: (state: StateV4) => Promise<void>;
  /**
   * Instead of persistState: each save as the change from the one before (the first from `state`, what
   * the backend holds), resource by resource. Called in order; the result's state is what they add up to.
   */
  persistDelta?: (change: StateChange) => void | Promise<void>;
  /** Aborting stops new resources from starting; in-flight ones finish and state is persisted. */
  signal?: AbortSignal;
}

/** Counts of what executes (or executed); changes marked not_executed are counted only in skipped_deletes. */
export interface ChangeSummary {
  add: number;
  change: number;
  import: number;
  remove: number;
  forget: number;
  /** Deletes and replaces left out under delete protection (present when there are any). */
  skipped_deletes?: number;
  /** Addresses of replacements: each one's delete is counted in remove, its create in add (present when there are any). */
  replacements?: string[];
}

export interface ResourceChange {
  address: string;
  previous_address?: string;
  /** The module instance holding the resource (absent in the root module). */
  module_address?: string;
  mode: "managed" | "data";
  type: string;
  name: string;
  index?: number | string;
  provider_name: string;
  action: ChangeAction;
  /** Why a replace happens, as OpenTofu words it. */
  action_reason?:
    | "replace_because_cannot_update"
    | "replace_by_triggers"
    | "delete_because_no_resource_config"
    | "delete_because_count_index"
    | "delete_because_each_key"
    | "delete_because_wrong_repetition"
    | "delete_because_no_module"
    | "read_because_config_unknown"
    | "read_because_dependency_pending";
  change: {
    /** OpenTofu plan JSON actions: ["create"], ["delete","create"], ["create","delete"] (create_before_destroy), ["no-op"], ["forget"]… */
    actions: string[];
    before: Value;
    after: Value;
    after_unknown: Value;
    before_sensitive: Value;
    after_sensitive: Value;
    replace_paths?: string[][];
    importing?: { id: string };
  };
  /** Addresses (resource level) this change must wait for during apply. */
  depends_on: string[];
  /** Shown in the plan but never carried out by apply (delete protection), with the reason and the fix. */
  not_executed?: NotExecuted;
}

export interface OutputChange {
  actions: string[];
  before: Value;
  after: Value;
  after_unknown: boolean;
  sensitive: boolean;
}

export interface SavedPlan {
  format_version: "1.0";
  planton_plan_format: 1;
  engine_version: string;
  timestamp: string;
  operation: "plan" | "destroy";
  /** Lineage and serial of the state the plan was made against (null: there was none). */
  state_lineage: string | null;
  state_serial: number | null;
  /** `sensitive`: the module declares the variable sensitive (a review rendition masks it). */
  variables: Record<string, { value: Value; sensitive?: boolean }>;
  resource_drift: ResourceChange[];
  resource_changes: ResourceChange[];
  output_changes: Record<string, OutputChange>;
  /** The refreshed state the plan starts from. */
  prior_state: StateV4;
  /** The module's files as planned, so apply runs exactly this configuration. */
  configuration: { files: Record<string, string> };
  /** False when refresh was skipped: deletions of things already gone could not be computed. */
  delete_operations_computed: boolean;
  /** SHA-256 of the schemas of the providers the plan uses (providerSchemaHash); absent in plans made before it was kept. */
  provider_schema_hash?: string;
  applyable: boolean;
  summary: ChangeSummary;
}

export interface PlanResult {
  plan: SavedPlan;
  /** Canonical bytes of the plan (sorted keys, UTF-8). */
  bytes: Uint8Array;
  /** SHA-256 hex of bytes. */
  checksum: string;
  state: StateV4;
}

export interface RefreshResult {
  state: StateV4;
  drift: ResourceChange[];
  changed: boolean;
}

export interface ApplyResult {
  status: "applied" | "errored" | "cancelled";
  state: StateV4;
  outputs: Record<string, StateOutput>;
  summary: ChangeSummary;
  diagnostics: Diagnostic[];
  /** Addresses not started because the apply was aborted or something they need failed. */
  not_applied: string[];
}

export interface ValidateResult {
  valid: boolean;
  diagnostics: Diagnostic[];
}
