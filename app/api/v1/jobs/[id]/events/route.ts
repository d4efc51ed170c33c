import { apiRoute, json } from "@/server/public-api/http";
import { readEventsAfter } from "@/server/services/jobs/events";
import { getJob } from "@/server/services/jobs/queries";

export const dynamic = "force-dynamic";

/** `?after=<seq>&limit=`: the job's progress events after that seq, in order. */
export const GET = apiRoute("viewer", async ({ rt, actor, params, url }) => {
  const job = await getJob(rt.db, actor.orgId, params.id);
  const after = Math.max(0, Number(url.searchParams.get("after") ?? 0) || 0);
  const limit = Math.min(5000, Math.max(1, Number(url.searchParams.get("limit") ?? 1000) || 1000));
  const events = await readEventsAfter(rt.db, params.id, after, limit);
  return json({ events, lastSeq: job.eventSeq, status: job.status });
});
