import { json, jobRoute } from "@/server/runner-api/http";
import { commitStateJournal } from "@/server/services/state/state-journal";
import { stateJournalCommit } from "@/lib/state-delta";

export const dynamic = "force-dynamic";

/** Compacts the step's changes into one state write → {entries, written, match, serial, checksum}; match false: send the whole state. */
export const POST = jobRoute(async ({ rt, access, body }) => json(await commitStateJournal(rt.db, access, await body(stateJournalCommit))));
