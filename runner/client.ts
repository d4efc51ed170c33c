// A small typed client for the runner API (lib/runner-protocol.ts). Retries network errors and
// 5xx with backoff; a 4xx is the server's answer and is never retried.
import http from "node:http";
import https from "node:https";
import type { StateJournalBatch, StateJournalCommit, StateJournalCommitResult } from "../lib/state-delta";
import { digestClaimed, digestHeader, sha256Of } from "../lib/artifacts";
import { boundedSignal, sleep } from "./abort";
import {
  RUNNER_API,
  type ClaimResponse,
  type HeartbeatResponse,
  type JobConnectionEnv,
  type OutputsPayload,
  type StepFinishResponse,
  type StepName,
  type StepStartResponse,
  type UploadedEvent,
  type WhoamiResponse,
} from "../lib/runner-protocol";
import type { LockInfo, StateV4 } from "../engine/index";
import type { PulumiCheckpoint } from "../state-backends/rules";
import type { EngineVersions } from "./engines/detect";

export class HttpError extends Error {
  /** The server's own words, when it sent any. */
  readonly said: string | undefined;
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly route: string,
  ) {
    super(`${route} answered ${status}${messageOf(body) ? `: ${messageOf(body)}` : ""}`);
    this.name = "HttpError";
    this.said = messageOf(body);
  }
}

function messageOf(body: unknown): string | undefined {
  if (typeof body === "string") return body.slice(0, 500) || undefined;
  if (body && typeof body === "object") {
    const b = body as { message?: unknown; error?: unknown };
    if (typeof b.message === "string") return b.message;
    if (typeof b.error === "string") return b.error;
    if (b.error && typeof b.error === "object" && typeof (b.error as { message?: unknown }).message === "string") return (b.error as { message: string }).message;
  }
  return undefined;
}

export interface RetryPolicy {
  attempts: number;
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 6, baseMs: 200, maxMs: 5_000 };

interface RequestOptions {
  method?: string;
  body?: unknown;
  raw?: Uint8Array;
  headers?: Record<string, string>;
  /** Status codes that are answers, not errors (returned as-is). */
  accept?: number[];
  timeoutMs?: number;
  retry?: RetryPolicy;
  signal?: AbortSignal;
}

interface RawResponse {
  status: number;
  headers: Pick<Headers, "get">;
  bytes: Uint8Array;
}

/**
 * Connections kept open between requests, per scheme. The runner's calls go through node:http rather than
 * fetch: a small request cost the runner about a third of the CPU (150 against 500 µs per request and answer,
 * measured on this project's machines), and a running job makes dozens — event and state-change uploads,
 * heartbeats, step calls — on the same cores as its engine.
 */
const AGENTS = { "http:": new http.Agent(keptAlive()), "https:": new https.Agent(keptAlive()) };

/**
 * An idle connection is closed a second before the server's Keep-Alive timeout hint (node's agent lowers its
 * `timeout` to that; with no hint, after a minute), so a request never goes out on a socket the server is closing.
 * The timeout only closes idle connections: a request that waits longer (a claim's long poll) is not cut.
 */
function keptAlive(): http.AgentOptions {
  return { keepAlive: true, timeout: 60_000 };
}

