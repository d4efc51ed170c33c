// The runner's tests against the real server: the built console on a real Postgres (the integration
// harness's stack), runners registered through the product, and what the server recorded, read back.
import { asc, eq } from "drizzle-orm";
import { artifacts, infraJobs, jobOperations, runnerAttempts, runners, stateObjects } from "../../db/schema";
import type { LockInfo, StateV4 } from "../../engine/index";
import type { ClaimResponse } from "../../lib/runner-protocol";
import { artifactBytes } from "../../server/services/runners/artifacts";
import { registerRunner } from "../../server/services/runners/register-runner";
import { startJobStack, type JobStack } from "../../test/integration/harness";
import { RunnerClient, type RetryPolicy } from "../client";

// This process decrypts what the console stored (plan artifacts); both must hold the same key.
process.env.PLANTON_SECRET_KEY ??= "3c".repeat(32);

export interface RunnerConsole extends JobStack {
  /** Registers a runner of the organization; it counts as Planton-hosted, so it may use Planton-managed state. */
  newRunner: (name: string, retry?: RetryPolicy) => Promise<{ id: string; token: string; client: RunnerClient }>;
  /** A StaticSite component (or `kind`) and a job on it, created through the console's API. */
  queue: (component: string, operation: string, spec?: Record<string, unknown>, kind?: string) => Promise<string>;
  /** Claims the next job with `client`, waiting for it to be claimable. */
  claimNext: (client: RunnerClient) => Promise<ClaimResponse>;
  steps: (jobId: string) => Promise<(typeof jobOperations.$inferSelect)[]>;
  attempts: (jobId: string) => Promise<(typeof runnerAttempts.$inferSelect)[]>;
  job: (jobId: string) => Promise<typeof infraJobs.$inferSelect>;
  /** The component's Planton-managed state and lock, as the server holds them. */
  state: (component: string) => Promise<{ state: StateV4 | null; lock: LockInfo | null }>;
  /** The job's uploaded artifacts in clear, in upload order. */
  artifacts: (jobId: string) => Promise<{ id: string; kind: string; text: string }[]>;
}

export async function startRunnerConsole(opts: { env?: Record<string, string> } = {}): Promise<RunnerConsole> {
  const stack = await startJobStack(opts);
  const { t, org } = stack;
  let n = 0;
  return Object.assign(stack, {
    async newRunner(name: string, retry?: RetryPolicy) {
      const { runner, token } = await registerRunner(t.db, org.actor(), { name });
      // The builtin jobs here keep state in the Planton-managed backend, which only Planton-hosted runners use.
      await t.db.update(runners).set({ kind: "hosted" }).where(eq(runners.id, runner.id));
      return { id: runner.id, token, client: new RunnerClient(stack.server.url, token, retry) };
    },
    async queue(component: string, operation: string, spec?: Record<string, unknown>, kind = "StaticSite") {
      if (!stack.ids[component]) await stack.component(component, "dev", kind, spec ?? { site_name: `${component}-${++n}` });
      return (await stack.run(component, operation)).id;
    },
    async claimNext(client: RunnerClient) {
      for (;;) {
        const claim = await client.claim({ capacity: 1, waitSeconds: 5 });
        if (claim) return claim;
      }
    },
    steps: (jobId: string) => t.db.select().from(jobOperations).where(eq(jobOperations.jobId, jobId)).orderBy(asc(jobOperations.ordinal)),
    attempts: (jobId: string) => t.db.select().from(runnerAttempts).where(eq(runnerAttempts.jobId, jobId)).orderBy(asc(runnerAttempts.startedAt)),
    job: async (jobId: string) => (await t.db.select().from(infraJobs).where(eq(infraJobs.id, jobId)))[0]!,
    async state(component: string) {
      const [row] = await t.db.select().from(stateObjects).where(eq(stateObjects.componentId, stack.ids[component]!));
      return { state: (row?.state as StateV4 | null) ?? null, lock: (row?.lockInfo as LockInfo | null) ?? null };
    },
    async artifacts(jobId: string) {
      const rows = await t.db.select().from(artifacts).where(eq(artifacts.jobId, jobId)).orderBy(asc(artifacts.createdAt));
      return rows.map((r) => ({ id: r.id, kind: r.kind, text: artifactBytes(r).toString("utf8") }));
    },
  });
}
