// What every end-to-end job suite needs: the built console on a real Postgres, real runner processes
// with the builtin engine, a seeded organization whose local connection writes under a temp folder,
// and an engineer's typed client. One suite, one stack; `close()` takes it all down.
import { spawn, type ChildProcess } from "node:child_process";
import { vi } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { catalogKinds, flowControlPolicies, iacModules } from "../../db/schema";
import { createPlantonClient, type PlantonClient } from "../../lib/client";
import { newId } from "../../lib/ids";
import type { Role } from "../../lib/roles";
import type { ProgressEvent } from "../../lib/runner-protocol";
import { draftComponent } from "../components";
import { ensureHostedRunner } from "../../server/services/runners/register-runner";
import { createApiToken } from "../../server/services/settings/api-tokens";
import type { PolicyToggles } from "../../lib/flow-control";
import { apiClient, type ApiClient } from "../api-client";
import { startConsoleServer, type ConsoleServer } from "../console-server";
import { createTestDatabase, type TestDatabase } from "../database";
import { createTestGates, type TestGates } from "../gates";
import { seedTestOrg, type TestOrg } from "../fixtures";
import { MODULES, writeModule } from "./modules";

const root = path.resolve(import.meta.dirname, "../..");

export type Job = Awaited<ReturnType<ApiClient["jobs"]["get"]["query"]>>;
export type RunnerProcess = ChildProcess & { log: () => string };

export interface JobStack {
  t: TestDatabase;
  org: TestOrg;
  server: ConsoleServer;
  /** The engineer's tRPC client. */
  api: ApiClient;
  /** The engineer's typed REST client (lib/client), as the CLI and scripts use it. */
  rest: PlantonClient;
  /** Test gates the runners honour: a `plantontest_gate` holds an apply until the test opens it. */
  gates: TestGates;
  /** A new API token for a member of `role`. */
  tokenFor: (role: Role) => Promise<string>;
  /** A client for another role (API tokens are made per call). */
  as: (role: Role) => Promise<ApiClient>;
  /** The local connection's root: where jobs write their files. */
  infraRoot: string;
  file: (...p: string[]) => string;
  ids: Record<string, string>;
  /** A runner process; with `token`, the organization's own runner of that token, else a Planton-hosted one named `name`. It reaches the console at `serverUrl` (the stack's, unless another replica's). */
  startRunner: (name: string, capacity?: number, token?: string, serverUrl?: string) => Promise<RunnerProcess>;
  runners: RunnerProcess[];
  component: (name: string, environment: string, kind: string, spec: Record<string, unknown>) => Promise<string>;
  /** A catalog kind served by one of the test modules (run by the builtin engine unless `provisioner` says otherwise). */
  registerKind: (kind: string, moduleName: keyof typeof MODULES, fields?: object[], provisioner?: "builtin" | "tofu" | "pulumi") => Promise<void>;
  /** A flow-control policy on one component (the most specific selector: it wins whole). */
  componentPolicy: (componentName: string, toggles: Partial<PolicyToggles>) => Promise<void>;
  run: (component: string, operation: string, extra?: Record<string, unknown>) => Promise<{ id: string; status: string }>;
  waitFor: (id: string, done: (j: Job) => boolean) => Promise<Job>;
  finished: (id: string) => Promise<Job>;
  events: (jobId: string) => Promise<ProgressEvent[]>;
  close: () => Promise<void>;
}

export const stepsOf = (j: Job) => j.steps.map((s) => `${s.step}:${s.status}/${s.result}`);

