// The scheduler's leader: two schedulers on one database (as two console replicas), one leads and
// does the work; when its lock connection dies the other takes over, and the old one stops acting.
// Ticks are driven by the test (intervalMs: 0), so every step waits on a tick's end, never on a clock.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import { openDatabase, rowsOf, type DatabaseHandle } from "@/db/client";
import { infraJobs } from "@/db/schema";
import { createTestDatabase, testDriver, type TestDatabase } from "../../../test/database";
import { claim, orgWithComponent, testRunner } from "../../../test/job-helpers";
import { createJob } from "./create-job";
import { getJob } from "./queries";
import { SCHEDULER_LEADER_LOCK } from "@/db/advisory-locks";
import { RUNNER_LOST_BEFORE_START, isSchedulerLeader, startScheduler, type Scheduler } from "./scheduler";

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t.close());

/** A scheduler whose log lines the test reads. */
function scheduler(handle: DatabaseHandle) {
  const lines: string[] = [];
  const s = startScheduler(handle, { intervalMs: 0, log: (m) => lines.push(m) });
  return Object.assign(s, { lines }) as Scheduler & { lines: string[] };
}

/** A running job whose runner's lease has lapsed (its runner is gone before it started a step). */
async function lapsedJob() {
  const { org, component } = await orgWithComponent(t.db);
  const job = await createJob(t.db, org.actor(), { componentId: component.id, operation: "update" });
  await claim(t.db, await testRunner(t.db, org));
  await t.db.update(infraJobs).set({ leaseExpiresAt: new Date(Date.now() - 1000) }).where(eq(infraJobs.id, job.id));
  return { orgId: org.orgId, jobId: job.id };
}

describe.runIf(testDriver === "postgres")("the scheduler leader across replicas", () => {
  let second: DatabaseHandle;
  beforeAll(async () => {
    second = await openDatabase({ url: t.url!, migrate: false });
  });
  afterAll(() => second.close());

  it("one of two schedulers leads and does the work; when its lock connection dies the other takes over and the first stops acting", async () => {
    const a = scheduler(t);
    const b = scheduler(second);
    try {
      await a.tick();
      await b.tick();
      expect([a.leader, b.leader]).toEqual([true, false]);
      expect(isSchedulerLeader()).toBe(false); // both live in this process: the last tick (b's) set it
      expect(a.lines.join("\n")).toMatch(/became the scheduler leader/);
      expect(b.lines.join("\n")).toMatch(/follows: another replica holds the leader lock/);

      // The follower's ticks leave a lapsed lease alone; the leader's end it.
      const lost = await lapsedJob();
      await b.tick();
      expect((await getJob(t.db, lost.orgId, lost.jobId)).status).toBe("running");
      await a.tick();
      expect(await getJob(t.db, lost.orgId, lost.jobId)).toMatchObject({ status: "queued", currentAttemptId: null });
      expect(a.lines.join("\n")).toContain(`runner lost: ${lost.jobId}`);

      // The leader's lock connection ends (as when its process is killed); Postgres frees the lock once that backend has exited.
      const [holder] = rowsOf<{ pid: number }>(
        await t.db.execute(sql`select l.pid from pg_locks l join pg_database d on d.oid = l.database where d.datname = current_database() and l.locktype = 'advisory' and l.classid = 0 and l.objid = ${SCHEDULER_LEADER_LOCK} and l.objsubid = 1 and l.granted`),
      );
      const [ended] = rowsOf<{ ok: boolean }>(await t.db.execute(sql`select pg_terminate_backend(${holder.pid}::int, 10000) as ok`));
      expect(ended.ok).toBe(true);

      await b.tick();
      expect(b.leader).toBe(true);
      expect(b.lines.join("\n")).toMatch(/became the scheduler leader/);
      await a.tick();
      expect(a.leader).toBe(false);
      expect(a.lines.join("\n")).toMatch(/stopped being the scheduler leader: another replica holds the leader lock/);

      // Now the new leader does the work, and the old one does not.
      const next = await lapsedJob();
      await a.tick();
      expect((await getJob(t.db, next.orgId, next.jobId)).status).toBe("running");
      await b.tick();
      const [attempt] = rowsOf<{ reason: string }>(await t.db.execute(sql`select reason from runner_attempts where job_id = ${next.jobId}`));
      expect(attempt.reason).toBe(RUNNER_LOST_BEFORE_START);
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  it("a leader that stops lets go at once: the other takes over at its next tick", async () => {
    const a = scheduler(t);
    const b = scheduler(second);
    try {
      await a.tick();
      await b.tick();
      expect([a.leader, b.leader]).toEqual([true, false]);
      await a.stop();
      expect(a.lines.join("\n")).toMatch(/stopped being the scheduler leader: it stopped/);
      await b.tick();
      expect(b.leader).toBe(true);
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  it("a leader whose lock connection breaks and cannot come back stops acting as leader", async () => {
    // A console that connects as its own role, which the database then stops letting in.
    const [{ db: dbName }] = rowsOf<{ db: string }>(await t.db.execute(sql`select current_database() as db`));
    const role = `leader_${dbName}`;
    await t.db.execute(sql.raw(`create role ${role} login`));
    const url = new URL(t.url!);
    url.username = role;
    const cut = await openDatabase({ url: url.toString(), migrate: false });
    const s = scheduler(cut);
    try {
      await s.tick();
      expect(s.leader).toBe(true);
      await t.db.execute(sql.raw(`revoke connect on database ${dbName} from public`));
      await t.db.execute(sql`select pg_terminate_backend(pid, 10000) from pg_stat_activity where usename = ${role}`);
      await s.tick();
      expect(s.leader).toBe(false);
      expect(s.lines.join("\n")).toMatch(/stopped being the scheduler leader: its database connection failed \(.+\)/);
      // The lock went with its connection: another replica takes over.
      const b = scheduler(second);
      await b.tick();
      expect(b.leader).toBe(true);
      await b.stop();
    } finally {
      await t.db.execute(sql.raw(`grant connect on database ${dbName} to public`));
      await s.stop();
      await cut.close();
    }
  });
});

describe.runIf(testDriver === "pglite")("the scheduler on the embedded database", () => {
  it("one process owns the embedded database, so its scheduler is always the leader", async () => {
    const s = scheduler(t);
    try {
      await s.tick();
      expect(s.leader).toBe(true);
      expect(isSchedulerLeader()).toBe(true);
    } finally {
      await s.stop();
    }
  });
});
