// One interface every engine implements; one file per engine beside this one.
import os from "node:os";
import path from "node:path";
import type { EngineTracer, StateV4 } from "../../engine/index";
import { sha256Of } from "../../lib/artifacts";
import type { IacInput, PlanReviewRendition, StepName } from "../../lib/runner-protocol";
import type { JobClient } from "../client";
import type { EventDraft } from "../events";
import type { Logger } from "../log";
import { privateFolder, writePrivateFile } from "../private-files";
import type { Redactor } from "../redact";
import { stateIdentity, type PulumiCheckpoint } from "../../state-backends/rules";

export interface PlanRef {
  artifactId: string;
  sha256: string;
  /**
   * The plan's bytes when this attempt's own preview made them: the apply takes them (checked against `sha256`,
   * the checksum the server holds for the plan) instead of downloading what it uploaded a step before.
   * Kept in this process; never sent.
   */
  bytes?: Uint8Array;
}

export interface StepContext {
  input: IacInput;
  step: StepName;
  attemptId: string;
  /** The module's files, written and verified. */
  moduleDir: string;
  /** This attempt's scratch folder (plan files, local state copies), removed when the attempt ends. */
  workDir: string;
  /** Where a state whose final save to the backend failed is kept (finalStateSave): outlives the attempt. */
  stateBackupDir: string;
  /** Variables with every `$secret/…` reference resolved (the redactor knows those values). */
  variables: Record<string, unknown>;
  /** The plan apply/destroy must execute: this attempt's preview, or the approved one. */
  plan?: PlanRef;
  job: JobClient;
  emit: (event: EventDraft) => void;
  redactor: Redactor;
  log: Logger;
  /** Aborted when the runner's grace period runs out: stop starting new work. */
  signal: AbortSignal;
  /** Environment for engine CLIs (PATH decides which binaries exist). */
  env: NodeJS.ProcessEnv;
  /** Traces the builtin engine's walks under this step's span, when the job is traced. */
  tracer?: EngineTracer;
}

export type StepOutcome =
  | { ok: true; plan?: PlanRef & { summary: Record<string, unknown> } }
  | { ok: false; reason: string };

export interface EngineAdapter {
  readonly name: string;
  init(ctx: StepContext): Promise<StepOutcome>;
  refresh(ctx: StepContext): Promise<StepOutcome>;
  preview(ctx: StepContext): Promise<StepOutcome>;
  apply(ctx: StepContext): Promise<StepOutcome>;
  destroy(ctx: StepContext): Promise<StepOutcome>;
  import(ctx: StepContext): Promise<StepOutcome>;
}

/**
 * The bytes of the plan an apply or destroy executes: the ones this attempt's preview made when their SHA-256 is
 * the plan's, else downloaded from the server (and checked against it there).
 */
export async function planBytes(ctx: StepContext, ref: PlanRef): Promise<Uint8Array> {
  if (ref.bytes && sha256Of(ref.bytes).hex === ref.sha256.toLowerCase()) return ref.bytes;
  return ctx.job.downloadArtifact(ref.artifactId, ref.sha256);
}

/** The operation's preview plans a destroy. */
export function plansDestroy(input: IacInput): boolean {
  return input.operation === "destroy" || input.operation === "destroy_preview";
}

export function failure(err: unknown): { ok: false; reason: string } {
  return { ok: false, reason: err instanceof Error ? err.message : String(err) };
}

/**
 * A step's final state save. When it fails, the state the engine reached is not lost with the attempt's workspace:
 * it is written to the runner's state backups (0600, like OpenTofu's errored.tfstate), the runner's log says where,
 * and the step fails saying so — an operator compares it with what really exists before the component's next job.
 */
export async function finalStateSave(ctx: StepContext, state: StateV4 | PulumiCheckpoint | null, save: () => Promise<void>): Promise<void> {
  try {
    await save();
  } catch (err) {
    if (!state) throw err;
    const why = failure(err).reason;
    const file = stateBackupPath(ctx, ".tfstate");
    const kept = await privateFolder(ctx.stateBackupDir)
      .then(() => writePrivateFile(file, JSON.stringify(state, null, 2)))
      .then(() => true, (e: unknown) => (ctx.log.error("the state could not be kept on this host either", { file, error: String(e) }), false));
    if (!kept) throw err;
    const serial = stateIdentity(state)?.serial;
    ctx.log.error("the final state save failed; the state this step reached is kept on this host", { step: ctx.step, file, serial, error: why });
    throw new Error(
      `The final state save failed (${why}). The state this ${ctx.step} reached (serial ${serial}) is kept on runner host ${os.hostname()} at ${file}, readable by the runner's user only: ` +
        `compare it with what exists before the component's next job (the changes sent during the ${ctx.step} are in the backend already).`,
    );
  }
}

/**
 * Where this step keeps what it could not save, in the runner's state backups (a 0700 folder that outlives the attempt):
 * named as the attempt's workspace is (<job>-<attempt>, made safe for a file name there), with the step and `suffix`.
 */
export function stateBackupPath(ctx: StepContext, suffix: string): string {
  return path.join(ctx.stateBackupDir, `${path.basename(ctx.workDir)}-${ctx.step}${suffix}`);
}

/**
 * Uploads the review rendition (lib/runner-protocol.ts planReviewRenditionSchema) of a plan the console cannot read —
 * OpenTofu's binary plan, Pulumi's — as its engine listed the changes: address, type and action each, no values; bound
 * to the plan's SHA-256 and the state it was made against, every secret value the runner knows replaced.
 */
export async function uploadReviewRendition(
  ctx: StepContext,
  changes: PlanReviewRendition["resource_changes"],
  plan: { sha256: string; engine: string; destroy: boolean; state: { serial: number; lineage: string } | null },
): Promise<void> {
  const review: PlanReviewRendition = {
    planton_plan_review: 1,
    plan_sha256: plan.sha256,
    engine: plan.engine,
    operation: plan.destroy ? "destroy" : "plan",
    state_lineage: plan.state?.lineage ?? null,
    state_serial: plan.state?.serial ?? null,
    // Without the refresh, deletes of things already gone could not be computed.
    delete_operations_computed: !ctx.input.policy.skipRefresh,
    resource_changes: changes,
  };
  await ctx.job.uploadArtifact("plan_review", "plan.review.json", new TextEncoder().encode(JSON.stringify(ctx.redactor.value(review))));
}
