// Every Postgres advisory-lock key the console takes, in one place, so no two uses can meet on a key.
// A single key (the migration's, the scheduler leader's, the audit archive's) is a bigint below 2^32: it shows
// in pg_locks as classid 0, objid = the key. A key space (a state move's run, a hosted runner's name) puts its
// number in the high 32 bits (classid) and the member in the low 32 (objid), so it never equals a single key.

/** Held while a console migrates the database, so replicas starting together migrate once. */
export const MIGRATION_LOCK = 727274;
/** Its holder is the scheduler leader (server/services/jobs/scheduler.ts). */
export const SCHEDULER_LEADER_LOCK = 727275;
/** Taken for one audit archive run's transaction, so one replica archives at a time. */
export const AUDIT_ARCHIVE_LOCK = 727276;
/** Taken for the transaction that saves a `local` state backend, so two organizations cannot both claim one shared folder (local-folder.ts). */
export const LOCAL_STATE_FOLDERS_LOCK = 727279;
/** One lock per state move: its holder runs the move (server/services/state-backends/move.ts). */
export const MOVE_RUN_LOCK_SPACE = 727277;
/** One lock per hosted runner name, `hosted-<n>`: its holder is the console process that runs that runner. */
export const HOSTED_RUNNER_NAME_LOCK_SPACE = 727278;

/** The bigint key of member `n` (0 ≤ n < 2^32) of a key space. */
export const keyInSpace = (space: number, n: number): number => space * 2 ** 32 + n;
