// Planton-managed state, served to Planton-hosted runners: one state object per component with an
// OpenTofu-style lock. A second locker gets 409 "Error acquiring the state lock" with the holder.
import { randomUUID } from "node:crypto";
import { eq } from "drizzle-orm";
import type { Database, Queryable } from "@/db/client";
import { runnerAttempts, runners, stateBackends, stateObjects } from "@/db/schema";
import { newId } from "@/lib/ids";
import { formatLockError, type LockInfo } from "@/lib/state-lock";
import { conflict, PlantonError } from "../../errors";
import { appendStateVersion, stateChecksum } from "../state/state-versions";
import { lockLiveJob, type JobAccess } from "./job-access";

export type LockResult = { ok: true; lock: LockInfo } | { ok: false; lock: LockInfo; message: string };

/**
 * The job's component state row (created empty on first use), locked for the transaction. Refuses a
 * backend that is not Planton-managed, and an attempt that no longer runs the job: a lock is held by
 * the job's current attempt, since replacing or ending an attempt releases what it held.
 */
async function stateRowFor(tx: Queryable, access: JobAccess) {
  const job = await lockLiveJob(tx, access);
  const [backend] = job.backendId ? await tx.select().from(stateBackends).where(eq(stateBackends.id, job.backendId)) : [];
  if (!backend || backend.kind !== "planton_managed") {
    throw new PlantonError(
      "PRECONDITION_FAILED",
      `Nothing was done: this job's state lives in backend ${backend?.name ?? "(none)"} (${backend?.kind ?? "unknown"}), not in Planton-managed storage. The runner reads and writes it there directly.`,
    );
  }
  const [runner] = await tx.select({ kind: runners.kind, name: runners.name }).from(runnerAttempts).innerJoin(runners, eq(runners.id, runnerAttempts.runnerId)).where(eq(runnerAttempts.id, access.attemptId));
  if (runner?.kind !== "hosted") {
    throw new PlantonError(
      "FORBIDDEN",
      `Nothing was done: Planton-managed state is available only to Planton-hosted runners, and ${runner?.name ?? "this runner"} is self-hosted. Move the organization's state to a backend of its own (planton infra state-backend move-off-planton --to <backend>), then run the job again.`,
    );
  }
  const key = `planton-managed/${job.orgId}/${job.componentId}/terraform.tfstate`;
  await tx.insert(stateObjects).values({ id: newId("stateObject"), orgId: job.orgId, componentId: job.componentId, backendId: backend.id, key }).onConflictDoNothing();
  const [row] = await tx.select().from(stateObjects).where(eq(stateObjects.componentId, job.componentId)).for("update");
  return row;
}

export async function lockState(db: Database, access: JobAccess, info: Partial<LockInfo> & { Operation?: string }): Promise<LockResult> {
  return db.transaction(async (tx) => {
    const row = await stateRowFor(tx, access);
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
  });
}

export async function unlockState(db: Database, access: JobAccess, id: string | null) {
  return db.transaction(async (tx) => {
    const row = await stateRowFor(tx, access);
    const held = row.lockInfo;
    if (!held) return { ok: true };
    if (held.ID !== id) {
      throw conflict(`Nothing was unlocked: lock ID ${id ?? "(none)"} does not match the existing lock ID ${held.ID}, held by ${held.Who} for ${held.Operation}.`);
    }
    await tx.update(stateObjects).set({ lockInfo: null, lockedByJob: null, updatedAt: new Date() }).where(eq(stateObjects.id, row.id));
    return { ok: true };
  });
}

export async function getState(db: Database, access: JobAccess): Promise<unknown | null> {
  return db.transaction(async (tx) => (await stateRowFor(tx, access)).state ?? null);
}

interface StateDoc {
  lineage?: string;
  serial?: number;
}

export async function putState(db: Database, access: JobAccess, lockId: string | null, state: unknown) {
  const doc = state as StateDoc;
  if (!doc || typeof doc !== "object" || typeof doc.lineage !== "string" || typeof doc.serial !== "number") {
    throw new PlantonError("BAD_REQUEST", "Nothing was written: the body is not a version-4 state (it needs lineage and serial).");
  }
  return db.transaction(async (tx) => {
    const row = await stateRowFor(tx, access);
    const held = row.lockInfo;
    if (!held || row.lockedByJob !== access.jobId || held.ID !== lockId) {
      throw conflict(
        held
          ? `Nothing was written: the state is locked with ID ${held.ID} by ${held.Who}, and this write names lock ID ${lockId ?? "(none)"}. Take the lock first.`
          : "Nothing was written: the state is not locked. Take the lock (POST …/state/lock) first.",
      );
    }
    if (row.lineage && row.lineage !== doc.lineage) {
      throw conflict(`Nothing was written: the state's lineage is ${row.lineage}, and this state's is ${doc.lineage}; they are different states. Refresh from the stored state and plan again.`);
    }
    if (row.serial != null && doc.serial! < row.serial) {
      throw conflict(`Nothing was written: the stored state is at serial ${row.serial}, newer than this state's serial ${doc.serial}. Refresh from the stored state and plan again.`);
    }
    const { checksum } = stateChecksum(state);
    // The version history keeps every content, appended with the write (nothing when the bytes are the same).
    await appendStateVersion(tx, row, { state, serial: doc.serial!, lineage: doc.lineage!, checksum, jobId: access.jobId, attemptId: access.attemptId });
    await tx.update(stateObjects).set({ state, lineage: doc.lineage, serial: doc.serial, checksum, updatedAt: new Date() }).where(eq(stateObjects.id, row.id));
    return { ok: true, serial: doc.serial, checksum };
  });
}
