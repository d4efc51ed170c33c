import { describe, expect, it } from "vitest";
import { isOperation, OPERATIONS, unknownOperationMessage } from "@/lib/runner-protocol";
import { PLATFORM_DEFAULT } from "@/lib/flow-control";
import {
  ALL_PHASES,
  IllegalTransitionError,
  JOB_EVENTS,
  STEP_EVENTS,
  afterStep,
  approvalGatesChanges,
  jobActions,
  PREVIEW_KEPT_FOR_APPROVAL,
  jobTransition,
  planFailedPreflight,
  planJob,
  stepTransition,
  type Phase,
} from "./lifecycle";

const p = (s: string): Phase => {
  const [status, result] = s.split("/");
  return { status, result } as Phase;
};
const names = (plan: ReturnType<typeof planJob>) => plan.steps.map((s) => (s.result === "skipped" ? `(${s.step})` : s.step) + (s.pauseAfter ? "|" : ""));

describe("job steps per operation, edited by flow control", () => {
  it("follow the architecture's table with the platform default policy", () => {
    const table = Object.fromEntries(OPERATIONS.map((op) => [op, names(planJob(op, PLATFORM_DEFAULT))]));
    expect(table).toEqual({
      refresh: ["init", "refresh"],
      preview: ["init", "refresh", "preview"],
      update: ["init", "refresh", "preview", "apply"],
      destroy_preview: ["init", "refresh", "preview"],
      destroy: ["init", "refresh", "preview", "destroy"],
      import: ["init", "import", "refresh"],
    });
    for (const op of OPERATIONS) expect(planJob(op, PLATFORM_DEFAULT).initial).toEqual(p("queued/tbd"));
  });

  it("skip_refresh marks refresh skipped with the reason, and keeps it in the list", () => {
    const plan = planJob("update", { ...PLATFORM_DEFAULT, skipRefresh: true });
    expect(names(plan)).toEqual(["init", "(refresh)", "preview", "apply"]);
    expect(plan.steps[1]).toMatchObject({ status: "completed", result: "skipped", reason: "skip_refresh is on in the flow-control policy" });
    expect(names(planJob("import", { ...PLATFORM_DEFAULT, skipRefresh: true }))).toEqual(["init", "import", "(refresh)"]);
  });

  it("preview_before_apply off drops preview from update and destroy only", () => {
    const off = { ...PLATFORM_DEFAULT, previewBeforeApply: false };
    expect(names(planJob("update", off))).toEqual(["init", "refresh", "apply"]);
    expect(names(planJob("destroy", off))).toEqual(["init", "refresh", "destroy"]);
    expect(names(planJob("preview", off))).toEqual(["init", "refresh", "preview"]);
    expect(names(planJob("destroy_preview", off))).toEqual(["init", "refresh", "preview"]);
  });

  it("manual_start holds the job in awaiting_approval before anything runs", () => {
    for (const op of OPERATIONS) expect(planJob(op, { ...PLATFORM_DEFAULT, manualStart: true }).initial).toEqual(p("awaiting_approval/tbd"));
  });

  it("pause_before_apply pauses after the preview of an update or destroy, nowhere else", () => {
    const pause = { ...PLATFORM_DEFAULT, pauseBeforeApply: true };
    expect(names(planJob("update", pause))).toEqual(["init", "refresh", "preview|", "apply"]);
    expect(names(planJob("destroy", pause))).toEqual(["init", "refresh", "preview|", "destroy"]);
    expect(names(planJob("preview", pause))).toEqual(["init", "refresh", "preview"]);
    expect(names(planJob("destroy_preview", pause))).toEqual(["init", "refresh", "preview"]);
    expect(names(planJob("import", pause))).toEqual(["init", "import", "refresh"]);
    // An approval is bound to a plan: the pause keeps the preview that preview_before_apply would drop.
    const kept = planJob("update", { ...pause, previewBeforeApply: false });
    expect(names(kept)).toEqual(["init", "refresh", "preview|", "apply"]);
    expect(kept.steps[2]!.reason).toBe(PREVIEW_KEPT_FOR_APPROVAL);
    expect(names(planJob("destroy", { ...pause, previewBeforeApply: false }))).toEqual(["init", "refresh", "preview|", "destroy"]);
  });

  it("no combination of the five toggles reaches an apply or destroy without a paused preview before it when pause_before_apply is on", () => {
    const bools = [false, true];
    for (const manualStart of bools) for (const skipRefresh of bools) for (const previewBeforeApply of bools) for (const pauseBeforeApply of bools) for (const protectDeletes of bools) {
      const policy = { manualStart, skipRefresh, previewBeforeApply, pauseBeforeApply, protectDeletes };
      for (const op of ["update", "destroy"] as const) {
        const steps = planJob(op, policy).steps;
        const change = steps.findIndex((s) => s.step === "apply" || s.step === "destroy");
        expect(change, `${op} ${JSON.stringify(policy)}`).toBeGreaterThan(0);
        expect(approvalGatesChanges(op, policy)).toBe(pauseBeforeApply);
        if (pauseBeforeApply) expect(steps[change - 1], `${op} ${JSON.stringify(policy)}`).toMatchObject({ step: "preview", pauseAfter: true, status: "queued" });
        else expect(steps.some((s) => s.pauseAfter)).toBe(false);
      }
    }
  });

  it("a failed preflight ends the job failed with every step skipped", () => {
    const plan = planFailedPreflight("update", PLATFORM_DEFAULT);
    expect(plan.initial).toEqual(p("completed/failed"));
    expect(plan.steps.every((s) => s.status === "completed" && s.result === "skipped")).toBe(true);
  });

  it("knows the operations and refuses any other with the valid ones named", () => {
    for (const op of OPERATIONS) expect(isOperation(op)).toBe(true);
    expect(isOperation("apply")).toBe(false);
    expect(unknownOperationMessage("apply")).toBe('Unknown Operation "apply": use one of refresh, preview, update, destroy, destroy_preview, import. No job was created.');
  });
});

