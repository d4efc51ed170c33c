import { z } from "zod";
import { json, jobRoute } from "@/server/runner-api/http";
import { heartbeat } from "@/server/services/runners/heartbeat";

export const dynamic = "force-dynamic";

export const POST = jobRoute(async ({ rt, access, body }) => json(await heartbeat(rt.db, access, await body(z.object({ attemptId: z.string() })))));
