// A job's state on a backend other than Planton-managed, through the runner API's state services: the
// server opens the backend with its connection's credentials (a local directory on real files, S3 on
// s3rver), the same write rules and lock refusal apply, and no credential reaches the runner.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { eq } from "drizzle-orm";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { claim, orgWithComponent, testRunner } from "../../../test/job-helpers";
import { startS3rver, type S3Server } from "../../../test/object-stores";
import { infraComponents, infraJobs, runnerAttempts, stateBackends } from "@/db/schema";
import { newId } from "@/lib/ids";
import { defaultStateKey } from "@/lib/state-backend-kinds";
import { createConnection } from "../settings/connections";
import { createJob } from "../jobs/create-job";
import { withBackend } from "../state-backends/open-store";
import { getState, lockState, putState, unlockState } from "./state";

let t: TestDatabase;
let s3: S3Server;
const dirs: string[] = [];
beforeAll(async () => {
  [t, s3] = await Promise.all([createTestDatabase(), startS3rver()]);
});
afterAll(async () => {
  await Promise.all([t.close(), s3.stop()]);
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const state = (serial: number, lineage = "lin-x") => ({ version: 4, serial, lineage, terraform_version: "x", outputs: {}, resources: [] });

type Setup = Awaited<ReturnType<typeof orgWithComponent>>;

const KINDS: Record<string, (setup: Setup) => Promise<{ kind: string; config: Record<string, unknown>; connectionId: string | null }>> = {
  local: async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "planton-local-backend-"));
    dirs.push(dir);
    return { kind: "local", config: { path: dir }, connectionId: null };
  },
  s3: async ({ org }) => {
    const conn = await createConnection(t.db, org.actor(), {
      name: `s3-${Math.random().toString(36).slice(2, 8)}`,
      provider: "aws",
      config: { region: s3.region },
      credentials: { access_key_id: s3.credentials.accessKeyId, secret_access_key: s3.credentials.secretAccessKey },
    });
    return { kind: "s3", config: { bucket: s3.bucket, key_prefix: `${org.orgId}/`, endpoint: s3.endpoint }, connectionId: conn.id };
  },
};

