// The typed client of the public REST API (/api/v1), for the CLI and for scripts:
//   const planton = createPlantonClient({ url, token });
//   const review = await planton.jobs.getPlan(jobId);
// Refusals throw PlantonApiError with the server's message as is.
import { digestClaimed, sha256Of } from "../artifacts";
import type {
  ArtifactRef,
  CreatedJob,
  CreateJobRequest,
  CurrentStateMove,
  EventsPage,
  InfraJob,
  InfraJobPage,
  JobIacInput,
  MigrateBackendResult,
  PlanReview,
  PreflightResult,
  ProgressEvent,
  RerunRequest,
  ResumeRequest,
  ResumeResult,
  StateMove,
  StateMoveDryRun,
  WhoAmI,
} from "./types";
import type {
  ComponentState,
  CreateStateBackendRequest,
  ForceUnlockResult,
  PlantonManagedUsage,
  StateBackend,
  StateBackendAccessCheck,
  StateBackendDeleted,
  StateBackendList,
  StateBackendSaved,
  TestAccessRequest,
  UpdateStateBackendRequest,
} from "./types";
import type {
  AddAuthorizationRequest,
  ConnectionAuthorizationChange,
  ConnectionAuthorizationList,
  DefaultRunner,
  RegisterRunnerRequest,
  RemoveAuthorizationRequest,
  RunnerDetail,
  RunnerList,
  RunnerRevoked,
  RunnerToken,
} from "./types";
import type { AuditCheckpointList, AuditFilter, AuditPage, AuditVerification } from "./types";
import type { ModuleList, ModulePolicy, ModuleVersion, ModuleVersionList, RegisterModuleRequest } from "./types";
import type {
  ComponentChange,
  ComponentVersionList,
  CreateComponentRequest,
  DeleteComponentRequest,
  ForgetComponentRequest,
  ForgetResult,
  InfraComponent,
  InfraComponentList,
  ListComponentsFilter,
  UpdateComponentRequest,
} from "./types";
import type { AuditExportFormat } from "../audit-export";
import { readEventStream } from "./sse";
import { decodeEventMessage, JOB_STREAM_END_EVENT, jobEventStreamPath } from "../job-event-stream";

export * from "./types";

export class PlantonApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
  ) {
    super(message);
    this.name = "PlantonApiError";
  }
}

export interface PlantonClientOptions {
  url: string;
  token: string;
  fetch?: typeof fetch;
}

export interface StreamOptions {
  /** The last seq already seen: the stream starts after it. */
  after?: number;
  signal?: AbortSignal;
  /** How many reconnects in a row may fail before the stream gives up (default 10). */
  maxRetries?: number;
}

export type PlantonClient = ReturnType<typeof createPlantonClient>;