describe("job transitions", () => {
  const legal: Record<string, string> = {
    "queued/tbd claim": "running/tbd",
    "queued/tbd cancel": "completed/cancelled",
    "running/tbd requeue": "queued/tbd",
    "running/tbd pause": "awaiting_approval/tbd",
    "running/tbd succeed": "completed/succeeded",
    "running/tbd fail": "completed/failed",
    "running/tbd finish_cancelled": "completed/cancelled",
    "awaiting_approval/tbd approve": "queued/tbd",
    "awaiting_approval/tbd cancel": "completed/cancelled",
  };

  it("allow exactly the listed moves; every other (phase, event) pair is one IllegalTransitionError", () => {
    let checked = 0;
    for (const from of ALL_PHASES) {
      for (const event of JOB_EVENTS) {
        const k = `${from.status}/${from.result} ${event}`;
        checked++;
        if (legal[k]) expect(jobTransition(from, event), k).toEqual(p(legal[k]));
        else {
          const err = (() => {
            try {
              jobTransition(from, event);
            } catch (e) {
              return e;
            }
          })();
          expect(err, k).toBeInstanceOf(IllegalTransitionError);
          expect((err as Error).message).toBe(`A job that is ${from.status}/${from.result} cannot ${event}.`);
        }
      }
    }
    expect(checked).toBe(20 * JOB_EVENTS.length);
  });

  it("never leave completed", () => {
    for (const from of ALL_PHASES.filter((x) => x.status === "completed")) for (const e of JOB_EVENTS) expect(() => jobTransition(from, e)).toThrow(IllegalTransitionError);
  });
});

describe("step transitions", () => {
  const legal: Record<string, string> = {
    "queued/tbd start": "running/tbd",
    "queued/tbd skip": "completed/skipped",
    "queued/tbd cancel": "completed/cancelled",
    "running/tbd succeed": "completed/succeeded",
    "running/tbd fail": "completed/failed",
  };

  it("allow exactly the listed moves (a running step cannot be cancelled: it finishes)", () => {
    for (const from of ALL_PHASES) {
      for (const event of STEP_EVENTS) {
        const k = `${from.status}/${from.result} ${event}`;
        if (legal[k]) expect(stepTransition(from, event), k).toEqual(p(legal[k]));
        else expect(() => stepTransition(from, event), k).toThrow(`A step that is ${from.status}/${from.result} cannot ${event}.`);
      }
    }
  });
});

