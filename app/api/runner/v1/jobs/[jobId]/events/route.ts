import { eventsUploadRequest } from "@/lib/runner-protocol";
import { json, jobRoute } from "@/server/runner-api/http";
import { uploadEvents } from "@/server/services/runners/upload-events";

export const dynamic = "force-dynamic";

// `closing`: the runner flushes its last events after the last step's finish ended the job.
export const POST = jobRoute(async ({ rt, access, body }) => json(await uploadEvents(rt.db, access, await body(eventsUploadRequest))), { use: "closing" });
