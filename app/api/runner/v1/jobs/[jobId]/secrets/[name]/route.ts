import { json, jobRoute } from "@/server/runner-api/http";
import { readJobSecret } from "@/server/services/runners/outputs";

export const dynamic = "force-dynamic";

export const GET = jobRoute(async ({ rt, access, params }) => json(await readJobSecret(rt.db, access, decodeURIComponent(params.name))));
