// Sends apply's state changes (lib/state-delta.ts) to the console as resources complete, the way the
// event uploader sends events: a change goes out as soon as no upload is in flight, and what arrives
// during one goes in the next. Numbered from 1 within the step, so a batch sent again (the server did not
// answer) is kept once. The step's end flushes, then asks the console to compact them (commit).
import type { StateChange } from "../engine/index";
import type { StateJournalBatch } from "../lib/state-delta";

export interface StateJournalOptions {
  step: StateJournalBatch["step"];
  lockId: string;
  /** Sends one batch; resolves when the console kept it. */
  send: (batch: StateJournalBatch) => Promise<unknown>;
  /** Pause before a failed batch is sent again in the background. */
  retryMs?: number;
  maxBatch?: number;
}

export class StateJournalUploader {
  private seq = 0;
  private pending: StateJournalBatch["entries"] = [];
  private sending: Promise<void> | undefined;
  private retry: NodeJS.Timeout | undefined;
  /** Requests sent that the console kept. */
  batches = 0;

  /** Changes queued so far. */
  get changes(): number {
    return this.seq;
  }

  constructor(private readonly opts: StateJournalOptions) {}

  /** Queues a change; it goes out as soon as the uploader is idle. */
  add(change: StateChange): void {
    this.pending.push({ seq: ++this.seq, baseSerial: change.baseSerial, delta: change.delta });
    if (!this.sending && !this.retry) void this.background();
  }

  /** Sends everything queued; rejects (keeping it queued) when the console cannot be reached. */
  async flush(): Promise<void> {
    while (this.sending || this.pending.length) {
      if (this.sending) await this.sending.catch(() => undefined);
      else {
        this.clearRetry();
        await this.sendOne();
      }
    }
    this.clearRetry();
  }

  private clearRetry(): void {
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
  }

  private async background(): Promise<void> {
    try {
      while (this.pending.length) await this.sendOne();
    } catch {
      this.retry ??= setTimeout(() => {
        this.retry = undefined;
        void this.background();
      }, this.opts.retryMs ?? 500);
      this.retry.unref?.();
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