describe("after a step ends", () => {
  it("cancel wins, then failure, then the end of the list, then a pause", () => {
    expect(afterStep({ result: "succeeded", cancelRequested: true, pauseAfter: true, remaining: 1 })).toEqual({ job: "finish_cancelled", rest: "cancel" });
    expect(afterStep({ result: "failed", cancelRequested: true, pauseAfter: false, remaining: 1 })).toEqual({ job: "finish_cancelled", rest: "cancel" });
    expect(afterStep({ result: "failed", cancelRequested: false, pauseAfter: true, remaining: 1 })).toEqual({ job: "fail", rest: "skip" });
    expect(afterStep({ result: "succeeded", cancelRequested: false, pauseAfter: true, remaining: 0 })).toEqual({ job: "succeed" });
    // A cancel during the last step has nothing left to stop: the job ends as the step did.
    expect(afterStep({ result: "succeeded", cancelRequested: true, pauseAfter: false, remaining: 0 })).toEqual({ job: "succeed", cancelTooLate: true });
    expect(afterStep({ result: "failed", cancelRequested: true, pauseAfter: false, remaining: 0 })).toEqual({ job: "fail", rest: "skip" });
    expect(afterStep({ result: "succeeded", cancelRequested: false, pauseAfter: true, remaining: 1 })).toEqual({ job: "pause" });
    expect(afterStep({ result: "succeeded", cancelRequested: false, pauseAfter: false, remaining: 2 })).toEqual({ job: "continue" });
  });
});

describe("what a caller may do with a job", () => {
  const job = (status: string, extra: Partial<{ result: string; startedAt: Date | null; cancelRequestedAt: Date | null }> = {}) =>
    ({ id: "job_1", status, result: extra.result ?? (status === "completed" ? "succeeded" : "tbd"), startedAt: extra.startedAt ?? null, cancelRequestedAt: extra.cancelRequestedAt ?? null }) as Parameters<typeof jobActions>[0];

  it("answers cancel, approve and rerun from the lifecycle, with the reason when not", () => {
    expect(jobActions(job("queued"), "engineer")).toEqual({
      cancel: { allowed: true, why: null, when: "now" },
      approve: { allowed: false, why: "job job_1 is queued, not waiting for approval", gate: null },
      rerun: { allowed: false, why: "job job_1 is still queued. Wait for it to complete, or cancel it, then re-run" },
    });
    expect(jobActions(job("running"), "engineer").cancel).toEqual({ allowed: true, why: null, when: "after_step" });
    expect(jobActions(job("running", { cancelRequestedAt: new Date() }), "engineer").cancel).toMatchObject({ allowed: false, why: expect.stringContaining("already asked for") });
    expect(jobActions(job("awaiting_approval"), "engineer").approve).toEqual({ allowed: true, why: null, gate: "manual_start" });
    expect(jobActions(job("awaiting_approval", { startedAt: new Date() }), "admin").approve).toEqual({ allowed: true, why: null, gate: "plan" });
    const done = jobActions(job("completed", { result: "failed" }), "engineer");
    expect(done.cancel).toEqual({ allowed: false, why: "job job_1 already completed (failed). To undo its changes, run a new job", when: null });
    expect(done.approve.why).toBe("job job_1 is completed (failed), not waiting for approval");
    expect(done.rerun).toEqual({ allowed: true, why: null });
  });

  it("gives a viewer (and nobody) no action, saying which role is needed", () => {
    for (const role of ["viewer", null] as const) {
      const a = jobActions(job("awaiting_approval", { startedAt: new Date() }), role);
      expect(a.approve).toEqual({ allowed: false, why: "steering a job needs the engineer role", gate: "plan" });
      expect(a.cancel.allowed).toBe(false);
      expect(jobActions(job("completed"), role).rerun).toEqual({ allowed: false, why: "steering a job needs the engineer role" });
    }
  });
});