/** One HTTP exchange: the answer's status, headers and whole body; rejects on a network error or `signal`. */
function exchange(url: URL, method: string, headers: Record<string, string>, body: Buffer | undefined, signal: AbortSignal): Promise<RawResponse> {
  const send = url.protocol === "https:" ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const req = send(url, { method, headers: body ? { ...headers, "content-length": String(body.byteLength) } : headers, agent: AGENTS[url.protocol as keyof typeof AGENTS], signal }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("end", () => {
        const h = res.headers;
        resolve({
          status: res.statusCode ?? 0,
          headers: { get: (name: string) => { const v = h[name.toLowerCase()]; return v === undefined ? null : Array.isArray(v) ? v.join(", ") : v; } },
          bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks),
        });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** Shared transport: base URL, bearer token, retries. */
export class Transport {
  constructor(
    readonly baseUrl: string,
    private token: string,
    private readonly retry: RetryPolicy = DEFAULT_RETRY,
  ) {}

  setToken(token: string): void {
    this.token = token;
  }

  async request(route: string, opts: RequestOptions = {}): Promise<RawResponse> {
    const url = new URL(RUNNER_API + route, this.baseUrl);
    const policy = opts.retry ?? this.retry;
    let lastError: unknown;
    for (let attempt = 1; attempt <= policy.attempts; attempt++) {
      if (opts.signal?.aborted) throw opts.signal.reason ?? new Error("aborted");
      const { signal, done } = boundedSignal(opts.signal, opts.timeoutMs ?? 30_000);
      try {
        const headers: Record<string, string> = { authorization: `Bearer ${this.token}`, ...opts.headers };
        let body: Buffer | undefined;
        if (opts.raw) {
          body = Buffer.from(opts.raw.buffer, opts.raw.byteOffset, opts.raw.byteLength);
          headers["content-type"] ??= "application/octet-stream";
        } else if (opts.body !== undefined) {
          body = Buffer.from(JSON.stringify(opts.body));
          headers["content-type"] = "application/json";
        }
        const res = await exchange(url, opts.method ?? "GET", headers, body, signal);
        const ok = res.status >= 200 && res.status < 300;
        if (ok || opts.accept?.includes(res.status)) return res;
        const err = new HttpError(res.status, parseBody(res.bytes), `${opts.method ?? "GET"} ${route.split("?")[0]}`);
        if (res.status < 500) throw err;
        lastError = err;
      } catch (e) {
        if (e instanceof HttpError && e.status < 500) throw e;
        if (opts.signal?.aborted) throw e;
        lastError = e;
      } finally {
        done();
      }
      if (attempt < policy.attempts) {
        const backoff = Math.min(policy.maxMs, policy.baseMs * 2 ** (attempt - 1));
        await sleep(backoff / 2 + Math.random() * (backoff / 2), opts.signal);
      }
    }
    throw lastError;
  }

  async json<T>(route: string, opts: RequestOptions = {}): Promise<T> {
    const res = await this.request(route, opts);
    return parseBody(res.bytes) as T;
  }
}

function parseBody(bytes: Uint8Array): unknown {
  if (bytes.length === 0) return undefined;
  const text = new TextDecoder().decode(bytes);
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Calls made with the runner token. */
export class RunnerClient {
  readonly transport: Transport;
  constructor(baseUrl: string, runnerToken: string, retry?: RetryPolicy) {
    this.transport = new Transport(baseUrl, runnerToken, retry);
  }

  /** Which runner the token belongs to; a few quick retries, so an unreachable server is told soon. */
  whoami(): Promise<WhoamiResponse> {
    return this.transport.json("/whoami", { timeoutMs: 10_000, retry: { attempts: 3, baseMs: 300, maxMs: 1_000 } });
  }

  /** Long-polls for a job; null when the server had none within `waitSeconds`. */
  async claim(req: { capacity: number; waitSeconds: number; version?: string; engines?: EngineVersions }, signal?: AbortSignal): Promise<ClaimResponse | null> {
    const res = await this.transport.request("/claim", {
      method: "POST",
      body: req,
      accept: [204],
      timeoutMs: (req.waitSeconds + 15) * 1000,
      signal,
    });
    if (res.status === 204 || res.bytes.length === 0) return null;
    return parseBody(res.bytes) as ClaimResponse;
  }

  /** A client for one claimed job, authenticated with its job credential. */
  job(jobId: string, credential: string, retry?: RetryPolicy): JobClient {
    return new JobClient(this.transport.baseUrl, jobId, credential, retry);
  }
}

/** Calls made with a job credential, all under /jobs/{jobId}. */
export class JobClient {
  readonly transport: Transport;
  constructor(
    baseUrl: string,
    readonly jobId: string,
    credential: string,
    retry?: RetryPolicy,
  ) {
    this.transport = new Transport(baseUrl, credential, retry);
  }

  private get base(): string {
    return `/jobs/${encodeURIComponent(this.jobId)}`;
  }

  renewCredential(token: string): void {
    this.transport.setToken(token);
  }

  heartbeat(attemptId: string): Promise<HeartbeatResponse> {
    return this.transport.json(`${this.base}/heartbeat`, { method: "POST", body: { attemptId }, retry: { attempts: 2, baseMs: 200, maxMs: 1000 } });
  }

  uploadEvents(attemptId: string, events: UploadedEvent[]): Promise<{ acceptedThrough: number }> {
    return this.transport.json(`${this.base}/events`, { method: "POST", body: { attemptId, events } });
  }

  startStep(step: StepName, attemptId: string): Promise<StepStartResponse> {
    return this.transport.json(`${this.base}/steps/${step}/start`, { method: "POST", body: { attemptId } });
  }

  finishStep(
    step: StepName,
    body: { attemptId: string; result: "succeeded" | "failed"; reason?: string; plan?: { artifactId: string; sha256: string; summary: Record<string, unknown> } },
  ): Promise<StepFinishResponse> {
    return this.transport.json(`${this.base}/steps/${step}/finish`, { method: "POST", body });
  }

  /** Uploads bytes with their SHA-256 Digest header; the server checks it. */
  async uploadArtifact(kind: string, name: string, bytes: Uint8Array): Promise<{ artifactId: string; sha256: string }> {
    const digest = sha256Of(bytes);
    const q = new URLSearchParams({ kind, name });
    const res = await this.transport.json<{ artifactId: string; sha256: string }>(`${this.base}/artifacts?${q}`, {
      method: "POST",
      raw: bytes,
      headers: { digest: digestHeader(bytes) },
    });
    if (res.sha256 && res.sha256 !== digest.hex) {
      throw new Error(`Artifact ${name} was stored with sha256 ${res.sha256}, but the runner sent ${digest.hex}; the upload was damaged. Run the job again.`);
    }
    return { artifactId: res.artifactId, sha256: res.sha256 ?? digest.hex };
  }

  /** Downloads an artifact and verifies it against the server's Digest header and, when given, the expected SHA-256. */
  async downloadArtifact(artifactId: string, expectedSha256?: string): Promise<Uint8Array> {
    const res = await this.transport.request(`${this.base}/artifacts/${encodeURIComponent(artifactId)}`);
    const digest = sha256Of(res.bytes);
    const header = res.headers.get("digest");
    const claimed = digestClaimed(header);
    if (claimed && claimed !== digest.base64) {
      throw new Error(`Artifact ${artifactId} does not match its Digest header (sha-256=${claimed}, received sha-256=${digest.base64}); nothing was applied.`);
    }
    if (expectedSha256 && expectedSha256.toLowerCase() !== digest.hex) {
      throw new Error(`Artifact ${artifactId} has sha256 ${digest.hex}, not the reviewed ${expectedSha256}; nothing was applied. Run a new preview.`);
    }
    return res.bytes;
  }

  /** Takes the state lock: `{ok:true}` or `{ok:false, lock, message}` on 409. */
  async lockState(info: LockInfo): Promise<{ ok: true } | { ok: false; lock: LockInfo; message?: string }> {
    const res = await this.transport.request(`${this.base}/state/lock`, { method: "POST", body: info, accept: [409] });
    if (res.status === 409) {
      const body = parseBody(res.bytes) as { lock: LockInfo; message?: string };
      return { ok: false, lock: body.lock, message: body.message };
    }
    return { ok: true };
  }

  async unlockState(id: string): Promise<void> {
    await this.transport.request(`${this.base}/state/lock?${new URLSearchParams({ id })}`, { method: "DELETE" });
  }

  async getState(): Promise<StateV4 | null> {
    const res = await this.transport.request(`${this.base}/state`, { accept: [204] });
    if (res.status === 204 || res.bytes.length === 0) return null;
    return parseBody(res.bytes) as StateV4;
  }

  /** An OpenTofu v4 state, or a Pulumi checkpoint (the Pulumi adapter's). */
  async putState(state: StateV4 | PulumiCheckpoint, lockId: string): Promise<void> {
    await this.transport.request(`${this.base}/state?${new URLSearchParams({ lockId })}`, { method: "PUT", body: state });
  }

  /** A batch of apply's state changes, kept by the console until the step commits them. */
  uploadStateJournal(batch: StateJournalBatch): Promise<{ acceptedThrough: number }> {
    return this.transport.json(`${this.base}/state/journal`, { method: "POST", body: batch });
  }

  /** Compacts the step's changes into one state write; `match: false` means the whole state must be sent. */
  commitStateJournal(body: StateJournalCommit): Promise<StateJournalCommitResult> {
    return this.transport.json(`${this.base}/state/journal/commit`, { method: "POST", body });
  }

  /** The job's connection as environment variables, for the engine process only. */
  connectionEnv(): Promise<JobConnectionEnv> {
    return this.transport.json<JobConnectionEnv>(`${this.base}/connection`);
  }

  async secret(name: string): Promise<string> {
    const res = await this.transport.json<{ value: string }>(`${this.base}/secrets/${encodeURIComponent(name)}`);
    return res.value;
  }

  outputs(attemptId: string, outputs: Record<string, { value: unknown; sensitive: boolean }>): Promise<OutputsPayload> {
    return this.transport.json(`${this.base}/outputs`, { method: "POST", body: { attemptId, outputs } });
  }

  async endAttempt(body: { attemptId: string; exitCode: number; reason?: string }): Promise<void> {
    await this.transport.request(`${this.base}/attempt/end`, { method: "POST", body });
  }
}
