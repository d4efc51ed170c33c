import { attemptEndRequest } from "@/lib/runner-protocol";
import { json, jobRoute } from "@/server/runner-api/http";
import { endAttempt } from "@/server/services/runners/attempt-end";

export const dynamic = "force-dynamic";

// Ending an attempt after its last step ended the job, or after the scheduler declared it lost, is legal.
export const POST = jobRoute(async ({ rt, access, body }) => json(await endAttempt(rt.db, access, await body(attemptEndRequest))), { use: "ending" });
