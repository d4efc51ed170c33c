import { z } from "zod";
import { uploadedEvent } from "@/lib/runner-protocol";
import { json, jobRoute } from "@/server/runner-api/http";
import { uploadEvents } from "@/server/services/runners/upload-events";

export const dynamic = "force-dynamic";

const uploadRequest = z.object({ attemptId: z.string(), events: z.array(uploadedEvent).max(5000) });

export const POST = jobRoute(async ({ rt, access, body }) => json(await uploadEvents(rt.db, access, await body(uploadRequest))));
