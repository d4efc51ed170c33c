// A job's and a step's reasons, worded once: the lifecycle writes them, and the console reads the
// job's failure reason back to tell a step's error from a reason of the job's own.
export const REASONS = {
  cancelledBy: (who: string | null) => `cancelled by ${who ?? "a user"}`,
  cancelledWhile: (who: string, status: string) => `Cancelled by ${who} while ${status === "queued" ? "queued" : "waiting for approval"}; nothing more ran.`,
  cancelledRest: (who: string | null) => `Cancelled by ${who ?? "a user"}; the remaining operations did not run.`,
  cancelledAfter: (who: string | null, step: string, result: string) => `Cancelled by ${who ?? "a user"}: ${step} finished (${result}); the remaining operations did not run.`,
  cancelTooLate: (who: string | null, step: string) =>
    `Succeeded: the cancel asked for by ${who ?? "a user"} came too late; ${step}, the last operation, was already running and finished, so there was nothing left to stop.`,
  earlierFailed: (step: string) => `${step} failed`,
  stepFailed: (step: string, reason: string | null | undefined) => `${step} failed: ${reason ?? "see its log"}`,
  runnerRevokedBeforeRun: (runner: string, who: string, status: string) =>
    `Cancelled: runner ${runner}, where this job was routed, was revoked by ${who} while the job was ${status === "queued" ? "queued" : "waiting for approval"}; nothing more ran. Run it again (planton infra job rerun) to route it anew.`,
  heldByStateMove: (moveId: string) => `Waiting: this component's state is being moved to another backend (state move ${moveId}); the job runs when the move releases it, against the new backend.`,
  awaitingApproval: (sha256: string | undefined, next: string | undefined) => `Waiting for approval of the plan (sha256 ${sha256 ?? "unknown"}) before ${next ?? "the next step"}.`,
};
