import { z } from "zod";
import { apiRoute, json } from "@/server/public-api/http";
import { getComponent } from "@/server/services/components/queries";
import { createJob, createJobInput } from "@/server/services/jobs/create-job";
import { listJobs } from "@/server/services/jobs/queries";

export const dynamic = "force-dynamic";

/** The component's jobs, newest first; `?cursor=` (the previous page's nextCursor) and `?limit=`. */
export const GET = apiRoute("viewer", async ({ rt, actor, params, url }) => {
  await getComponent(rt.db, actor.orgId, params.id);
  const limit = url.searchParams.get("limit");
  return json(await listJobs(rt.db, actor.orgId, { componentId: params.id, cursor: url.searchParams.get("cursor") ?? undefined, ...(limit ? { limit: Number(limit) } : {}) }, actor.role));
});

/** `{operation, versionMessage, import?}`: creates an Infra Job (201), or refuses with nothing created. */
export const POST = apiRoute("engineer", async ({ rt, actor, params, body }) => {
  const input = await body(createJobInput.omit({ componentId: true }).extend({ versionMessage: z.string().max(500).default("") }));
  return json(await createJob(rt.db, actor, { ...input, componentId: params.id }), 201);
});
