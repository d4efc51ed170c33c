import { apiRoute, json } from "@/server/public-api/http";
import { getIacInput } from "@/server/services/jobs/queries";

export const dynamic = "force-dynamic";

export const GET = apiRoute("viewer", async ({ rt, actor, params }) => json(await getIacInput(rt.db, actor.orgId, params.id)));
