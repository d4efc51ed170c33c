// A state move's steps and statuses, and how many rows a page's view carries: plain values, apart from the
// API's zod schemas (lib/api/state-schemas.ts uses them), so the console's pages take them without zod, whose
// schemas probe for eval when they are built — a violation under the console's Content-Security-Policy.

export const MOVE_STEPS = ["pending", "held", "locked", "copied", "switched", "done", "failed", "rolled_back"] as const;
/** The steps an item is in while its move works on it (between waiting and an end). */
export const MOVE_STEPS_IN_FLIGHT = ["held", "locked", "copied", "switched"] as const satisfies readonly (typeof MOVE_STEPS)[number][];
/** The steps of an item its move has not finished with (a run resumes these). */
export const MOVE_STEPS_UNFINISHED = ["pending", ...MOVE_STEPS_IN_FLIGHT] as const;
export const MOVE_STATUSES = ["running", "succeeded", "failed"] as const;
/**
 * Items a live view of a move carries at most (`current`, the watch, `get` with `limit`, the answers of start, retry and
 * rollback): the failed ones first, then those in flight, then the rest. A move of 10 000 states answered whole is
 * 4.5 MB and a quarter of a CPU-second to read, and a page following it read it on every committed step — it halved
 * the move's own speed.
 */
export const MOVE_ITEMS_SHOWN = 200;

/**
 * Rows a page's table of states draws at most — the Settings page's Planton-managed states (asked for with this
 * `limit`) and the dry run's review: thousands of rows make a page slow to draw, and at 10 000 states the whole list
 * is 2.5 MB; the totals cover every state, and the CLI lists them all.
 */
export const STATE_ROWS_SHOWN = 500;
