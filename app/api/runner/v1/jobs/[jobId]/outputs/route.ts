import { outputsRequest } from "@/lib/runner-protocol";
import { json, jobRoute } from "@/server/runner-api/http";
import { saveOutputs } from "@/server/services/runners/outputs";

export const dynamic = "force-dynamic";

export const POST = jobRoute(async ({ rt, access, body }) => json(await saveOutputs(rt.db, access, await body(outputsRequest))));
