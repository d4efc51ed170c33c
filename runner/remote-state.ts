// engine's StateBackend over the runner API's state routes (the Planton-managed backend).
import { randomUUID } from "node:crypto";
import os from "node:os";
import { ENGINE_VERSION, StateLockedError, type LockInfo, type StateBackend, type StateV4 } from "../engine/index";
import { EngineError } from "../engine/index";
import type { JobClient } from "./client";
import { journalLine, stateDigest, type StateJournalBatch, type StateJournalCommitResult } from "../lib/state-delta";
import { StateJournalUploader } from "./state-journal";
import type { PulumiCheckpoint } from "../state-backends/rules";

export class RemoteStateBackend implements StateBackend {
  private heldLockId: string | undefined;

  constructor(
    private readonly job: JobClient,
    private readonly defaults: { path: string; who?: string; info?: string },
  ) {}

  get lockId(): string | undefined {
    return this.heldLockId;
  }

  async lock(req: Partial<LockInfo> & { Operation: string }): Promise<LockInfo> {
    const info: LockInfo = {
      ID: req.ID ?? randomUUID(),
      Path: req.Path ?? this.defaults.path,
      Operation: req.Operation,
      Who: req.Who ?? this.defaults.who ?? `planton-runner@${os.hostname()}`,
      Version: req.Version ?? ENGINE_VERSION,
      Created: req.Created ?? new Date().toISOString(),
      Info: req.Info ?? this.defaults.info ?? "",
    };
    const res = await this.job.lockState(info);
    if (!res.ok) throw new StateLockedError(res.lock);
    this.heldLockId = info.ID;
    return info;
  }

  async unlock(id: string): Promise<void> {
    await this.job.unlockState(id);
    if (this.heldLockId === id) this.heldLockId = undefined;
  }

  get(): Promise<StateV4 | null> {
    return this.job.getState();
  }

  /** The whole state, under the lock held now: an OpenTofu v4 state, or a Pulumi checkpoint (the Pulumi adapter's). */
  async put(state: StateV4 | PulumiCheckpoint): Promise<void> {
    if (!this.heldLockId) throw new EngineError("Error writing state: the runner does not hold the state lock; nothing was written.");
    await this.job.putState(state, this.heldLockId);
  }

  /** An uploader of the step's state changes, sent under the lock held now. */
  journal(step: StateJournalBatch["step"]): StateJournalUploader {
    if (!this.heldLockId) throw new EngineError("Error writing state: the runner does not hold the state lock; nothing was written.");
    return new StateJournalUploader({ step, lockId: this.heldLockId, send: (batch) => this.job.uploadStateJournal(batch) });
  }

  /**
   * Ends a step's changes: the ones not yet sent go with the commit (one request, not a last batch and then
   * the commit), and the console compacts them all into one state write checked against `final` (the engine's
   * state). When the console's result differs, or the changes could not be sent, the whole state is written instead.
   */
  async commitJournal(step: StateJournalBatch["step"], journal: StateJournalUploader, final: StateV4 | null, log: (line: string) => void): Promise<void> {
    const unsent = (err: unknown) => log(`The state changes could not be sent (${err instanceof Error ? err.message : String(err)}); writing the whole state instead.`);
    let rest: StateJournalBatch["entries"];
    try {
      rest = await journal.takeRest();
    } catch (err) {
      if (!final) throw err;
      unsent(err);
      return this.put(final);
    }
    const checksum = final ? stateDigest(final).checksum : undefined;
    let res: StateJournalCommitResult;
    try {
      res = await this.job.commitStateJournal({ step, ...(checksum ? { checksum } : {}), ...(rest.length ? { lockId: journal.lockId, entries: rest } : {}) });
    } catch (err) {
      if (!final || !rest.length) throw err;
      unsent(err);
      return this.put(final);
    }
    if (rest.length) journal.batches++;
    if (res.written) log(journalLine(journal.changes, journal.batches, res.serial));
    if (final && !res.match) {
      log(`The console's state compacted from ${res.entries} change(s) does not match the engine's (checksum ${res.checksum ?? "none"}, engine ${checksum}); writing the whole state instead.`);
      await this.put(final);
    }
  }
}

/** Runs `fn` holding the state lock, and always releases it. */
export async function withStateLock<T>(backend: StateBackend, operation: string, fn: () => Promise<T>): Promise<T> {
  const lock = await backend.lock({ Operation: operation });
  try {
    return await fn();
  } finally {
    await backend.unlock(lock.ID);
  }
}
