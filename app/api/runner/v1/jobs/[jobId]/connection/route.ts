import { json, jobRoute } from "@/server/runner-api/http";
import { readJobConnection } from "@/server/services/runners/connection";

export const dynamic = "force-dynamic";

/** The job's connection as environment variables for its engine (the job credential reads only its own job's). */
export const GET = jobRoute(async ({ rt, access }) => json(await readJobConnection(rt.db, access)));
