import { json, jobRoute } from "@/server/runner-api/http";
import { appendStateJournal } from "@/server/services/state/state-journal";
import { stateJournalBatch } from "@/lib/state-delta";

export const dynamic = "force-dynamic";

/** A batch of resource-level state changes → {acceptedThrough}; a retried batch is kept once. */
export const POST = jobRoute(async ({ rt, access, body }) => json(await appendStateJournal(rt.db, access, await body(stateJournalBatch))));
