// Sends apply's state changes (lib/state-delta.ts) to the console as resources complete: the first of a
// burst waits JOURNAL_GATHER_MS for the ones after it, then a batch goes out whenever no upload is in
// flight, and what arrives during one goes in the next. Numbered from 1 within the step, so a batch sent
// again (the server did not answer) is kept once. The step's end hands what is left to the commit.
import type { StateChange } from "../engine/index";
import { JOURNAL_ENTRIES_MOST, type StateJournalBatch } from "../lib/state-delta";

/**
 * How long the first change of a burst waits for the ones after it before it is sent. A runner killed
 * mid-apply loses nothing that finished more than a second before (the journal's promise), and a short
 * apply's changes then all go with its commit: no batch request, and no commit waiting for a batch in flight
 * (on a busy runner that wait was 15–100 ms of a 151-resource apply's commit, measured).
 */
export const JOURNAL_GATHER_MS = 200;

export interface StateJournalOptions {
  step: StateJournalBatch["step"];
  lockId: string;
  /** Sends one batch; resolves when the console kept it. */
  send: (batch: StateJournalBatch) => Promise<unknown>;
  /** Pause before a failed batch is sent again in the background. */
  retryMs?: number;
  /** The first change's wait for others (JOURNAL_GATHER_MS). */
  gatherMs?: number;
  maxBatch?: number;
}

export class StateJournalUploader {
  private seq = 0;
  private pending: StateJournalBatch["entries"] = [];
  private sending: Promise<void> | undefined;
  /** A send waiting on its timer: the first changes gathering, or a failed batch's retry. */
  private later: NodeJS.Timeout | undefined;
  /** Set while takeRest hands the queue over. */
  private handing = false;
  /** Requests sent that the console kept. */
  batches = 0;

  /** Changes queued so far. */
  get changes(): number {
    return this.seq;
  }

  constructor(private readonly opts: StateJournalOptions) {}

  /** Queues a change; it goes out with the next batch, or after the gathering wait when none is under way. */
  add(change: StateChange): void {
    this.pending.push({ seq: ++this.seq, baseSerial: change.baseSerial, delta: change.delta });
    if (!this.sending && !this.later && !this.handing) this.sendLater(this.opts.gatherMs ?? JOURNAL_GATHER_MS);
  }

  /** The lock the changes are made under. */
  get lockId(): string {
    return this.opts.lockId;
  }

  /**
   * The changes not yet sent, taken out to go with the step's commit (one request rather than a last batch
   * and then the commit): an upload in flight ends first, and a tail longer than `most` is sent as batches.
   */
  async takeRest(most = JOURNAL_ENTRIES_MOST): Promise<StateJournalBatch["entries"]> {
    // The background loop sends nothing more meanwhile: what is queued now goes with the commit.
    this.handing = true;
    try {
      if (this.sending) await this.sending.catch(() => undefined);
      this.clearLater();
      while (this.pending.length > most) await this.sendOne();
      const rest = this.pending;
      this.pending = [];
      return rest;
    } finally {
      this.handing = false;
    }
  }

  /** Sends everything queued; rejects (keeping it queued) when the console cannot be reached. */
  async flush(): Promise<void> {
    while (this.sending || this.pending.length) {
      if (this.sending) await this.sending.catch(() => undefined);
      else {
        this.clearLater();
        await this.sendOne();
      }
    }
    this.clearLater();
  }

  private clearLater(): void {
    if (this.later) clearTimeout(this.later);
    this.later = undefined;
  }

  private sendLater(ms: number): void {
    this.later ??= setTimeout(() => {
      this.later = undefined;
      void this.background();
    }, ms);
    this.later.unref?.();
  }

  private async background(): Promise<void> {
    try {
      while (this.pending.length && !this.handing) await this.sendOne();
    } catch {
      this.sendLater(this.opts.retryMs ?? 500);
    }
  }

  private sendOne(): Promise<void> {
    if (this.sending) return this.sending;
    const entries = this.pending.slice(0, this.opts.maxBatch ?? 500);
    this.sending = (async () => {
      try {
        await this.opts.send({ step: this.opts.step, lockId: this.opts.lockId, entries });
        this.batches++;
        const through = entries.at(-1)!.seq;
        this.pending = this.pending.filter((e) => e.seq > through);
      } finally {
        this.sending = undefined;
      }
    })();
    return this.sending;
  }
}
