import { z } from "zod";
import { STEP_NAMES, stepStartRequest } from "@/lib/runner-protocol";
import { json, jobRoute } from "@/server/runner-api/http";
import { startStep } from "@/server/services/runners/steps";

export const dynamic = "force-dynamic";

export const POST = jobRoute(async ({ rt, access, params, body }) =>
  json(await startStep(rt.db, access, z.enum(STEP_NAMES).parse(params.step), await body(stepStartRequest))),
  { use: "closing" }, // a retried start after it finished the job cancelled answers again
);
