import { apiRoute, json } from "@/server/public-api/http";
import { cancelJob } from "@/server/services/jobs/cancel-job";

export const dynamic = "force-dynamic";

export const POST = apiRoute("engineer", async ({ rt, actor, params }) => json(await cancelJob(rt.db, actor, { jobId: params.id })));
