import { z } from "zod";
import { apiRoute, json } from "@/server/public-api/http";
import { rerunJob } from "@/server/services/jobs/rerun-job";

export const dynamic = "force-dynamic";

/** `{versionMessage?}`: a new job from a completed one (201). */
export const POST = apiRoute("engineer", async ({ rt, actor, params, body }) => {
  const { versionMessage } = await body(z.object({ versionMessage: z.string().max(500).optional() }));
  return json(await rerunJob(rt.db, actor, { jobId: params.id, versionMessage }), 201);
});
