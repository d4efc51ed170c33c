import { attemptEndRequest } from "@/lib/runner-protocol";
import { json, jobRoute } from "@/server/runner-api/http";
import { endAttempt } from "@/server/services/runners/attempt-end";

export const dynamic = "force-dynamic";

// Not `live`: ending an attempt the scheduler already declared lost is a quiet no-op.
export const POST = jobRoute(async ({ rt, access, body }) => json(await endAttempt(rt.db, access, await body(attemptEndRequest))), { live: false });
