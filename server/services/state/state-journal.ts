// A job's state journal (issue 15): the builtin engine's apply sends each resource's change as it
// completes (lib/state-delta.ts), kept here durably, and compacted into one full state write — one
// state version — when the step ends, or when the job ends any other way (failed, cancelled, runner
// lost: releaseStateLocks compacts before it lets go). Every backend kind: Planton-managed state is
// written in the transaction; another kind is written through its store under the lock the runner held.
import { asc, eq } from "drizzle-orm";
import type { Database, Queryable } from "@/db/client";
import { environments, infraComponents, infraJobs, stateBackends, stateJournal, stateObjects } from "@/db/schema";
import { PLANTON_MANAGED_KIND } from "@/lib/state-backend-kinds";
import { applyStateDelta, stateDigest, type DeltaState, type StateDelta, type StateJournalBatch, type StateJournalCommit, type StateJournalCommitResult } from "@/lib/state-delta";
import { writeRefusal } from "@/state-backends/rules";
import { decryptSecret, encryptSecret } from "../../crypto";
import { conflict } from "../../errors";
import { withBackend } from "../state-backends/open-store";
import { stateKeyOf } from "../state-backends/served";
import { lockLiveJob, type JobAccess } from "../runners/job-access";
import { writeStateContent } from "./state-versions";

type Log = (line: string) => void;
const defaultLog: Log = (line) => console.log(`[state] ${line}`);

/**
 * Keeps a batch of changes from the job's running attempt. A change already kept (a retried upload) is
 * not kept twice. Planton-managed state must be locked by this job under `lockId`; another kind's lock is
 * checked by the write that compacts them (a remote round trip per batch is what this journal saves).
 */
export async function appendStateJournal(db: Database, access: JobAccess, batch: StateJournalBatch): Promise<{ acceptedThrough: number }> {
  // Sealed before the transaction: the job's row stays locked only for the round trips.
  const sealed = sealChanges(batch.entries);
  return db.transaction(async (tx) => {
    const job = await lockLiveJob(tx, access, "key share");
    await keepChanges(tx, access, job, batch.step, batch.lockId, sealed);
    return { acceptedThrough: Math.max(...batch.entries.map((e) => e.seq)) };
  });
}

type SealedChange = Pick<typeof stateJournal.$inferInsert, "seq" | "lineage" | "baseSerial" | "serial" | "addresses" | "change">;

function sealChanges(entries: StateJournalBatch["entries"]): SealedChange[] {
  return entries.map((e) => ({
    seq: e.seq,
    lineage: e.delta.lineage,
    baseSerial: e.baseSerial,
    serial: e.delta.serial,
    addresses: e.delta.resources.map((r) => r.key),
    // The change carries the state's values, secrets among them: sealed like the organization's secrets.
    change: encryptSecret(JSON.stringify(e.delta)),
  }));
}

/** Refused unless the job holds the Planton-managed state's lock under `lockId`. */
function checkLockHeld(row: Pick<typeof stateObjects.$inferSelect, "lockInfo" | "lockedByJob"> | undefined, jobId: string, lockId: string): void {
  if (!row?.lockInfo || row.lockedByJob !== jobId || row.lockInfo.ID !== lockId) {
    throw conflict(`Nothing was recorded: the state is not locked by this job under lock ID ${lockId}. Take the lock (POST …/state/lock) first.`);
  }
}

/** Keeps sealed changes of the job (its row locked by the caller); Planton-managed state must be locked by the job under `lockId`. */
async function keepChanges(tx: Queryable, access: JobAccess, job: { id: string; orgId: string; componentId: string; backendId: string | null }, step: StateJournalBatch["step"], lockId: string, sealed: SealedChange[]) {
  const [backend] = job.backendId ? await tx.select({ kind: stateBackends.kind }).from(stateBackends).where(eq(stateBackends.id, job.backendId)) : [];
  if (backend?.kind === PLANTON_MANAGED_KIND) {
    const [row] = await tx.select({ lockInfo: stateObjects.lockInfo, lockedByJob: stateObjects.lockedByJob }).from(stateObjects).where(eq(stateObjects.componentId, job.componentId));
    checkLockHeld(row, job.id, lockId);
  }
  await tx
    .insert(stateJournal)
    .values(sealed.map((e) => ({ ...e, attemptId: access.attemptId, step, jobId: job.id, orgId: job.orgId, componentId: job.componentId, lockId })))
    .onConflictDoNothing();
}

