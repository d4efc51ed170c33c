// Numbers progress events from 1 per attempt and uploads them in order, promptly: an event goes out
// as soon as no upload is in flight, and what arrives during one goes in the next (at most maxBatch).
// A failed batch is sent again with the same seq numbers, so the server can drop what it already has.
import type { RunnerEventType, StepName, UploadedEvent } from "../lib/runner-protocol";

export interface EventDraft {
  /** Only what runners produce: job_status and operation_status are the server's own. */
  type: RunnerEventType;
  payload: Record<string, unknown>;
}

export interface EventUploaderOptions {
  /** Sends one batch; resolves when the server accepted it. */
  send: (events: UploadedEvent[]) => Promise<unknown>;
  maxBatch?: number;
  /** Applied to every payload before it is queued (masks secrets). */
  redact?: (payload: Record<string, unknown>) => Record<string, unknown>;
  onError?: (err: unknown, batch: UploadedEvent[]) => void;
  /** Pause between retries of a failed batch during background flushing. */
  retryMs?: number;
}

/**
 * Events in one upload at most. Large, so a burst (a plan's lines, a walk's completions) goes up in one
 * request rather than queueing behind several: the console stores a batch in one statement.
 */
export const EVENTS_PER_UPLOAD = 1000;

export class EventUploader {
  private seq = 0;
  private pending: UploadedEvent[] = [];
  private retry: NodeJS.Timeout | undefined;
  private scheduled = false;
  private sending: Promise<void> | undefined;
  private closed = false;
  private readonly maxBatch: number;

  constructor(private readonly opts: EventUploaderOptions) {
    this.maxBatch = opts.maxBatch ?? EVENTS_PER_UPLOAD;
  }

  /** The last seq handed out. */
  get lastSeq(): number {
    return this.seq;
  }

  get queued(): number {
    return this.pending.length;
  }

  /**
   * Queues an event. It goes out as soon as the uploader is idle (events emitted in the same tick go
   * together); events that arrive while an upload is in flight go in the next one.
   */
  emit(operation: StepName | null, draft: EventDraft): void {
    if (this.closed) throw new Error("event uploader is closed");
    const payload = this.opts.redact ? this.opts.redact(draft.payload) : draft.payload;
    this.pending.push({ seq: ++this.seq, ts: new Date().toISOString(), operation, type: draft.type, payload });
    if (!this.sending && !this.retry && !this.scheduled) {
      this.scheduled = true;
      queueMicrotask(() => {
        this.scheduled = false;
        void this.background();
      });
    }
  }

  /** Sends everything queued so far; rejects (keeping the events queued) when the server cannot be reached. */
  async flush(): Promise<void> {
    this.clearRetry();
    while (this.pending.length > 0) await this.sendOne();
  }

  /** Flushes and refuses further events. */
  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
  }

  private clearRetry(): void {
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
  }

  /** Sends until nothing is queued: each upload takes everything that arrived during the one before. */
  private async background(): Promise<void> {
    this.clearRetry();
    try {
      while (this.pending.length > 0) await this.sendOne();
    } catch {
      // Keep the batch; try again later with the same seq numbers.
      if (!this.closed && this.pending.length > 0) this.retry ??= setTimeout(() => void this.background(), this.opts.retryMs ?? 1000);
    }
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
