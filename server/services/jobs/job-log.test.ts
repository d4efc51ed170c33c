// A job's log archived once it has ended: the text, one artifact with its SHA-256 however many archivers race for
// it, and only once the job's runner has sent its last lines (its attempt ended) — or no runner ever ran it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { artifacts, infraJobs } from "@/db/schema";
import { sha256Of } from "@/lib/artifacts";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { claim, orgWithComponent, runStep, testRunner } from "../../../test/job-helpers";
import { downloadArtifactForViewer } from "../runners/artifacts";
import { endAttempt } from "../runners/attempt-end";
import { cancelJob } from "./cancel-job";
import { createJob } from "./create-job";
import { appendEvents } from "./events";
import { archiveEndedJobLogs, archiveJobLog, JOB_LOG_NAME } from "./job-log";
import { getJob } from "./queries";

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t.close());

const logsOf = async (jobId: string) => t.db.select().from(artifacts).where(and(eq(artifacts.jobId, jobId), eq(artifacts.kind, "log")));

describe("a job's archived log", () => {
  it("is archived once its runner has ended the attempt: every line and status change, colours removed, with its SHA-256, once", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const job = await createJob(t.db, org.actor(), { componentId: component.id, operation: "update" });
    const c = (await claim(t.db, await testRunner(t.db, org)))!;
    await t.db.transaction((tx) =>
      appendEvents(tx, job.id, [
        { operation: "init", type: "log", payload: { line: "\x1b[2m$ builtin init\x1b[0m" } },
        { operation: "init", type: "log", payload: { line: "warning: one\ntwo", stream: "stderr" } },
      ]),
    );
    await runStep(t.db, c, "init");
    await runStep(t.db, c, "refresh", "failed", { reason: "provider unreachable" });
    expect((await getJob(t.db, org.orgId, job.id)).status).toBe("completed");

    // Ended, but its runner may still send its last lines until it ends the attempt.
    expect(await archiveEndedJobLogs(t.db, 1000)).not.toContain(job.id);
    await endAttempt(t.db, c.access, { attemptId: c.claim.attemptId, exitCode: 0 });
    expect(await archiveEndedJobLogs(t.db, 1000)).toContain(job.id);

    const [log] = await logsOf(job.id);
    expect(log).toMatchObject({ name: JOB_LOG_NAME, encrypted: false });
    const { bytes, digest } = await downloadArtifactForViewer(t.db, job.id, log!.id);
    expect(digest).toBe(`sha-256=${sha256Of(bytes).base64}`);
    expect(log!.sha256).toBe(sha256Of(bytes).hex);
    const text = new TextDecoder().decode(bytes);
    expect(text.split("\n")[0]).toBe(`# Infra Job ${job.id}: update of ${component.name}, failed (refresh failed: provider unreachable); ended ${(await getJob(t.db, org.orgId, job.id)).completedAt!.toISOString()}`);
    expect(text).toMatch(/^\S+ \[init\] \$ builtin init$/m);
    expect(text).toMatch(/^\S+ \[init\] \(stderr\) warning: one$/m);
    expect(text).toMatch(/^\S+ \[init\] \(stderr\) two$/m);
    expect(text).toMatch(/^\S+ \[job\] status running$/m);
    expect(text).toMatch(/^\S+ \[job\] status completed, failed: refresh failed: provider unreachable$/m);
    expect(text).not.toContain("\x1b");
    expect((await getJob(t.db, org.orgId, job.id)).logArtifactId).toBe(log!.id);

    // Archived once: again, or by two archivers at once, it is the same artifact.
    expect(await archiveEndedJobLogs(t.db, 1000)).not.toContain(job.id);
    await t.db.update(infraJobs).set({ logArtifactId: null }).where(eq(infraJobs.id, job.id));
    const twice = await Promise.all([archiveJobLog(t.db, job.id), archiveJobLog(t.db, job.id)]);
    expect(twice).toEqual([log!.id, log!.id]);
    expect(await logsOf(job.id)).toHaveLength(1);
  });

  it("a job that never ran (cancelled while queued) is archived at once, with the reason", async () => {
    const { org, component } = await orgWithComponent(t.db);
    const job = await createJob(t.db, org.actor(), { componentId: component.id, operation: "update" });
    await cancelJob(t.db, org.actor(), { jobId: job.id });
    expect(await archiveEndedJobLogs(t.db, 1000)).toContain(job.id);
    const [log] = await logsOf(job.id);
    const text = new TextDecoder().decode((await downloadArtifactForViewer(t.db, job.id, log!.id)).bytes);
    expect(text).toMatch(/^\S+ \[job\] status completed, cancelled/m);
  });
});