describe.each(Object.keys(KINDS))("a job's state on a %s backend", (kindName) => {
  async function setup() {
    const s = await orgWithComponent(t.db);
    const b = await KINDS[kindName](s);
    const [backend] = await t.db
      .insert(stateBackends)
      .values({ id: newId("stateBackend"), orgId: s.org.orgId, name: `own-${kindName}`, kind: b.kind, config: b.config, connectionId: b.connectionId })
      .returning();
    await t.db.update(infraComponents).set({ stateBackendId: backend.id }).where(eq(infraComponents.id, s.component.id));
    const runner = await testRunner(t.db, s.org);
    return { ...s, backend, runner };
  }

  it("locks, reads and writes under the rules at <environment>/<component>/terraform.tfstate; the runner gets no credential", async () => {
    const { org, component, backend, runner } = await setup();
    await createJob(t.db, org.actor(), { componentId: component.id, operation: "update" });
    const c = (await claim(t.db, runner))!;
    expect(c.claim.input.backend).toMatchObject({ id: backend.id, kind: backend.kind });
    expect(JSON.stringify(c.claim)).not.toContain(s3.credentials.secretAccessKey);
    const lock = await lockState(t.db, c.access, { ID: "8a0c2a5e-0000-4000-8000-000000000001", Operation: "OperationTypeApply", Who: "ada@runner" });
    expect(lock).toMatchObject({ ok: true, lock: { ID: "8a0c2a5e-0000-4000-8000-000000000001", Who: "ada@runner" } });
    // Locking again with the same ID is the same holder.
    expect((await lockState(t.db, c.access, { ID: "8a0c2a5e-0000-4000-8000-000000000001", Operation: "OperationTypeApply" })).ok).toBe(true);
    expect(await getState(t.db, c.access)).toBeNull();
    await expect(putState(t.db, c.access, "not-the-lock", state(1))).rejects.toThrow(/Nothing was written/);
    await putState(t.db, c.access, lock.lock.ID, state(2));
    expect(await getState(t.db, c.access)).toEqual(state(2));
    await expect(putState(t.db, c.access, lock.lock.ID, state(1))).rejects.toThrow(/its serial 1 is older than the stored state's 2/);
    await expect(putState(t.db, c.access, lock.lock.ID, state(3, "other"))).rejects.toThrow(/lineage/);
    await unlockState(t.db, c.access, lock.lock.ID);
    // The state is where the backend keeps it, under the default key.
    const stored = await withBackend(t.db, backend, (b) => b.read(defaultStateKey("dev", component.name)));
    expect(stored).toMatchObject({ serial: 2, lineage: "lin-x" });
  });

  it("a second job is refused with the holder's lock info; a lock left by an attempt that ended is taken over", async () => {
    const { org, component, runner } = await setup();
    const first = await createJob(t.db, org.actor(), { componentId: component.id, operation: "update" });
    const c1 = (await claim(t.db, runner))!;
    const held = await lockState(t.db, c1.access, { Operation: "OperationTypeApply", Who: "ada@runner-1" });
    expect(held.ok).toBe(true);
    // The runner dies mid-apply: its attempt ends, and the job is queued again and claimed by a new attempt.
    await t.db.update(runnerAttempts).set({ endedAt: new Date(), reason: "runner lost" }).where(eq(runnerAttempts.id, c1.claim.attemptId));
    await t.db.update(infraJobs).set({ status: "queued", currentAttemptId: null }).where(eq(infraJobs.id, first.id));
    const c2 = (await claim(t.db, runner))!;
    expect(c2.claim.job.id).toBe(first.id);
    const taken = await lockState(t.db, c2.access, { Operation: "OperationTypeApply", Who: "ada@runner-2" });
    expect(taken).toMatchObject({ ok: true, lock: { Who: "ada@runner-2" } });
    // Another job of the component, forced running: refused, naming the live holder.
    const other = await createJob(t.db, org.actor(), { componentId: component.id, operation: "refresh" });
    const attemptId = newId("runnerAttempt");
    await t.db.insert(runnerAttempts).values({ id: attemptId, jobId: other.id, runnerId: runner.id, credentialId: "jcr_x" });
    await t.db.update(infraJobs).set({ status: "running", runnerId: runner.id, currentAttemptId: attemptId }).where(eq(infraJobs.id, other.id));
    const { issueJobCredential } = await import("./credentials");
    const { jobAccess } = await import("./job-access");
    const cred = await issueJobCredential({ jobId: other.id, orgId: org.orgId, attemptId, runnerTokenHash: runner.tokenHash });
    const refused = await lockState(t.db, await jobAccess(t.db, cred.token, other.id), { Operation: "OperationTypePlan" });
    expect(refused.ok).toBe(false);
    if (!refused.ok) {
      expect(refused.message).toMatch(/^Error acquiring the state lock/);
      expect(refused.message).toContain("ada@runner-2");
    }
  });
});

describe("a default changed later is for new components", () => {
  it("a component keeps its state where it is; a new one is pinned to the default its first job used", async () => {
    const { org, components } = await orgWithComponent(t.db, { components: 2 });
    const [kept, fresh] = components;
    const runner = await testRunner(t.db, org);
    // The first component's state is on Planton-managed storage (the organization's first default).
    await createJob(t.db, org.actor(), { componentId: kept.id, operation: "update" });
    const c = (await claim(t.db, runner))!;
    const lock = await lockState(t.db, c.access, { Operation: "OperationTypeApply" });
    await putState(t.db, c.access, lock.lock.ID, state(1));
    await unlockState(t.db, c.access, lock.lock.ID);
    await t.db.update(infraJobs).set({ status: "completed", result: "succeeded" }).where(eq(infraJobs.id, c.claim.job.id));

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "planton-default-backend-"));
    dirs.push(dir);
    const [own] = await t.db.insert(stateBackends).values({ id: newId("stateBackend"), orgId: org.orgId, name: "own-default", kind: "local", config: { path: dir } }).returning();
    const { stateBackendDefaults } = await import("@/db/schema");
    await t.db.update(stateBackendDefaults).set({ backendId: own.id }).where(eq(stateBackendDefaults.orgId, org.orgId));

    const again = await createJob(t.db, org.actor(), { componentId: kept.id, operation: "refresh" });
    const backendCheck = (j: typeof again) => j.preflight.checks.find((x) => x.essential === "backend")!;
    expect(backendCheck(again).resolvedTo).toBe("planton-managed (planton_managed, where the component's state is)");
    const first = await createJob(t.db, org.actor(), { componentId: fresh.id, operation: "update" });
    expect(backendCheck(first).resolvedTo).toBe("own-default (local, the organization's default for builtin)");
    const [pinned] = await t.db.select({ b: infraComponents.stateBackendId }).from(infraComponents).where(eq(infraComponents.id, fresh.id));
    expect(pinned.b).toBe(own.id);
  });
});
