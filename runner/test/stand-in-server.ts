// A STAND-IN for the server's runner API routes, in memory, for the runner's unit tests only.
// The real routes (app/api/runner/v1) are being written at the same time; end-to-end tests
// against the real server replace this once both halves land.
import { createHash, randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { RUNNER_API, type ClaimResponse, type IacInput, type UploadedEvent } from "../../lib/runner-protocol";
import type { LockInfo, StateV4 } from "../../engine/index";
import { bundleChecksum } from "../bundle";

export interface StandInCall {
  method: string;
  route: string;
  body: unknown;
}

export class StandInServer {
  url = "";
  readonly calls: StandInCall[] = [];
  readonly queue: ClaimResponse[] = [];
  /** Events by seq as accepted (duplicates by seq are dropped, as the real server must). */
  readonly events = new Map<number, UploadedEvent>();
  readonly eventPosts: UploadedEvent[][] = [];
  readonly artifacts = new Map<string, Uint8Array>();
  readonly stepStarts: string[] = [];
  readonly stepFinishes: { step: string; body: Record<string, unknown> }[] = [];
  readonly attemptEnds: Record<string, unknown>[] = [];
  readonly outputsPosts: Record<string, unknown>[] = [];
  readonly secrets = new Map<string, string>();
  /** State and lock per component; `state`/`lock` are those of the default component cmp_site. */
  readonly components = new Map<string, { state: StateV4 | null; lock: LockInfo | null }>();
  private readonly jobComponent = new Map<string, string>();
  private slot(componentId = "cmp_site") {
    let s = this.components.get(componentId);
    if (!s) this.components.set(componentId, (s = { state: null, lock: null }));
    return s;
  }
  get state(): StateV4 | null {
    return this.slot().state;
  }
  set state(v: StateV4 | null) {
    this.slot().state = v;
  }
  get lock(): LockInfo | null {
    return this.slot().lock;
  }
  set lock(v: LockInfo | null) {
    this.slot().lock = v;
  }
  heartbeatSignal: "none" | "cancel" = "none";
  /** When set, heartbeats are refused with this status and message (a credential the server no longer takes). */
  heartbeatRefusal?: { status: number; message: string };
  heartbeatsRefused = 0;
  /** Hooks a test sets to shape the answers. */
  onStepStart?: (step: string) => Promise<{ proceed: boolean } | void> | { proceed: boolean } | void;
  onStepFinish?: (step: string) => Promise<{ next: "continue" | "stop" } | void> | { next: "continue" | "stop" } | void;
  /** Return a status to fail this events POST (after storing it, when `store` is true). */
  onEvents?: (batch: UploadedEvent[], n: number) => { status: number; store: boolean } | void;
  renewCredential?: { token: string; expiresAt: string };
  readonly tokensSeen = new Set<string>();
  /** Authorization headers the claim route answers with 401. */
  readonly refusedTokens = new Set<string>(["Bearer rnr_bad"]);
  private server = http.createServer((req, res) => void this.handle(req, res));

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Queues a job for claim and returns its claim. */
  enqueue(input: Partial<IacInput> & Pick<IacInput, "steps" | "operation">, files: Record<string, string>): ClaimResponse {
    const jobId = input.jobId ?? `job_${randomUUID().slice(0, 8)}`;
    const claim: ClaimResponse = {
      job: { id: jobId, operation: input.operation },
      attemptId: `att_${randomUUID().slice(0, 8)}`,
      credential: { token: `jcr_${randomUUID()}`, expiresAt: new Date(Date.now() + 3600_000).toISOString() },
      input: {
        jobId,
        orgId: "org_test",
        component: { id: "cmp_site", name: "docs-site", kind: "StaticSite", environment: "dev" },
        module: { name: "static-site", version: "1.0.0", provisioner: "builtin", source: "platform", files, sha256: bundleChecksum(files) },
        variables: {},
        connection: null,
        backend: { id: "sbk_managed", name: "planton-managed", kind: "planton_managed", config: {} },
        policy: { manualStart: false, skipRefresh: false, previewBeforeApply: true, pauseBeforeApply: false, protectDeletes: false },
        parallelism: 10,
        ...input,
      },
    };
    this.jobComponent.set(jobId, claim.input.component.id);
    this.queue.push(claim);
    return claim;
  }

  eventsInOrder(): UploadedEvent[] {
    return [...this.events.values()].sort((a, b) => a.seq - b.seq);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const url = new URL(req.url!, this.url);
    const route = url.pathname.slice(RUNNER_API.length);
    const isJson = (req.headers["content-type"] ?? "").includes("json");
    const body = isJson && raw.length ? JSON.parse(raw.toString("utf8")) : undefined;
    this.calls.push({ method: req.method!, route, body });
    this.tokensSeen.add(String(req.headers.authorization ?? ""));
    const json = (status: number, value?: unknown) => {
      res.writeHead(status, value === undefined ? {} : { "content-type": "application/json" });
      res.end(value === undefined ? undefined : JSON.stringify(value));
    };

    if (route === "/whoami" && req.method === "GET") {
      if (this.refusedTokens.has(String(req.headers.authorization))) return json(401, { error: { message: "Nothing was done: this runner token is not known." } });
      return json(200, { runner: { id: "rnr_standin", name: "stand-in", kind: "self_hosted", orgId: "org_standin" } });
    }
    if (route === "/claim" && req.method === "POST") {
      if (this.refusedTokens.has(String(req.headers.authorization))) return json(401, { message: "Nothing was done: this runner token is not known." });
      const claim = this.queue.shift();
      if (claim) return json(200, claim);
      await new Promise((r) => setTimeout(r, 50));
      return json(204);
    }
    const m = /^\/jobs\/([^/]+)\/(.+)$/.exec(route);
    if (!m) return json(404, { message: "no such route" });
    const rest = m[2]!;
    const comp = this.slot(this.jobComponent.get(m[1]!));

    if (rest === "heartbeat" && this.heartbeatRefusal) {
      this.heartbeatsRefused++;
      return json(this.heartbeatRefusal.status, { error: { code: "CONFLICT", message: this.heartbeatRefusal.message } });
    }
    if (rest === "heartbeat") {
      return json(200, { signal: this.heartbeatSignal, leaseExpiresAt: new Date(Date.now() + 30_000).toISOString(), ...(this.renewCredential ? { credential: this.renewCredential } : {}) });
    }
    if (rest === "events") {
      const batch = (body as { events: UploadedEvent[] }).events;
      this.eventPosts.push(batch);
      const fail = this.onEvents?.(batch, this.eventPosts.length);
      if (!fail || fail.store) for (const e of batch) if (!this.events.has(e.seq)) this.events.set(e.seq, e);
      if (fail) return json(fail.status, { message: "stand-in failure" });
      return json(200, { acceptedThrough: Math.max(...this.events.keys()) });
    }
    const step = /^steps\/([a-z]+)\/(start|finish)$/.exec(rest);
    if (step) {
      if (step[2] === "start") {
        this.stepStarts.push(step[1]!);
        return json(200, (await this.onStepStart?.(step[1]!)) ?? { proceed: true });
      }
      this.stepFinishes.push({ step: step[1]!, body: body as Record<string, unknown> });
      return json(200, (await this.onStepFinish?.(step[1]!)) ?? { next: "continue" });
    }
    if (rest === "artifacts" && req.method === "POST") {
      const digest = createHash("sha256").update(raw).digest();
      if (req.headers.digest !== `sha-256=${digest.toString("base64")}`) return json(400, { message: "Digest header does not match the body" });
      const id = `art_${randomUUID().slice(0, 8)}`;
      this.artifacts.set(id, new Uint8Array(raw));
      return json(200, { artifactId: id, sha256: digest.toString("hex") });
    }
    const art = /^artifacts\/(.+)$/.exec(rest);
    if (art && req.method === "GET") {
      const bytes = this.artifacts.get(art[1]!);
      if (!bytes) return json(404, { message: "no such artifact" });
      res.writeHead(200, { "content-type": "application/octet-stream", digest: `sha-256=${createHash("sha256").update(bytes).digest("base64")}` });
      return void res.end(Buffer.from(bytes));
    }
    if (rest === "state/lock" && req.method === "POST") {
      if (comp.lock) return json(409, { lock: comp.lock, message: "state is locked" });
      comp.lock = body as LockInfo;
      return json(200, { lock: comp.lock });
    }
    if (rest === "state/lock" && req.method === "DELETE") {
      if (comp.lock?.ID !== url.searchParams.get("id")) return json(409, { message: "lock id does not match" });
      comp.lock = null;
      return json(200, {});
    }
    if (rest === "state" && req.method === "GET") return comp.state ? json(200, comp.state) : json(204);
    if (rest === "state" && req.method === "PUT") {
      if (!comp.lock || comp.lock.ID !== url.searchParams.get("lockId")) return json(409, { message: "state is not locked by this lock id" });
      comp.state = body as StateV4;
      return json(200, {});
    }
    const secret = /^secrets\/(.+)$/.exec(rest);
    if (secret) {
      const v = this.secrets.get(decodeURIComponent(secret[1]!));
      return v === undefined ? json(404, { message: "not a secret this job references" }) : json(200, { value: v });
    }
    if (rest === "outputs") {
      this.outputsPosts.push(body as Record<string, unknown>);
      const outputs = (body as { outputs: Record<string, { value: unknown; sensitive: boolean }> }).outputs;
      const answer = Object.fromEntries(Object.entries(outputs).map(([k, o]) => [k, o.sensitive ? { value: `$secret/${m[1]}-${k}`, sensitive: true } : o]));
      return json(200, { outputs: answer });
    }
    if (rest === "attempt/end") {
      this.attemptEnds.push(body as Record<string, unknown>);
      return json(200, {});
    }
    return json(404, { message: `stand-in has no route ${req.method} ${route}` });
  }
}
