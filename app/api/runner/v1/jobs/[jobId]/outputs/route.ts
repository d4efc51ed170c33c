import { z } from "zod";
import { json, jobRoute } from "@/server/runner-api/http";
import { saveOutputs } from "@/server/services/runners/outputs";

export const dynamic = "force-dynamic";

const outputsRequest = z.object({ attemptId: z.string(), outputs: z.record(z.string(), z.object({ value: z.unknown(), sensitive: z.boolean() })) });

export const POST = jobRoute(async ({ rt, access, body }) => json(await saveOutputs(rt.db, access, await body(outputsRequest))));
