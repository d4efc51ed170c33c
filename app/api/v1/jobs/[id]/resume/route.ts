import { apiRoute, json } from "@/server/public-api/http";
import { resumeJob, resumeJobInput } from "@/server/services/jobs/resume-job";

export const dynamic = "force-dynamic";

/** `{expectedChecksum?, message?}`: the checksum of the plan the approver reviewed (GET …/plan), and their words. */
export const POST = apiRoute("engineer", async ({ rt, actor, params, body }) => {
  const input = await body(resumeJobInput.omit({ jobId: true }));
  return json(await resumeJob(rt.db, actor, { jobId: params.id, ...input }));
});