/**
 * The end of a step's changes (POST …/state/journal/commit): everything compacted and checked against the
 * engine's final checksum, in one transaction. The last changes that came with it are replayed as they came,
 * after those kept before; they are kept (sealed) only when the compaction leaves the journal kept — a
 * mismatch, for the runner's whole document — since a written compaction would delete them again at once.
 */
export async function commitStateJournal(db: Database, access: JobAccess, body: StateJournalCommit): Promise<StateJournalCommitResult> {
  return db.transaction(async (tx) => {
    const job = await lockLiveJob(tx, access);
    const entries = body.entries ?? [];
    const lockId = body.lockId!; // the request's schema requires one with changes (read only when there are some)
    const tail: Tail | undefined = entries.length
      ? {
          lockId,
          changes: entries.map((e) => ({ attemptId: access.attemptId, step: body.step, seq: e.seq, baseSerial: e.baseSerial, lineage: e.delta.lineage, lockId, open: () => e.delta })),
          keep: () => keepChanges(tx, access, job, body.step, lockId, sealChanges(entries)),
        }
      : undefined;
    return compactStateJournal(tx, access.jobId, { checksum: body.checksum, tail });
  });
}

/** A whole state written by the job replaces the changes it had sent. */
export async function dropStateJournal(db: Queryable, jobId: string): Promise<void> {
  await db.delete(stateJournal).where(eq(stateJournal.jobId, jobId));
}

/** Whether the job has changes not yet compacted. */
export async function hasStateJournal(db: Queryable, jobId: string): Promise<boolean> {
  const [row] = await db.select({ seq: stateJournal.seq }).from(stateJournal).where(eq(stateJournal.jobId, jobId)).limit(1);
  return !!row;
}

/** A change to replay: a kept one (opened by unsealing it) or one that came with the commit. */
interface Change {
  attemptId: string;
  step: string;
  seq: number;
  baseSerial: number;
  lineage: string;
  lockId: string;
  open(): StateDelta;
}

/** Changes that came with the commit, not kept (yet): `keep` keeps them when the journal is to stay. */
interface Tail {
  lockId: string;
  changes: Change[];
  keep(): Promise<void>;
}

const kept = (r: typeof stateJournal.$inferSelect): Change => ({ ...r, open: () => JSON.parse(decryptSecret(r.change)) as StateDelta });

/** The stored state with the changes replayed in order; a change that does not follow the one before (a gap, another serial or lineage) ends the replay. */
function replay(base: DeltaState | null, rows: Change[], jobId: string, log: Log): { state: DeltaState | null; used: Change[] } {
  let state = base;
  const used: Change[] = [];
  for (const r of rows) {
    const prev = used.at(-1);
    const follows = (!prev || prev.attemptId !== r.attemptId || prev.step !== r.step || r.seq === prev.seq + 1) && r.baseSerial === (state?.serial ?? 0) && (!state || state.lineage === r.lineage);
    if (!follows) {
      log(`job ${jobId}: change ${r.attemptId}/${r.step}/${r.seq} applies onto serial ${r.baseSerial} of lineage ${r.lineage}, but the state it would follow is serial ${state?.serial ?? 0}${state ? ` of lineage ${state.lineage}` : " (no state)"}; it and the ${rows.length - used.length - 1} after it were not applied`);
      break;
    }
    state = applyStateDelta(state ?? { serial: 0, lineage: r.lineage, resources: [] }, r.open());
    used.push(r);
  }
  return { state, used };
}

/**
 * Compacts the job's journal into one full write of its component's state: the stored state with every
 * change replayed. With `checksum` (the engine's final state), nothing is written unless the result has
 * that checksum, and the changes stay kept for the runner's whole document (which replaces them) or the
 * job's end. Runs in the caller's transaction; another kind's store is reached through it too. `tail`: the
 * changes that came with the commit, replayed after the kept ones (one already kept is not replayed twice):
 * they are the running attempt's last, and what its batches kept before them is a prefix of the same seqs.
 */
