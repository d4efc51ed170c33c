// The three edges (console tRPC, REST /api/v1, runner API) answer through one error map: a lost
// race is a 409 in the product's words, an unexpected error a generic message with an id the log has.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { TRPCError } from "@trpc/server";
import { eq, sql } from "drizzle-orm";
import { jobOperations } from "@/db/schema";
import { POST as restOverHttp } from "@/app/api/v1/[...path]/route";
import { dispatchRunnerApi } from "@/server/runner-api/routes";
import { POST as trpcOverHttp } from "@/app/api/trpc/[trpc]/route";
import { createTestDatabase, testDriver, type TestDatabase } from "../test/database";
import { getRuntime, type Runtime } from "./runtime";
import { createJob } from "./services/jobs/create-job";
import { claim, orgWithComponent, testRunner } from "../test/job-helpers";
import { createApiToken } from "./services/settings/api-tokens";

let t: TestDatabase | undefined;
let rt: Runtime;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "planton-error-map-"));

beforeAll(async () => {
  // The routes open the server's own runtime: point it at this file's database.
  process.env.PLANTON_DATA_DIR = dataDir;
  if (testDriver === "postgres") {
    t = await createTestDatabase();
    process.env.DATABASE_URL = t.url;
  }
  rt = await getRuntime();
});
afterAll(async () => {
  await rt?.handle.close();
  await t?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function setUp() {
  const { org, component } = await orgWithComponent(rt.db);
  const { token } = await createApiToken(rt.db, org.actor("engineer"), { name: `edges-${component.id}` });
  const job = await createJob(rt.db, org.actor("engineer"), { componentId: component.id, operation: "update" });
  return { org, token, job };
}

const rest = (token: string, jobId: string) =>
  restOverHttp(new Request(`http://console.test/api/v1/jobs/${jobId}/cancel`, { method: "POST", headers: { authorization: `Bearer ${token}` } }));

const trpc = (token: string, org: string, jobId: string) =>
  trpcOverHttp(
    new Request("http://console.test/api/trpc/jobs.cancel", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ json: { org, jobId } }),
    }),
  );

const runnerStart = (credential: string, jobId: string, attemptId: string) =>
  dispatchRunnerApi(
    new Request(`http://console.test/api/runner/v1/jobs/${jobId}/steps/init/start`, {
      method: "POST",
      headers: { authorization: `Bearer ${credential}`, "content-type": "application/json" },
      body: JSON.stringify({ attemptId }),
    }),
  );

/** Steps whose phase moved underneath the request: still queued, yet already with a result. */
const moveStepsUnderneath = (jobId: string) => rt.db.update(jobOperations).set({ result: "failed" }).where(eq(jobOperations.jobId, jobId));

describe("one error map for the three edges", () => {
  it("an illegal transition (steps moved underneath) is 409 CONFLICT with the lifecycle's words on every edge", async () => {
    const { org, token, job } = await setUp();
    await moveStepsUnderneath(job.id);
    const message = "Nothing was done: A step that is queued/failed cannot cancel.";

    const viaCaller = await org.call("engineer").jobs.cancel({ org: org.slug, jobId: job.id }).catch((e) => e);
    expect(viaCaller).toBeInstanceOf(TRPCError);
    expect(viaCaller).toMatchObject({ code: "CONFLICT", message });

    const viaTrpc = await trpc(token, org.slug, job.id);
    expect(viaTrpc.status).toBe(409);
    expect((await viaTrpc.json()).error.json).toMatchObject({ message, data: { code: "CONFLICT", httpStatus: 409 } });

    const viaRest = await rest(token, job.id);
    expect(viaRest.status).toBe(409);
    expect(await viaRest.json()).toEqual({ error: { code: "CONFLICT", message } });

    // The runner's job is another organization's: the job above is no longer claimable.
    const other = await setUp();
    const claimed = (await claim(rt.db, await testRunner(rt.db, other.org)))!;
    expect(claimed.claim.job.id).toBe(other.job.id);
    await moveStepsUnderneath(claimed.claim.job.id);
    const viaRunnerApi = await runnerStart(claimed.claim.credential.token, claimed.claim.job.id, claimed.claim.attemptId);
    expect(viaRunnerApi.status).toBe(409);
    expect(await viaRunnerApi.json()).toEqual({ error: { code: "CONFLICT", message: "Nothing was done: A step that is queued/failed cannot start." } });
  });

  it("an unexpected error is answered with a generic message and an error id that the server log carries, never the SQL", async () => {
    const { org, token, job } = await setUp();
    const other = await setUp();
    const claimed = (await claim(rt.db, await testRunner(rt.db, other.org)))!;
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    await rt.db.execute(sql`alter table progress_events rename to progress_events_gone`);
    try {
      const generic = /^The server failed to answer \(error (err_[0-9A-HJKMNP-TV-Z]{26})\); nothing is known to have changed\. Try again, and give the console's operator the error id if it keeps failing\.$/;
      const loggedWith = (id: string) => logged.mock.calls.find((args) => String(args[0]).includes(id));

      const viaCaller = await org.call("engineer").jobs.cancel({ org: org.slug, jobId: job.id }).catch((e) => e);
      expect(viaCaller).toMatchObject({ code: "INTERNAL_SERVER_ERROR", message: expect.stringMatching(generic) });
      expect(String(loggedWith(viaCaller.message.match(generic)![1])?.[1])).toContain("progress_events");

      const viaTrpc = await trpc(token, org.slug, job.id);
      expect(viaTrpc.status).toBe(500);
      const trpcError = (await viaTrpc.json()).error.json;
      expect(trpcError.message).toMatch(generic);
      expect(trpcError.data.errorId).toBe(trpcError.message.match(generic)[1]);
      expect(loggedWith(trpcError.data.errorId)).toBeDefined();

      const viaRest = await rest(token, job.id);
      expect(viaRest.status).toBe(500);
      const restError = (await viaRest.json()).error;
      expect(restError).toEqual({ code: "INTERNAL", message: expect.stringMatching(generic), errorId: restError.message.match(generic)[1] });
      expect(loggedWith(restError.errorId)).toBeDefined();

      const viaRunnerApi = await runnerStart(claimed.claim.credential.token, claimed.claim.job.id, claimed.claim.attemptId);
      expect(viaRunnerApi.status).toBe(500);
      const runnerError = (await viaRunnerApi.json()).error;
      expect(runnerError).toEqual({ code: "INTERNAL", message: expect.stringMatching(generic), errorId: runnerError.message.match(generic)[1] });
      expect(loggedWith(runnerError.errorId)).toBeDefined();
      for (const answer of [viaCaller.message, trpcError.message, restError.message, runnerError.message]) expect(answer).not.toMatch(/progress_events|relation|select|insert/i);
    } finally {
      await rt.db.execute(sql`alter table progress_events_gone rename to progress_events`);
      logged.mockRestore();
    }
  });
});