/** `env` goes to the console, `runnerEnv` to the runner processes the stack starts. */
export async function startJobStack(opts: { env?: Record<string, string>; runnerEnv?: Record<string, string> } = {}): Promise<JobStack> {
  const t = await createTestDatabase();
  const infraRoot = fs.mkdtempSync(path.join(os.tmpdir(), "planton-infra-"));
  const org = await seedTestOrg(t.db, { localRoot: infraRoot });
  const server = await startConsoleServer({ databaseUrl: t.url!, env: { PLANTON_LEASE_SECONDS: "4", ...opts.env } });
  const tokenFor = async (role: Role) => (await createApiToken(t.db, org.actor(role), { name: `integration-${role}-${newId("apiToken")}` })).token;
  const as = async (role: Role) => apiClient(server.url, await tokenFor(role));
  const engineerToken = await tokenFor("engineer");
  const api = apiClient(server.url, engineerToken);
  const rest = createPlantonClient({ url: server.url, token: engineerToken });
  const ids: Record<string, string> = {};
  const runners: RunnerProcess[] = [];
  const gates = createTestGates();

  const stack: JobStack = {
    t,
    org,
    server,
    api,
    rest,
    tokenFor,
    as,
    gates,
    infraRoot,
    ids,
    runners,
    file: (...p) => path.join(infraRoot, ...p),
    async startRunner(name, capacity = 2, own?: string, serverUrl = server.url) {
      const token = own ?? (await ensureHostedRunner(t.db, name, capacity)).token;
      // runner/main.ts, started from its bundle (scripts/runner.mjs): a quarter of tsx's start-up.
      const child = spawn(process.execPath, ["scripts/runner.mjs", "--url", serverUrl, "--capacity", String(capacity), "--work-dir", path.join(infraRoot, "work", name)], {
        cwd: root,
        env: { ...process.env, ...gates.env, PLANTON_RUNNER_TOKEN: token, PLANTON_RUNNER_NAME: name, PLANTON_RUNNER_HEARTBEAT_MS: "1000", ...opts.runnerEnv },
        stdio: ["ignore", "pipe", "pipe"],
      }) as RunnerProcess;
      let log = "";
      child.stdout!.on("data", (d) => (log += d));
      child.stderr!.on("data", (d) => (log += d));
      child.log = () => log;
      runners.push(child);
      return child;
    },
    async component(name, environment, kind, spec) {
      ids[name] = (await draftComponent(t.db, org.actor(), { environment, kind, name, spec, connection: "local-sandbox" })).id;
      return ids[name];
    },
    async registerKind(kind, moduleName, fields = [], provisioner = "builtin") {
      const source = writeModule(infraRoot, moduleName);
      await t.db.insert(catalogKinds).values({ id: newId("catalogKind"), orgId: org.orgId, scopeKey: org.orgId, kind, title: kind, provider: "local", specSchema: { fields } });
      await t.db.insert(iacModules).values({ id: newId("iacModule"), orgId: org.orgId, scopeKey: org.orgId, kind, name: provisioner === "builtin" ? moduleName : `${provisioner}-${moduleName}`, provisioner, version: "0.1.0", source });
    },
    async componentPolicy(componentName, toggles) {
      await t.db.insert(flowControlPolicies).values({ id: newId("flowControlPolicy"), selector: "component", orgId: org.orgId, selectorId: ids[componentName], ...toggles });
    },
    run: (component, operation, extra = {}) => api.jobs.create.mutate({ org: org.slug, componentId: ids[component], operation: operation as "preview", ...extra }),
    waitFor: (id, done) =>
      vi.waitFor(
        async () => {
          const job = await api.jobs.get.query({ org: org.slug, id });
          if (!done(job)) throw new Error(`job ${id} is ${job.status}/${job.result}, still waiting`);
          return job;
        },
        // Within the suites' 120-second test timeout, so a job that never gets there fails with its last state.
        { timeout: 110_000, interval: 150 },
      ),
    finished: (id) => stack.waitFor(id, (j) => j.status === "completed"),
    events: async (jobId) => (await api.jobs.events.query({ org: org.slug, id: jobId, after: 0, limit: 5000 })).events,
    async close() {
      for (const r of runners) r.kill("SIGKILL");
      await server.stop();
      await t.close();
      fs.rmSync(infraRoot, { recursive: true, force: true });
      fs.rmSync(gates.dir, { recursive: true, force: true });
    },
  };
  return stack;
}