export async function compactStateJournal(tx: Queryable, jobId: string, opts: { checksum?: string; log?: Log; tail?: Tail } = {}): Promise<StateJournalCommitResult> {
  const log = opts.log ?? defaultLog;
  const stored = (await tx.select().from(stateJournal).where(eq(stateJournal.jobId, jobId)).orderBy(asc(stateJournal.attemptId), asc(stateJournal.step), asc(stateJournal.seq))).map(kept);
  const position = (c: Change) => `${c.attemptId}/${c.step}/${c.seq}`;
  const known = new Set(stored.map(position));
  const rows = opts.tail ? [...stored, ...opts.tail.changes.filter((c) => !known.has(position(c)))] : stored;
  if (!rows.length) return { entries: 0, written: false, match: !opts.checksum };
  const [job] = await tx.select({ orgId: infraJobs.orgId, componentId: infraJobs.componentId, backendId: infraJobs.backendId }).from(infraJobs).where(eq(infraJobs.id, jobId));
  const [backend] = job?.backendId ? await tx.select().from(stateBackends).where(eq(stateBackends.id, job.backendId)) : [];
  // Every writer of a job's journal holds the job's row lock (uploads, the commit, the job's end), so no change arrives between the read and this.
  const drop = () => tx.delete(stateJournal).where(eq(stateJournal.jobId, jobId));
  if (!job || !backend) {
    log(`job ${jobId}: ${rows.length} state change(s) were dropped: the job has no state backend to write them to`);
    await drop();
    return { entries: rows.length, written: false, match: false };
  }
  // The changes stay kept, the commit's among them: the runner's whole document or the job's end replaces them.
  const mismatch = async (checksum: string) => {
    log(`job ${jobId}: the state compacted from ${rows.length} change(s) has checksum ${checksum}, not the engine's ${opts.checksum}; nothing was written from them, and the runner sends its whole state instead`);
    await opts.tail?.keep();
    return { entries: rows.length, written: false, match: false, checksum };
  };

  if (backend.kind === PLANTON_MANAGED_KIND) {
    const [row] = await tx.select().from(stateObjects).where(eq(stateObjects.componentId, job.componentId)).for("update");
    if (opts.tail) checkLockHeld(row, jobId, opts.tail.lockId);
    const { state, used } = replay((row?.state as DeltaState | null) ?? null, rows, jobId, log);
    if (!row || !state || !used.length) {
      await drop();
      return { entries: rows.length, written: false, match: false };
    }
    const { checksum, size } = stateDigest(state);
    if (opts.checksum && checksum !== opts.checksum) return await mismatch(checksum);
    const current = row.lineage != null && row.serial != null && row.checksum ? { lineage: row.lineage, serial: row.serial, checksum: row.checksum } : null;
    const refusal = writeRefusal("this component's state", current, { lineage: state.lineage, serial: state.serial, checksum });
    if (refusal) {
      log(`job ${jobId}: ${used.length} state change(s) were not compacted: ${refusal}`);
      await drop();
      return { entries: rows.length, written: false, match: false, checksum };
    }
    const last = used.at(-1)!;
    await writeStateContent(tx, row, { state, serial: state.serial, lineage: state.lineage, checksum, size, jobId, attemptId: last.attemptId });
    await drop();
    return { entries: rows.length, written: true, match: used.length === rows.length, serial: state.serial, checksum };
  }

  const [c] = await tx
    .select({ id: infraComponents.id, name: infraComponents.name, stateKey: infraComponents.stateKey, environment: environments.name })
    .from(infraComponents)
    .innerJoin(environments, eq(environments.id, infraComponents.environmentId))
    .where(eq(infraComponents.id, job.componentId));
  const key = stateKeyOf(job.orgId, c, backend);
  return withBackend(tx, backend, async (store) => {
    const stored = await store.read(key);
    const base = stored ? (JSON.parse(Buffer.from(stored.bytes).toString("utf8")) as DeltaState) : null;
    const { state, used } = replay(base, rows, jobId, log);
    if (!state || !used.length) {
      await drop();
      return { entries: rows.length, written: false, match: false };
    }
    const { checksum } = stateDigest(state);
    if (opts.checksum && checksum !== opts.checksum) return await mismatch(checksum);
    // Written under the lock the runner held when it sent the changes (its store checks it is still held).
    await store.write(key, new Uint8Array(Buffer.from(JSON.stringify(state))), used.at(-1)!.lockId);
    await drop();
    return { entries: rows.length, written: true, match: used.length === rows.length, serial: state.serial, checksum };
  });
}

/** The addresses a job's journal holds changes for, oldest first (what a runner killed mid-apply had sent). */
export async function journaledAddresses(db: Queryable, jobId: string): Promise<string[]> {
  const rows = await db.select({ addresses: stateJournal.addresses }).from(stateJournal).where(eq(stateJournal.jobId, jobId)).orderBy(asc(stateJournal.attemptId), asc(stateJournal.step), asc(stateJournal.seq));
  return [...new Set(rows.flatMap((r) => r.addresses))];
}
