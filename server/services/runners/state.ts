// A job's state, served to runners over the runner API whatever backend the component uses.
// Planton-managed state (one state object per component, with its versions) is reachable by
// Planton-hosted runners only; every other kind is opened here with its connection's credentials,
// so credentials never reach the runner. One set of write rules (state-backends/rules.ts) and one
// lock refusal ("Error acquiring the state lock" with the holder) for every kind.
import { randomUUID } from "node:crypto";
import { and, eq, isNull } from "drizzle-orm";
import type { Database, Queryable } from "@/db/client";
import { environments, infraComponents, runnerAttempts, runners, stateBackends, stateObjects } from "@/db/schema";
import { newId } from "@/lib/ids";
import { formatLockError, type LockInfo } from "@/lib/state-lock";
import { NO_STATE_IDENTITY, StateLockedError, StateWriteRefused, stateIdentity, writeRefusal } from "@/state-backends/rules";
import type { StateBackend } from "@/state-backends/rules";
import { conflict, PlantonError } from "../../errors";
import { accessErrorSentence } from "../state-backends/access-test";
import { withBackend, type BackendRow } from "../state-backends/open-store";
import { stateKeyOf } from "../state-backends/served";
import { dropStateJournal } from "../state/state-journal";
import { stateDigest } from "@/lib/state-delta";
import { writeStateContent } from "../state/state-versions";
import { lockLiveJob, type JobAccess } from "./job-access";

export type LockResult = { ok: true; lock: LockInfo } | { ok: false; lock: LockInfo; message: string };

/**
 * The job's backend and where its state lives there; checked under the job's row lock (the attempt still
 * runs it). A key-share lock: the job cannot end meanwhile, and its event uploads are not held back.
 */
async function jobBackend(tx: Queryable, access: JobAccess): Promise<{ backend: BackendRow | null; key: string; job: { orgId: string; componentId: string } }> {
  const job = await lockLiveJob(tx, access, "key share");
  const [backend] = job.backendId ? await tx.select().from(stateBackends).where(eq(stateBackends.id, job.backendId)) : [];
  const [c] = await tx
    .select({ id: infraComponents.id, name: infraComponents.name, stateKey: infraComponents.stateKey, environment: environments.name })
    .from(infraComponents)
    .innerJoin(environments, eq(environments.id, infraComponents.environmentId))
    .where(eq(infraComponents.id, job.componentId));
  return { backend: backend ?? null, key: stateKeyOf(job.orgId, c, backend ?? null), job };
}

/**
 * The job's component state row (created empty on first use), locked for the transaction. Refuses an
 * attempt that no longer runs the job (a lock is held by the job's current attempt, since replacing or
 * ending an attempt releases what it held) and a self-hosted runner.
 */
async function stateRowFor(tx: Queryable, access: JobAccess, target: Awaited<ReturnType<typeof jobBackend>>) {
  const { job, backend, key } = target;
  const [runner] = await tx.select({ kind: runners.kind, name: runners.name }).from(runnerAttempts).innerJoin(runners, eq(runners.id, runnerAttempts.runnerId)).where(eq(runnerAttempts.id, access.attemptId));
  if (runner?.kind !== "hosted") {
    throw new PlantonError(
      "FORBIDDEN",
      `Nothing was done: Planton-managed state is available only to Planton-hosted runners, and ${runner?.name ?? "this runner"} is self-hosted. Move the organization's state to a backend of its own (planton infra state-backend move-off-planton --to <backend>), then run the job again.`,
    );
  }
  await tx.insert(stateObjects).values({ id: newId("stateObject"), orgId: job.orgId, componentId: job.componentId, backendId: backend!.id, key }).onConflictDoNothing();
  const [row] = await tx.select().from(stateObjects).where(eq(stateObjects.componentId, job.componentId)).for("update");
  if (row.movedToBackendId) {
    throw conflict("Nothing was done: this component's state was moved off Planton-managed storage after the job was queued. Run the job again; it will use the new backend.");
  }
  return row;
}

