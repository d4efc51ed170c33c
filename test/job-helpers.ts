// Shared by the jobs and runners tests: an organization with a component, and a runner driven
// through the same service functions the runner API routes call.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { eq } from "drizzle-orm";
import type { Database } from "@/db/client";
import { flowControlPolicies, runners } from "@/db/schema";
import { newId } from "@/lib/ids";
import type { StepName } from "@/lib/runner-protocol";
import { seedTestOrg, type TestOrg } from "./fixtures";
import { draftComponent } from "./components";
import { PLATFORM_DEFAULT, type PolicyToggles } from "@/lib/flow-control";
import { claimJob } from "../server/services/runners/claim";
import { jobAccess } from "../server/services/runners/job-access";
import { registerRunner } from "../server/services/runners/register-runner";
import { finishStep, startStep } from "../server/services/runners/steps";
import { createStateBackend, setDefaultStateBackend } from "../server/services/state-backends/backends";

process.env.PLANTON_SECRET_KEY ??= "0f".repeat(32);

export async function orgWithComponent(db: Database, opts: { policy?: Partial<PolicyToggles>; components?: number } = {}) {
  const org = await seedTestOrg(db);
  const components = [];
  for (let i = 0; i < (opts.components ?? 1); i++) {
    components.push(await draftComponent(db, org.actor(), { environment: "dev", kind: "StaticSite", name: `site-${i}`, spec: { site_name: `site-${i}` }, connection: "local-sandbox" }));
  }
  if (opts.policy) {
    await db.insert(flowControlPolicies).values({ id: newId("flowControlPolicy"), selector: "organization", orgId: org.orgId, selectorId: org.orgId, ...PLATFORM_DEFAULT, ...opts.policy });
  }
  return { org, component: components[0], components };
}

/** A runner that serves only this organization; `hosted` makes it count as Planton-hosted for state. */
export async function testRunner(db: Database, org: TestOrg, name = "r1", hosted = true) {
  const { runner } = await registerRunner(db, org.actor(), { name });
  if (hosted) await db.update(runners).set({ kind: "hosted" }).where(eq(runners.id, runner.id));
  const [row] = await db.select().from(runners).where(eq(runners.id, runner.id));
  return row;
}

/**
 * The organization's states of `provisioner` in a local directory of its own (its default backend), so a
 * job can run on a runner of the organization's own: Planton-managed state is for Planton-hosted runners only.
 */
export async function ownStateBackend(db: Database, org: TestOrg, provisioner: "builtin" | "tofu" = "builtin") {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "planton-own-states-"));
  const name = `own-${provisioner}-states`;
  await createStateBackend(db, org.actor(), { name, kind: "local", config: { path: dir } });
  await setDefaultStateBackend(db, org.actor(), { provisioner, backend: name });
  return { name, dir };
}

export async function claim(db: Database, runner: typeof runners.$inferSelect) {
  const c = await claimJob(db, runner);
  if (!c) return null;
  return { claim: c, access: await jobAccess(db, c.credential.token, c.job.id) };
}

export type Claimed = NonNullable<Awaited<ReturnType<typeof claim>>>;

export async function runStep(db: Database, c: Claimed, step: StepName, result: "succeeded" | "failed" = "succeeded", extra: { reason?: string; plan?: { artifactId: string; sha256: string; summary: Record<string, unknown> } } = {}) {
  const start = await startStep(db, c.access, step, { attemptId: c.claim.attemptId });
  if (!start.proceed) return { proceed: false as const };
  const finish = await finishStep(db, c.access, step, { attemptId: c.claim.attemptId, result, ...extra });
  return { proceed: true as const, ...finish };
}
