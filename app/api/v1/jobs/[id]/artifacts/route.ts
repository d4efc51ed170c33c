import { apiRoute, json } from "@/server/public-api/http";
import { getJob } from "@/server/services/jobs/queries";

export const dynamic = "force-dynamic";

/** The job's artifacts (plan files, logs, state snapshots, IaC inputs): id, kind, name, sha256, size. */
export const GET = apiRoute("viewer", async ({ rt, actor, params }) => json({ artifacts: (await getJob(rt.db, actor.orgId, params.id)).artifacts }));
