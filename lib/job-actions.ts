// What a caller may do with an Infra Job now, as the server computes it (server/services/jobs/lifecycle.ts
// `jobActions`) and every surface renders it: the job page, the jobs list, the CLI.
export interface JobAction {
  allowed: boolean;
  /** Why not, as the clause a refusal completes ("Nothing was approved: <why>."). */
  why: string | null;
}

export interface JobActions {
  /** `now`: the job ends at once; `after_step`: the in-flight step finishes first. */
  cancel: JobAction & { when: "now" | "after_step" | null };
  /** `plan`: approves the reviewed plan (send its checksum); `manual_start`: lets the job start. */
  approve: JobAction & { gate: "plan" | "manual_start" | null };
  rerun: JobAction;
}
