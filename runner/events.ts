// Batches progress events, numbers them from 1 per attempt, and uploads them in order. A failed
// batch is sent again with the same seq numbers, so the server can drop what it already has.
import type { RunnerEventType, StepName, UploadedEvent } from "../lib/runner-protocol";

export interface EventDraft {
  /** Only what runners produce: job_status and operation_status are the server's own. */
  type: RunnerEventType;
  payload: Record<string, unknown>;
}

export interface EventUploaderOptions {
  /** Sends one batch; resolves when the server accepted it. */
  send: (events: UploadedEvent[]) => Promise<unknown>;
  flushMs?: number;
  maxBatch?: number;
  /** Applied to every payload before it is queued (masks secrets). */
  redact?: (payload: Record<string, unknown>) => Record<string, unknown>;
  onError?: (err: unknown, batch: UploadedEvent[]) => void;
  /** Pause between retries of a failed batch during background flushing. */
  retryMs?: number;
}

export class EventUploader {
  private seq = 0;
  private pending: UploadedEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> | undefined;
  private closed = false;
  private readonly flushMs: number;
  private readonly maxBatch: number;

  constructor(private readonly opts: EventUploaderOptions) {
    this.flushMs = opts.flushMs ?? 200;
    this.maxBatch = opts.maxBatch ?? 100;
  }

  /** The last seq handed out. */
  get lastSeq(): number {
    return this.seq;
  }

  get queued(): number {
    return this.pending.length;
  }

  emit(operation: StepName | null, draft: EventDraft): void {
    if (this.closed) throw new Error("event uploader is closed");
    const payload = this.opts.redact ? this.opts.redact(draft.payload) : draft.payload;
    this.pending.push({ seq: ++this.seq, ts: new Date().toISOString(), operation, type: draft.type, payload });
    if (this.pending.length >= this.maxBatch) void this.background();
    else this.timer ??= setTimeout(() => void this.background(), this.flushMs);
  }

  /** Sends everything queued so far; rejects (keeping the events queued) when the server cannot be reached. */
  async flush(): Promise<void> {
    this.clearTimer();
    while (this.pending.length > 0) await this.sendOne();
  }

  /** Flushes and refuses further events. */
  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async background(): Promise<void> {
    this.clearTimer();
    try {
      while (this.pending.length >= this.maxBatch) await this.sendOne();
      if (this.pending.length > 0) await this.sendOne();
    } catch (err) {
      // Keep the batch; try again later with the same seq numbers.
      if (!this.closed && this.pending.length > 0) this.timer ??= setTimeout(() => void this.background(), this.opts.retryMs ?? 1000);
    }
    if (this.pending.length > 0 && !this.timer) this.timer = setTimeout(() => void this.background(), this.flushMs);
  }

  /** One batch at a time, in order. */
  private sendOne(): Promise<void> {
    if (this.sending) return this.sending;
    const batch = this.pending.slice(0, this.maxBatch);
    if (batch.length === 0) return Promise.resolve();
    this.sending = (async () => {
      try {
        await this.opts.send(batch);
        const through = batch.at(-1)!.seq;
        this.pending = this.pending.filter((e) => e.seq > through);
      } catch (err) {
        this.opts.onError?.(err, batch);
        throw err;
      } finally {
        this.sending = undefined;
      }
    })();
    return this.sending;
  }
}