/**
 * Runs `planton` inside a transaction on the Planton-managed row, or `other` with the job's backend
 * opened (outside any transaction: a remote store's latency never holds the job's row lock).
 */
async function onJobState<T>(
  db: Database,
  access: JobAccess,
  planton: (tx: Queryable, row: typeof stateObjects.$inferSelect) => Promise<T>,
  other: (backend: StateBackend, key: string) => Promise<T>,
): Promise<T> {
  let target: Awaited<ReturnType<typeof jobBackend>> | null = null;
  const result = await db.transaction(async (tx) => {
    const t = await jobBackend(tx, access);
    if (!t.backend) throw new PlantonError("PRECONDITION_FAILED", "Nothing was done: this job has no state backend. Set one on the component or a default in Settings → State Backends, then run the job again.");
    if (t.backend.kind !== "planton_managed") {
      target = t;
      return null;
    }
    return { value: await planton(tx, await stateRowFor(tx, access, t)) };
  });
  if (result) return result.value;
  const { backend, key } = target!;
  try {
    return await withBackend(db, backend!, (b) => other(b, key));
  } catch (e) {
    if (e instanceof StateWriteRefused) throw conflict(e.message);
    if (e instanceof PlantonError) throw e;
    // The backend failed (unreachable, refused the credentials, …): said in one sentence, as a refusal, never a 500.
    throw new PlantonError("PRECONDITION_FAILED", `Nothing was done with the state: backend ${backend!.name} (${backend!.kind}) failed: ${accessErrorSentence(e)}. Check the backend in Settings → State Backends, then retry.`);
  }
}

/** The lock info a job's attempt takes on a backend other than Planton-managed: its Info names the attempt, so a lock left by an ended attempt is known stale. */
const attemptMark = (access: JobAccess) => `planton job ${access.jobId} attempt ${access.attemptId}`;
const ATTEMPT_MARK = /^planton job (\S+) attempt (\S+)$/;

/** Whether `holder` was taken by an attempt that has ended (the runner died or was replaced), or by an earlier attempt of this job. */
async function staleHolder(db: Queryable, access: JobAccess, holder: LockInfo): Promise<boolean> {
  const m = ATTEMPT_MARK.exec(holder.Info ?? "");
  if (!m) return false;
  if (m[1] === access.jobId) return true;
  const [live] = await db.select({ id: runnerAttempts.id }).from(runnerAttempts).where(and(eq(runnerAttempts.id, m[2]), isNull(runnerAttempts.endedAt)));
  return !live;
}

export async function lockState(db: Database, access: JobAccess, info: Partial<LockInfo> & { Operation?: string }): Promise<LockResult> {
  return onJobState<LockResult>(
    db,
    access,
    async (tx, row) => {
      const held = row.lockInfo;
      if (held) {
        if (row.lockedByJob === access.jobId && (!info.ID || info.ID === held.ID)) return { ok: true, lock: held };
        return { ok: false, lock: held, message: formatLockError(held) };
      }
      const lock: LockInfo = {
        ID: info.ID || randomUUID(),
        Path: info.Path || row.key,
        Operation: info.Operation || "OperationTypeApply",
        Who: info.Who || `job ${access.jobId}`,
        Version: info.Version || "",
        Created: info.Created || new Date().toISOString(),
        Info: info.Info ?? "",
      };
      await tx.update(stateObjects).set({ lockInfo: lock, lockedByJob: access.jobId, updatedAt: new Date() }).where(eq(stateObjects.id, row.id));
      return { ok: true, lock };
    },
    async (backend, key) => {
      const request = { ...info, Operation: info.Operation || "OperationTypeApply", Who: info.Who || `job ${access.jobId}`, Info: attemptMark(access) };
      try {
        return { ok: true, lock: await backend.lock(key, request) };
      } catch (e) {
        if (!(e instanceof StateLockedError)) throw e;
        if (info.ID && e.holder.ID === info.ID && e.holder.Info === request.Info) return { ok: true, lock: e.holder };
        // A lock left by an attempt that ended (its runner was killed mid-apply) is released, as the job's own records show it stale.
        if (!(await staleHolder(db, access, e.holder))) return { ok: false, lock: e.holder, message: e.message };
        await backend.forceUnlock(key);
        return { ok: true, lock: await backend.lock(key, request) };
      }
    },
  );
}