export function createPlantonClient(opts: PlantonClientOptions) {
  const base = opts.url.replace(/\/+$/, "");
  const doFetch = opts.fetch ?? fetch;

  async function send(method: string, path: string, init: { body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<Response> {
    let res: Response;
    try {
      res = await doFetch(`${base}/api/v1${path}`, {
        method,
        headers: {
          authorization: `Bearer ${opts.token}`,
          accept: "application/json",
          ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
          ...init.headers,
        },
        body: init.body !== undefined ? JSON.stringify(init.body) : undefined,
        signal: init.signal,
      });
    } catch (err) {
      if ((err as Error).name === "AbortError") throw err;
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new PlantonApiError(
        `Could not reach the Planton server at ${base} (${cause?.code ?? cause?.message ?? (err as Error).message}). Nothing was done. Check the URL (planton auth status) and that the server is running.`,
        0,
        "UNREACHABLE",
      );
    }
    if (!res.ok) throw await refusalOf(res);
    return res;
  }

  async function refusalOf(res: Response): Promise<PlantonApiError> {
    const text = await res.text().catch(() => "");
    try {
      const body = JSON.parse(text) as { error?: { code?: string; message?: string } };
      if (body.error?.message) return new PlantonApiError(body.error.message, res.status, body.error.code ?? String(res.status));
    } catch {
      // not JSON: not an answer from the Planton API
    }
    return new PlantonApiError(
      `The server at ${base} answered ${res.status} ${res.statusText} without a Planton error. Is ${base} a Planton console?`,
      res.status,
      "UNEXPECTED",
    );
  }

  const get = async <T>(path: string) => (await (await send("GET", path)).json()) as T;
  const post = async <T>(path: string, body: unknown = {}) => (await (await send("POST", path, { body })).json()) as T;
  const put = async <T>(path: string, body: unknown = {}) => (await (await send("PUT", path, { body })).json()) as T;
  const patch = async <T>(path: string, body: unknown = {}) => (await (await send("PATCH", path, { body })).json()) as T;
  const del = async <T>(path: string, params: Record<string, string | number | undefined> = {}) => (await (await send("DELETE", `${path}${query(params)}`)).json()) as T;
  const q = (s: string) => encodeURIComponent(s);
  /** `?a=1&b=x` of the values that are set. */
  const query = (params: Record<string, string | number | undefined>) => {
    const set = Object.entries(params).filter((e): e is [string, string | number] => e[1] !== undefined && e[1] !== "");
    return set.length ? `?${new URLSearchParams(set.map(([k, v]) => [k, String(v)]))}` : "";
  };

  /** Every event of a job after `after`, then live ones until the job completes; reconnects with Last-Event-ID. */
  async function* streamEvents(jobId: string, so: StreamOptions = {}): AsyncGenerator<ProgressEvent> {
    let last = so.after ?? 0;
    let failures = 0;
    for (;;) {
      let ended = false;
      try {
        const res = await send("GET", jobEventStreamPath(jobId), { headers: { accept: "text/event-stream", "last-event-id": String(last) }, signal: so.signal });
        for await (const msg of readEventStream(res.body!)) {
          if (msg.event === JOB_STREAM_END_EVENT) {
            ended = true;
            break;
          }
          if (msg.event !== "message" || !msg.data) continue;
          const event = decodeEventMessage(msg.data);
          if (event.seq <= last) continue;
          last = event.seq;
          failures = 0;
          yield event;
        }
      } catch (err) {
        if (so.signal?.aborted || err instanceof PlantonApiError) throw err;
        if (++failures > (so.maxRetries ?? 10)) throw err;
      }
      if (ended) return;
      if (so.signal?.aborted) return;
      await new Promise((r) => setTimeout(r, Math.min(5_000, 250 * 2 ** failures)));
    }
  }

  type Page = { cursor?: string; limit?: number };
  const componentJobs = (componentId: string, page: Page = {}) => get<InfraJobPage>(`/components/${q(componentId)}/jobs${query(page)}`);

  return {
    url: base,
    whoami: () => get<WhoAmI>("/whoami"),
    preflight: (input: { kind: string; environment?: string }) => get<PreflightResult>(`/preflight${query(input)}`),
    components: {
      /** The organization's components, newest first; show "gone" for the deleted and forgotten, "all" for both. */
      list: (filters: ListComponentsFilter = {}) => get<InfraComponentList>(`/components${query(filters)}`),
      get: (componentId: string) => get<InfraComponent>(`/components/${q(componentId)}`),
      /** Saves the component and queues its first update job (deploy: false saves a draft). */
      create: (input: CreateComponentRequest) => post<ComponentChange>("/components", input),
      /** Records the next spec version and queues an update job; with baseVersion, a change made since is refused (409), not overwritten. */
      update: (componentId: string, input: UpdateComponentRequest) => patch<ComponentChange>(`/components/${q(componentId)}`, input),
      /** Runs a destroy job; when it succeeds the component is removed (its history stays). Also the retry of a failed delete. */
      delete: (componentId: string, input: DeleteComponentRequest = {}) => del<ComponentChange>(`/components/${q(componentId)}`, { versionMessage: input.versionMessage }),
      /** Admins: lets go of the component without destroying its resources; without confirmName it is refused with what would keep running. */
      forget: (componentId: string, input: ForgetComponentRequest = {}) => post<ForgetResult>(`/components/${q(componentId)}/forget`, input),
      /** Its spec versions, newest first, each with the field-level diff from the one before. */
      versions: (componentId: string) => get<ComponentVersionList>(`/components/${q(componentId)}/versions`),
      listJobs: componentJobs,
      /** What its state holds: the resources a destroy deletes (never a value). */
      state: (componentId: string) => get<ComponentState>(`/components/${q(componentId)}/state`),
      /** Removes the lock on the component's state whatever its holder (admins; recorded). */
      forceUnlockState: (componentId: string) => post<ForceUnlockResult>(`/components/${q(componentId)}/state/force-unlock`),
    },
    stateBackends: {
      list: () => get<StateBackendList>("/state-backends"),
      get: (name: string) => get<StateBackend>(`/state-backends/${q(name)}`),
      /** Creates a backend after its access test passes; a failing test saves nothing and is refused. */
      create: (input: CreateStateBackendRequest) => post<StateBackendSaved>("/state-backends", input),
      update: (name: string, input: UpdateStateBackendRequest) => patch<StateBackendSaved>(`/state-backends/${q(name)}`, input),
      delete: (name: string) => del<StateBackendDeleted>(`/state-backends/${q(name)}`),
      /** The access test on a saved backend ({ name }) or an unsaved one ({ kind, config, connection }). */
      testAccess: (input: TestAccessRequest) => post<StateBackendAccessCheck>("/state-backends/test-access", input),
      setDefault: (provisioner: string, backend: string) => put<StateBackendList>(`/state-backends/defaults/${q(provisioner)}`, { backend }),
      unsetDefault: (provisioner: string) => del<StateBackendList>(`/state-backends/defaults/${q(provisioner)}`),
      /** Every state on Planton-managed storage, with totals; with `limit`, the first that many (0: the totals alone). */
      plantonManaged: (opts: { limit?: number } = {}) => get<PlantonManagedUsage>(`/state-backends/planton-managed${query(opts)}`),
    },
    modules: {
      /** The organization's modules and the platform's (optionally for one kind), the policy, and whether the caller may register. */
      list: (filter: { kind?: string } = {}) => get<ModuleList>(`/modules${query(filter)}`),
      /** A module's latest version: source, checksum, inputs, README, components using it. */
      get: (name: string) => get<ModuleVersion>(`/modules/${q(name)}`),
      /** Every version of a module, newest first. */
      versions: (name: string) => get<ModuleVersionList>(`/modules/${q(name)}/versions`),
      /** One version of a module. */
      version: (name: string, version: string) => get<ModuleVersion>(`/modules/${q(name)}/versions/${q(version)}`),
      /** Registers a version from git or an archive (base64); the server fetches it once and keeps it immutably. */
      register: (input: RegisterModuleRequest) => post<ModuleVersion>("/modules", input),
      /** Whether engineers may register module versions (admins only). */
      setPolicy: (input: ModulePolicy) => put<ModulePolicy>("/modules/policy", input),
    },
    runners: {
      /** The organization's runners and the Planton-hosted ones, with the default's name (null: Planton-hosted). */
      list: () => get<RunnerList>("/runners"),
      /** One runner (by name or id) with its running and recent jobs. */
      get: (runner: string) => get<RunnerDetail>(`/runners/${q(runner)}`),
      /** Registers a self-hosted runner; the answer holds its token, which is never shown again. */
      register: (input: RegisterRunnerRequest) => post<RunnerToken>("/runners", input),
      /** A new token, shown once; the old one and the job credentials issued under it stop working. */
      rotateToken: (runner: string) => post<RunnerToken>(`/runners/${q(runner)}/rotate-token`),
      revoke: (runner: string) => post<RunnerRevoked>(`/runners/${q(runner)}/revoke`),
      getDefault: () => get<DefaultRunner>("/runners/default"),
      /** Refused while any of the organization's state is on Planton-managed storage. */
      setDefault: (runner: string) => put<DefaultRunner>("/runners/default", { runner }),
      unsetDefault: () => del<DefaultRunner>("/runners/default"),
    },
    connections: {
      /** Who may use each connection, or only the one named. */
      listAuthorizations: (connection?: string) => get<ConnectionAuthorizationList>(`/connections/authorizations${query({ connection })}`),
      /** Lets the organization (scope organization) or the environments named use the connection; `provider` must be the connection's. */
      addAuthorization: (connection: string, input: AddAuthorizationRequest) => post<ConnectionAuthorizationChange>(`/connections/${q(connection)}/authorizations`, input),
      /** Removes exactly the authorizations named; one that does not exist is refused and nothing is removed. */
      removeAuthorization: (connection: string, input: RemoveAuthorizationRequest) =>
        del<ConnectionAuthorizationChange>(`/connections/${q(connection)}/authorizations`, { scope: input.scope, provider: input.provider, environments: input.environments?.join(",") }),
    },
    stateMoves: {
      /** What moving every state off Planton-managed storage would do; `to` is the backend name per provisioner ("*": the one in use). */
      /** What the move would do; with `limit`, the first that many items (the totals cover every one). */
      dryRun: (to: Record<string, string>, opts: { limit?: number } = {}) => post<StateMoveDryRun>("/state-moves/dry-run", { to, ...opts }),
      start: (to: Record<string, string>) => post<StateMove>("/state-moves", { to }),
      /** The running move, else the latest, and how many states are left on Planton-managed storage. */
      current: () => get<CurrentStateMove>("/state-moves/current"),
      /** The move with every item; with `limit`, its counts and at most that many items, failed first (0: the counts alone). */
      get: (moveId: string, opts: { limit?: number } = {}) => get<StateMove>(`/state-moves/${q(moveId)}${query(opts)}`),
      retry: (moveId: string) => post<StateMove>(`/state-moves/${q(moveId)}/retry`),
      rollback: (moveId: string, itemId: string) => post<StateMove>(`/state-moves/${q(moveId)}/items/${q(itemId)}/rollback`),
      /** One component's state to another backend (or only the dry run). */
      migrateBackend: (componentId: string, input: { to: string; dryRun?: boolean }) => post<MigrateBackendResult>(`/components/${q(componentId)}/state/migrate-backend`, input),
    },
    audit: {
      /** A page of the organization's audit events, newest first; pass the answer's nextCursor for the next. */
      list: (filters: AuditFilter & Page = {}) => get<AuditPage>(`/audit${query(filters)}`),
      /** Checks the organization's chain: ok, or the first broken link; and the head to keep outside Planton. */
      verify: () => get<AuditVerification>("/audit/verify"),
      /** The archive checkpoints of the organization's chain (the retention archive's seals), oldest first. */
      checkpoints: () => get<AuditCheckpointList>("/audit/checkpoints"),
      /** The filtered record as CSV or one JSON array, oldest first: the response's body, streamed. */
      export: async (filters: AuditFilter = {}, format: AuditExportFormat = "csv"): Promise<ReadableStream<Uint8Array>> =>
        (await send("GET", `/audit/export${query({ ...filters, format })}`, { headers: { accept: format === "csv" ? "text/csv" : "application/json" } })).body!,
    },
    jobs: {
      /** A component's jobs, newest first (as components.listJobs). */
      list: componentJobs,
      /** The organization's jobs, newest first, filtered. */
      search: (filters: { componentId?: string; status?: string; result?: string; operation?: string; environment?: string; createdBy?: string } & Page = {}) =>
        get<InfraJobPage>(`/jobs${query(filters)}`),
      create: (componentId: string, input: CreateJobRequest) => post<CreatedJob>(`/components/${q(componentId)}/jobs`, input),
      get: (jobId: string) => get<InfraJob>(`/jobs/${q(jobId)}`),
      cancel: (jobId: string) => post<CreatedJob>(`/jobs/${q(jobId)}/cancel`),
      resume: (jobId: string, input: ResumeRequest = {}) => post<ResumeResult>(`/jobs/${q(jobId)}/resume`, input),
      rerun: (jobId: string, input: RerunRequest = {}) => post<CreatedJob>(`/jobs/${q(jobId)}/rerun`, input),
      getIacInput: (jobId: string) => get<JobIacInput>(`/jobs/${q(jobId)}/iac-input`),
      getPlan: (jobId: string) => get<PlanReview>(`/jobs/${q(jobId)}/plan`),
      events: (jobId: string, after = 0, limit?: number) => get<EventsPage>(`/jobs/${q(jobId)}/events${query({ after, limit })}`),
      streamEvents,
      listArtifacts: async (jobId: string) => (await get<{ artifacts: ArtifactRef[] }>(`/jobs/${q(jobId)}/artifacts`)).artifacts,
      /** The artifact's bytes, after checking them against the response's `Digest: sha-256=…`; a mismatch or a missing Digest throws. */
      getArtifact: async (jobId: string, artifactId: string): Promise<Uint8Array> => {
        const res = await send("GET", `/jobs/${q(jobId)}/artifacts/${q(artifactId)}`, { headers: { accept: "application/octet-stream" } });
        const bytes = new Uint8Array(await res.arrayBuffer());
        verifyDigest(res.headers.get("digest"), bytes, `artifact ${artifactId} of job ${jobId}`);
        return bytes;
      },
    },
  };
}

/** Throws unless `header` is `sha-256=<base64>` of exactly these bytes. */
export function verifyDigest(header: string | null, bytes: Uint8Array, what: string): void {
  const claimed = digestClaimed(header);
  if (!claimed) throw new PlantonApiError(`The server sent ${what} without a SHA-256 Digest header, so it cannot be verified; the bytes were not used.`, 0, "DIGEST_MISSING");
  const actual = sha256Of(bytes).base64;
  if (actual !== claimed) {
    throw new PlantonApiError(`The bytes of ${what} have sha-256=${actual}, not the sha-256=${claimed} the server's Digest names: they were damaged on the way and were not used. Download them again.`, 0, "DIGEST_MISMATCH");
  }
}
