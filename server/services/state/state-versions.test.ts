import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { TRPCError } from "@trpc/server";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { claim, orgWithComponent, runStep, testRunner } from "../../../test/job-helpers";
import { auditOf } from "../../../test/settings";
import { stateObjects, stateVersions } from "@/db/schema";
import { SENSITIVE_VALUE } from "@/lib/secrets";
import { createJob } from "../jobs/create-job";
import { getJob } from "../jobs/queries";
import { getState, lockState, putState, unlockState } from "../runners/state";
import { stateDigest } from "../../../lib/state-delta";
import { diffStateVersions, listStateVersions, rollbackStateVersion } from "./state-versions";

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t.close());

const RANDOM = 'provider["registry.opentofu.org/hashicorp/random"]';
const LOCAL = 'provider["registry.opentofu.org/hashicorp/local"]';

/** A v4 state: a generated password (its result marked sensitive, as the engine marks it) and local files. */
function stateDoc(serial: number, opts: { password: string; files: Record<string, string> }) {
  return {
    version: 4,
    terraform_version: "builtin-0.1.0",
    serial,
    lineage: "lin-sv",
    outputs: {},
    resources: [
      { mode: "managed", type: "random_password", name: "pw", provider: RANDOM, instances: [{ schema_version: 0, attributes: { id: "none", length: 16, result: opts.password }, sensitive_attributes: [[{ type: "get_attr", value: "result" }]] }] },
      ...Object.entries(opts.files).map(([name, content]) => ({
        mode: "managed",
        type: "local_file",
        name,
        provider: LOCAL,
        instances: [{ schema_version: 0, attributes: { filename: `${name}.txt`, content }, sensitive_attributes: [] }],
      })),
    ],
  };
}

/** Runs one refresh job of the component through the runner services, writing each state under its lock. */
async function jobWriting(db: TestDatabase["db"], setup: Awaited<ReturnType<typeof orgWithComponent>>, runner: Awaited<ReturnType<typeof testRunner>>, states: unknown[], finish = true) {
  const job = await createJob(db, setup.org.actor(), { componentId: setup.component.id, operation: "refresh" });
  const c = (await claim(db, runner))!;
  expect(c.claim.job.id).toBe(job.id);
  const lock = await lockState(db, c.access, { Operation: "OperationTypeApply", Who: "runner@test" });
  if (!lock.ok) throw new Error(lock.message);
  for (const s of states) await putState(db, c.access, lock.lock.ID, s);
  if (finish) {
    await unlockState(db, c.access, lock.lock.ID);
    await runStep(db, c, "init");
    await runStep(db, c, "refresh");
  }
  return { job, c, lockId: lock.lock.ID };
}

async function setUp() {
  const setup = await orgWithComponent(t.db);
  const runner = await testRunner(t.db, setup.org);
  return { ...setup, runner };
}

