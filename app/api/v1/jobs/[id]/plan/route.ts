import { apiRoute, json } from "@/server/public-api/http";
import { getPlanReview } from "@/server/services/jobs/queries";

export const dynamic = "force-dynamic";

/** The review document of the job's saved plan: checksum and verdict, state identity, counts, deletes, operations. */
export const GET = apiRoute("viewer", async ({ rt, actor, params }) => json(await getPlanReview(rt.db, actor.orgId, params.id)));
