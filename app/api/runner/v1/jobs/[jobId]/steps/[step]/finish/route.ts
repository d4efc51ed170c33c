import { z } from "zod";
import { STEP_NAMES, stepFinishRequest } from "@/lib/runner-protocol";
import { json, jobRoute } from "@/server/runner-api/http";
import { finishStep } from "@/server/services/runners/steps";

export const dynamic = "force-dynamic";

export const POST = jobRoute(async ({ rt, access, params, body }) =>
  json(await finishStep(rt.db, access, z.enum(STEP_NAMES).parse(params.step), await body(stepFinishRequest))),
  { use: "closing" }, // a retried finish after it ended the job answers again
);