describe("state versions", () => {
  it("are appended by every write of a new content, with its serial, lineage, checksum, size and job; an identical write adds none", async () => {
    const s = await setUp();
    const s1 = stateDoc(1, { password: "hunter2-first-secret", files: { a: "one" } });
    const s2 = stateDoc(2, { password: "hunter2-first-secret", files: { a: "two" } });
    const { job, c } = await jobWriting(t.db, s, s.runner, [s1, s2, s2]);
    const versions = await listStateVersions(t.db, s.org.actor("viewer"), { componentId: s.component.id });
    expect(versions.map((v) => v.serial)).toEqual([2, 1]);
    expect(versions[0]).toMatchObject({ lineage: "lin-sv", jobId: job.id, attemptId: c.claim.attemptId, current: true, ...stateDigest(s2) });
    expect(versions[1]).toMatchObject({ current: false, ...stateDigest(s1) });
    // The row keeps the current content's checksum and size, as its version does.
    const [row] = await t.db.select().from(stateObjects).where(eq(stateObjects.componentId, s.component.id));
    expect({ checksum: row.checksum, size: row.size }).toEqual(stateDigest(s2));
    // A later job writing the same bytes again adds nothing either.
    await jobWriting(t.db, s, s.runner, [s2]);
    expect(await listStateVersions(t.db, s.org.actor("viewer"), { componentId: s.component.id })).toHaveLength(2);
    // The list never carries the content.
    expect(JSON.stringify(versions)).not.toContain("hunter2");
  });

  it("diff by resource address: added, removed, changed with the attributes that changed, sensitive values masked", async () => {
    const s = await setUp();
    await jobWriting(t.db, s, s.runner, [
      stateDoc(1, { password: "hunter2-old-secret", files: { a: "one", gone: "bye" } }),
      stateDoc(2, { password: "hunter2-new-secret", files: { a: "two", added: "hi" } }),
    ]);
    const [to, from] = await listStateVersions(t.db, s.org.actor("viewer"), { componentId: s.component.id });
    const d = await diffStateVersions(t.db, s.org.actor("viewer"), { componentId: s.component.id, fromId: from.id, toId: to.id });
    expect(d.added).toEqual(["local_file.added"]);
    expect(d.removed).toEqual(["local_file.gone"]);
    expect(d.changed).toEqual([
      { address: "local_file.a", attributes: [{ name: "content", sensitive: false, from: "one", to: "two" }] },
      { address: "random_password.pw", attributes: [{ name: "result", sensitive: true, from: SENSITIVE_VALUE, to: SENSITIVE_VALUE }] },
    ]);
    expect(JSON.stringify(d)).not.toContain("hunter2");
    await expect(diffStateVersions(t.db, s.org.actor("viewer"), { componentId: s.component.id, fromId: "stv_nope", toId: to.id })).rejects.toThrow(/State version stv_nope .* was not found/);
  });

  it("rollback writes the old content as a new version at the current serial + 1, recorded as an audit event", async () => {
    const s = await setUp();
    const s1 = stateDoc(1, { password: "hunter2-x", files: { a: "one" } });
    await jobWriting(t.db, s, s.runner, [s1, stateDoc(2, { password: "hunter2-x", files: { a: "two" } }), stateDoc(3, { password: "hunter2-x", files: { a: "three", b: "b" } })]);
    const before = await listStateVersions(t.db, s.org.actor(), { componentId: s.component.id });
    const v1 = before.find((v) => v.serial === 1)!;
    // A job queued meanwhile does not block the rollback; it runs afterwards on the restored state.
    const queued = await createJob(t.db, s.org.actor(), { componentId: s.component.id, operation: "refresh" });
    const r = await rollbackStateVersion(t.db, s.org.actor("admin"), { componentId: s.component.id, versionId: v1.id });
    expect(r).toMatchObject({ serial: 4, restoredFrom: v1.id, restoredSerial: 1 });
    const after = await listStateVersions(t.db, s.org.actor(), { componentId: s.component.id });
    expect(after.map((v) => v.serial)).toEqual([4, 3, 2, 1]);
    expect(after[0]).toMatchObject({ current: true, jobId: null, actorLabel: s.org.users.admin.email, restoredFrom: v1.id, lineage: "lin-sv" });
    const [row] = await t.db.select().from(stateObjects).where(eq(stateObjects.componentId, s.component.id));
    expect(row).toMatchObject({ serial: 4, lineage: "lin-sv", checksum: after[0].checksum, size: after[0].size, state: { ...s1, serial: 4 } });
    const [stored] = await t.db.select().from(stateVersions).where(eq(stateVersions.id, after[0].id));
    expect(stored.state).toEqual({ ...s1, serial: 4 });
    const audits = await auditOf(t.db, s.org.orgId, "state.rollback");
    expect(audits).toHaveLength(1);
    expect(audits[0]).toMatchObject({ targetId: s.component.id, actorLabel: s.org.users.admin.email, changes: { versionId: v1.id, fromSerial: 3, toSerial: 4, restoredSerial: 1 } });
    expect(audits[0].summary).toContain("serial 4");
    const c = (await claim(t.db, s.runner))!;
    expect(c.claim.job.id).toBe(queued.id);
    expect(await getState(t.db, c.access)).toEqual({ ...s1, serial: 4 });
    // The next write of the job builds on serial 4; serial 3 content is refused as older.
    const lock = await lockState(t.db, c.access, { Operation: "OperationTypeApply" });
    await expect(putState(t.db, c.access, lock.lock.ID, stateDoc(3, { password: "hunter2-x", files: {} }))).rejects.toThrow(/its serial 3 is older than the stored state's 4/);
  });

  it("rollback is refused while a job of the component runs or the state is locked, naming the job and the fix, changing nothing", async () => {
    const s = await setUp();
    await jobWriting(t.db, s, s.runner, [stateDoc(1, { password: "p", files: { a: "one" } }), stateDoc(2, { password: "p", files: { a: "two" } })]);
    const [, v1] = await listStateVersions(t.db, s.org.actor(), { componentId: s.component.id });
    const { job, c } = await jobWriting(t.db, s, s.runner, [], false);
    await expect(rollbackStateVersion(t.db, s.org.actor(), { componentId: s.component.id, versionId: v1.id })).rejects.toThrow(
      `Nothing was rolled back: Infra Job ${job.id} of ${s.component.name} is running and holds its state. Wait for it to finish, or cancel it (planton infra job cancel ${job.id}), then roll back again.`,
    );
    expect((await getJob(t.db, s.org.orgId, job.id)).status).toBe("running");
    // The job finishes (its lock released); a lock left by a writer outside any job (OpenTofu run by hand) refuses it too.
    await runStep(t.db, c, "init");
    await runStep(t.db, c, "refresh");
    expect((await getJob(t.db, s.org.orgId, job.id)).status).toBe("completed");
    await t.db
      .update(stateObjects)
      .set({ lockInfo: { ID: "lock-by-hand", Who: "ada@laptop", Path: "x", Operation: "OperationTypeApply", Version: "", Created: "2026-01-01T00:00:00Z", Info: "" }, lockedByJob: null })
      .where(eq(stateObjects.componentId, s.component.id));
    await expect(rollbackStateVersion(t.db, s.org.actor(), { componentId: s.component.id, versionId: v1.id })).rejects.toThrow(
      `Nothing was rolled back: the state of ${s.component.name} is locked (lock ID lock-by-hand) by ada@laptop for OperationTypeApply.`,
    );
    const [row] = await t.db.select().from(stateObjects).where(eq(stateObjects.componentId, s.component.id));
    expect(row.serial).toBe(2);
    expect(await listStateVersions(t.db, s.org.actor(), { componentId: s.component.id })).toHaveLength(2);
    expect(await auditOf(t.db, s.org.orgId, "state.rollback")).toHaveLength(0);
  });

  it("rollback is an admin's: a viewer and an engineer are refused with the role needed; viewers read versions and diffs", async () => {
    const s = await setUp();
    await jobWriting(t.db, s, s.runner, [stateDoc(1, { password: "p", files: {} }), stateDoc(2, { password: "p", files: { a: "a" } })]);
    const [v2, v1] = await listStateVersions(t.db, s.org.actor(), { componentId: s.component.id });
    await expect(rollbackStateVersion(t.db, s.org.actor("engineer"), { componentId: s.component.id, versionId: v1.id })).rejects.toThrow(
      "Nothing was rolled back: rolling back a state needs the admin role, and you are an engineer. Ask an admin to roll it back, or to change your role in Settings → Members.",
    );
    await expect(rollbackStateVersion(t.db, s.org.actor("viewer"), { componentId: s.component.id, versionId: v1.id })).rejects.toThrow(/needs the admin role, and you are a viewer/);
    for (const role of ["viewer", "engineer"] as const) {
      const err = await s.org
        .call(role)
        .components.stateRollback({ org: s.org.slug, id: s.component.id, versionId: v1.id })
        .catch((e) => e);
      expect(err).toBeInstanceOf(TRPCError);
      expect((err as TRPCError).code).toBe("FORBIDDEN");
    }
    const viewer = s.org.call("viewer");
    expect((await viewer.components.stateVersions({ org: s.org.slug, id: s.component.id })).map((v) => v.serial)).toEqual([2, 1]);
    expect((await viewer.components.stateDiff({ org: s.org.slug, id: s.component.id, fromId: v1.id, toId: v2.id })).added).toEqual(["local_file.a"]);
    const [row] = await t.db.select().from(stateObjects).where(eq(stateObjects.componentId, s.component.id));
    expect(row.serial).toBe(2);
    expect((await s.org.call("admin").components.stateRollback({ org: s.org.slug, id: s.component.id, versionId: v1.id })).serial).toBe(3);
  });
});
