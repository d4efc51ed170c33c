import { z } from "zod";
import { apiRoute, json } from "@/server/public-api/http";
import { resumeJob } from "@/server/services/jobs/resume-job";

export const dynamic = "force-dynamic";

/** `{expectedChecksum?}`: the checksum of the plan the approver reviewed (GET …/plan). */
export const POST = apiRoute("engineer", async ({ rt, actor, params, body }) => {
  const { expectedChecksum } = await body(z.object({ expectedChecksum: z.string().optional() }));
  return json(await resumeJob(rt.db, actor, { jobId: params.id, expectedChecksum }));
});