export async function unlockState(db: Database, access: JobAccess, id: string | null) {
  return onJobState(
    db,
    access,
    async (tx, row) => {
      const held = row.lockInfo;
      if (!held) return { ok: true };
      if (held.ID !== id) {
        throw conflict(`Nothing was unlocked: lock ID ${id ?? "(none)"} does not match the existing lock ID ${held.ID}, held by ${held.Who} for ${held.Operation}.`);
      }
      await tx.update(stateObjects).set({ lockInfo: null, lockedByJob: null, updatedAt: new Date() }).where(eq(stateObjects.id, row.id));
      return { ok: true };
    },
    async (backend, key) => {
      const held = await backend.store.lockHolder(key);
      if (!held) return { ok: true };
      if (held.ID !== id) {
        throw conflict(`Nothing was unlocked: lock ID ${id ?? "(none)"} does not match the existing lock ID ${held.ID}, held by ${held.Who} for ${held.Operation}.`);
      }
      await backend.unlock(key, held.ID);
      return { ok: true };
    },
  );
}

export async function getState(db: Database, access: JobAccess): Promise<unknown | null> {
  return onJobState(
    db,
    access,
    async (_tx, row) => row.state ?? null,
    async (backend, key) => {
      const stored = await backend.read(key);
      return stored ? (JSON.parse(Buffer.from(stored.bytes).toString("utf8")) as unknown) : null;
    },
  );
}


export async function putState(db: Database, access: JobAccess, lockId: string | null, state: unknown) {
  // An OpenTofu v4 state, or a Pulumi checkpoint (the Pulumi adapter's stack export): the identity the write rules compare.
  const identity = stateIdentity(state);
  if (!identity) throw new PlantonError("BAD_REQUEST", NO_STATE_IDENTITY);
  return onJobState(
    db,
    access,
    async (tx, row) => {
      const held = row.lockInfo;
      if (!held || row.lockedByJob !== access.jobId || held.ID !== lockId) {
        throw conflict(
          held
            ? `Nothing was written: the state is locked with ID ${held.ID} by ${held.Who}, and this write names lock ID ${lockId ?? "(none)"}. Take the lock first.`
            : "Nothing was written: the state is not locked. Take the lock (POST …/state/lock) first.",
        );
      }
      const { checksum, size } = stateDigest(state);
      const current = row.lineage != null && row.serial != null && row.checksum ? { lineage: row.lineage, serial: row.serial, checksum: row.checksum } : null;
      const refusal = writeRefusal("this component's state", current, { ...identity, checksum });
      if (refusal) throw conflict(refusal);
      // The version history keeps every content, appended with the write (nothing when the bytes are the same).
      await writeStateContent(tx, row, { state, ...identity, checksum, size, jobId: access.jobId, attemptId: access.attemptId });
      await dropStateJournal(tx, access.jobId);
      return { ok: true, serial: identity.serial, checksum };
    },
    async (backend, key) => {
      if (!lockId) throw conflict("Nothing was written: the write names no lock ID. Take the lock (POST …/state/lock) first.");
      const stored = await backend.write(key, new Uint8Array(Buffer.from(JSON.stringify(state))), lockId);
      await dropStateJournal(db, access.jobId);
      return { ok: true, serial: stored.serial, checksum: stored.checksum };
    },
  );
}
