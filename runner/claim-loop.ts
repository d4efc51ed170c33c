// Keeps up to `capacity` jobs running: long-polls for work while there is room.
import { untilFirstOrAborted, sleep } from "./abort";
import { HttpError, type RunnerClient } from "./client";
import type { EngineVersions } from "./engines/detect";
import { runJob, type JobRunOptions, type JobRunResult } from "./job-run";
import { silentLogger, type Logger } from "./log";

export interface ClaimLoopOptions {
  runner: RunnerClient;
  capacity: number;
  workRoot: string;
  log?: Logger;
  /** Long-poll wait the runner asks for (seconds). */
  waitSeconds?: number;
  version?: string;
  /** The engines this runner has (detectEngines), sent with every claim. */
  engines?: EngineVersions;
  job?: Partial<Pick<JobRunOptions, "heartbeatMs" | "env" | "keepWorkspace">>;
  /** Called after each job run ends. */
  onJobEnd?: (jobId: string, result: JobRunResult) => void;
}

export class ClaimLoop {
  private readonly running = new Map<string, Promise<void>>();
  private readonly stopping = new AbortController();
  private readonly hardStop = new AbortController();
  private readonly log: Logger;
  private loop: Promise<void> | undefined;

  constructor(private readonly opts: ClaimLoopOptions) {
    this.log = opts.log ?? silentLogger;
  }

  get activeJobs(): number {
    return this.running.size;
  }

  /** Resolves when the loop has stopped (after `stop`) and rejects when the server refuses the runner token. */
  start(): Promise<void> {
    this.loop ??= this.run();
    return this.loop;
  }

  /** Stops claiming, lets in-flight steps finish for up to `graceMs`, then tells them to stop; resolves when every attempt has ended. */
  async stop(graceMs = 30_000): Promise<void> {
    if (!this.stopping.signal.aborted) {
      this.log.info("stopping: no new claims; in-flight steps may finish", { activeJobs: this.running.size, graceMs });
      this.stopping.abort();
    }
    const grace = setTimeout(() => {
      if (this.running.size) this.log.warn("grace period over: telling in-flight steps to stop", { activeJobs: this.running.size });
      this.hardStop.abort();
    }, graceMs);
    try {
      await this.loop?.catch(() => {});
      await Promise.all(this.running.values());
    } finally {
      clearTimeout(grace);
    }
  }

  private async run(): Promise<void> {
    // Claims that failed in a row: the first is logged, the rest wait quietly with back-off (a restarting server is not news every second).
    let failures = 0;
    let downSince = 0;
    while (!this.stopping.signal.aborted) {
      const free = this.opts.capacity - this.running.size;
      if (free <= 0) {
        await untilFirstOrAborted([...this.running.values()], this.stopping.signal);
        continue;
      }
      try {
        const claim = await this.opts.runner.claim({ capacity: free, waitSeconds: this.opts.waitSeconds ?? 25, version: this.opts.version, engines: this.opts.engines }, this.stopping.signal);
        if (failures) this.log.info("the server answers again; claiming", { failedClaims: failures, downSeconds: Math.round((Date.now() - downSince) / 1000) });
        failures = 0;
        if (!claim) continue;
        if (this.stopping.signal.aborted) this.log.warn("claimed a job while stopping; running it", { job: claim.job.id });
        const jobId = claim.job.id;
        const p = runJob(claim, {
          runner: this.opts.runner,
          workRoot: this.opts.workRoot,
          log: this.log,
          stopping: this.stopping.signal,
          hardStop: this.hardStop.signal,
          ...this.opts.job,
        })
          .then((r) => this.opts.onJobEnd?.(jobId, r))
          .catch((err) => this.log.error("job run crashed", { job: jobId, error: String(err) }))
          .finally(() => this.running.delete(`${jobId}/${claim.attemptId}`));
        this.running.set(`${jobId}/${claim.attemptId}`, p);
      } catch (err) {
        if (this.stopping.signal.aborted) break;
        if (err instanceof HttpError && (err.status === 401 || err.status === 403)) {
          this.log.error("the server refused this runner's token; stopping", { status: err.status, error: err.message });
          this.stopping.abort();
          const why = err.said?.replace(/^Nothing was done: /, "") ?? "check the token in Settings → Runners, then start the runner again.";
          throw new Error(`The server refused the runner token (${err.status}): ${why}`);
        }
        // Connection refused, a timeout or a 5xx: the server is restarting or away. Wait and claim again.
        if (++failures === 1) {
          downSince = Date.now();
          this.log.warn("the server is unreachable; claiming again with back-off until it answers", { error: errorWords(err) });
        }
        const backoff = Math.min(MAX_BACKOFF_MS, 500 * 2 ** Math.min(failures, 5));
        await sleep(backoff / 2 + Math.random() * (backoff / 2), this.stopping.signal);
      }
    }
  }
}

const MAX_BACKOFF_MS = 15_000;

/** "ECONNREFUSED", "POST /claim answered 503: …": what went wrong, without a stack. */
function errorWords(err: unknown): string {
  if (err instanceof HttpError) return err.message;
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}

