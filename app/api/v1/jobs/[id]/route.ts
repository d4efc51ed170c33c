import { apiRoute, json } from "@/server/public-api/http";
import { getJob } from "@/server/services/jobs/queries";

export const dynamic = "force-dynamic";

export const GET = apiRoute("viewer", async ({ rt, actor, params }) => json(await getJob(rt.db, actor.orgId, params.id, actor.role)));
