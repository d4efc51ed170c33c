// Runs one claimed job: workspace, steps in order, heartbeats, cancel at step boundaries, and an
// attempt end in every case.
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { CONNECTION_PROVIDERS } from "../lib/catalog";
import type { ClaimResponse, IacInput, StepName } from "../lib/runner-protocol";
import { writeBundle } from "./bundle";
import { HttpError, type JobClient, type RunnerClient } from "./client";
import { runnerConfig } from "./config";
import { EventUploader } from "./events";
import { type EngineAdapter, type PlanRef, type StepContext, type StepOutcome } from "./engines/adapter";
import { BuiltinAdapter } from "./engines/builtin";
import { PulumiAdapter } from "./engines/pulumi";
import { TofuAdapter } from "./engines/tofu";
import { silentLogger, type Logger } from "./log";
import { privateFolder } from "./private-files";
import { Redactor } from "./redact";
import { resolveVariables } from "./variables";
import { endSpan, flushTraces, startSpan } from "../lib/telemetry";
import { engineTracer } from "./tracing";

export function adapterFor(provisioner: ClaimResponse["input"]["module"]["provisioner"]): EngineAdapter {
  switch (provisioner) {
    case "builtin":
      return new BuiltinAdapter();
    case "tofu":
      return new TofuAdapter("tofu");
    case "terraform":
      return new TofuAdapter("terraform");
    case "pulumi":
      return new PulumiAdapter();
  }
}

/** The folder under a runner's work root where a state whose final save failed is kept. */
export const STATE_BACKUPS = "state-backups";

export interface JobRunOptions {
  runner: RunnerClient;
  /** Folder under which each job gets its own workspace. */
  workRoot: string;
  log?: Logger;
  heartbeatMs?: number;
  /** Aborted when the runner is stopping: finish the in-flight step, start no other. */
  stopping?: AbortSignal;
  /** Aborted when the grace period ran out: the in-flight step is told to stop too. */
  hardStop?: AbortSignal;
  env?: NodeJS.ProcessEnv;
  keepWorkspace?: boolean;
  /** For tests: a job client other than `runner.job(…)`. */
  jobClient?: JobClient;
  adapter?: EngineAdapter;
}

export interface JobRunResult {
  exitCode: number;
  reason: string;
  /** The steps this attempt finished, with their results. */
  steps: { step: StepName; result: "succeeded" | "failed" }[];
  stoppedBy?: "cancel" | "not_proceed" | "server_stop" | "runner_stopping" | "failure" | "credential_refused";
}

export async function runJob(claim: ClaimResponse, opts: JobRunOptions): Promise<JobRunResult> {
  const { input, attemptId } = claim;
  const log = (opts.log ?? silentLogger).child({ job: claim.job.id, attempt: attemptId });
  const job = opts.jobClient ?? opts.runner.job(claim.job.id, claim.credential.token);
  const redactor = new Redactor();
  const uploader = new EventUploader({
    send: (events) => job.uploadEvents(attemptId, events),
    redact: (p) => redactor.value(p),
    onError: (err, batch) => log.warn("event upload failed; will retry with the same seq", { from: batch[0]?.seq, to: batch.at(-1)?.seq, error: String(err) }),
  });
  const workDir = path.join(opts.workRoot, `${claim.job.id}-${attemptId}`.replace(/[^A-Za-z0-9_.-]/g, "_"));
  const moduleDir = path.join(workDir, "module");
  // Outside the attempt's workspace, which is removed when the attempt ends (adapter.ts finalStateSave).
  const stateBackupDir = path.join(opts.workRoot, STATE_BACKUPS);
  const adapter = opts.adapter ?? adapterFor(input.module.provisioner);
  const hardStop = opts.hardStop ?? new AbortController().signal;
  const result: JobRunResult = { exitCode: 0, reason: "", steps: [] };

  let cancelRequested = false;
  // Set when the server refuses the job credential (attempt replaced, job over, token rotated, runner revoked);
  // acted on at the next step boundary, since a beat racing the last step's finish is refused too.
  let refused: string | undefined;
  // One heartbeat at a time: against a slow server, beats would pile up (and each renew the credential).
  let beating = false;
  const beat = async () => {
    if (beating) return;
    beating = true;
    try {
      const hb = await job.heartbeat(attemptId);
      if (hb.signal === "cancel" && !cancelRequested) {
        cancelRequested = true;
        log.info("cancel requested; stopping at the next step boundary");
      }
      if (hb.credential) {
        job.renewCredential(hb.credential.token);
        log.info("job credential renewed", { expiresAt: hb.credential.expiresAt });
      }
    } catch (err) {
      if (err instanceof HttpError && [401, 403, 409].includes(err.status)) {
        if (!refused) log.warn("the server refused a heartbeat; stopping at the next step boundary", { error: err.message });
        refused ??= err.message;
      }
      else log.warn("heartbeat failed", { error: String(err) });
    } finally {
      beating = false;
    }
  };
  const heartbeat = setInterval(() => void beat(), opts.heartbeatMs ?? runnerConfig().PLANTON_RUNNER_HEARTBEAT_MS);

  log.info("job claimed", { operation: input.operation, steps: input.steps, module: `${input.module.name}@${input.module.version}`, engine: adapter.name });
  let prepared: Promise<{ variables: Record<string, unknown>; env: NodeJS.ProcessEnv }> | undefined;
  const prepare = () =>
    (prepared ??= (async () => {
      await privateFolder(workDir);
      await mkdir(moduleDir, { recursive: true, mode: 0o700 });
      await writeBundle(moduleDir, input.module.files, input.module.sha256);
      const variables = await resolveVariables(input.variables, job, redactor);
      return { variables, env: { ...engineEnv(opts.env ?? process.env), ...(await connectionEnv(input, job, redactor)) } };
    })());

  let plan: PlanRef | undefined = input.approvedPlan;
  try {
    for (const step of input.steps) {
      if (refused) {
        log.error("the server refused this job's credential; stopping work on the job", { error: refused });
        result.stoppedBy = "credential_refused";
        result.exitCode = 1;
        result.reason = `stopped before ${step}: ${refused}`;
        break;
      }
      if (cancelRequested) {
        result.stoppedBy = "cancel";
        result.reason = "cancelled: stopped at the step boundary before " + step;
        break;
      }
      if (opts.stopping?.aborted) {
        result.stoppedBy = "runner_stopping";
        result.exitCode = 143;
        result.reason = `runner stopping: ended before ${step}`;
        break;
      }
      const start = await job.startStep(step, attemptId);
      if (!start.proceed) {
        result.stoppedBy = "not_proceed";
        result.reason = `the server said not to proceed with ${step} (job cancelled)`;
        break;
      }
      log.info("step started", { step });
      // The step's span is a child of the claim's, in the job's trace (nothing when the console does not trace).
      const stepSpan = startSpan(`step ${step}`, claim.traceparent, { "planton.job.id": claim.job.id, "planton.step": step, "planton.attempt.id": attemptId, "planton.engine": adapter.name });
      let diagnosed = false;
      const emit = (e: Parameters<StepContext["emit"]>[0]) => {
        if (e.type === "diagnostic") diagnosed = true;
        uploader.emit(step, e);
      };
      let outcome: StepOutcome;
      try {
        const { variables, env } = await prepare();
        const ctx: StepContext = { input, step, attemptId, moduleDir, workDir, stateBackupDir, variables, plan, job, emit, redactor, log, signal: hardStop, env, tracer: engineTracer(stepSpan) };
        outcome = await runStep(adapter, step, ctx);
      } catch (err) {
        outcome = { ok: false, reason: err instanceof Error ? err.message : String(err) };
      }
      // The engine reports its own diagnostics; a failure from anywhere else gets one here, said once.
      if (!outcome.ok && !diagnosed) {
        const [summary, ...rest] = outcome.reason.split("\n");
        emit({ type: "diagnostic", payload: { severity: "error", summary, detail: rest.join("\n").trim() } });
      }
      stepSpan?.setAttribute("planton.step.result", outcome.ok ? "succeeded" : "failed");
      endSpan(stepSpan, outcome.ok ? undefined : redactor.text(outcome.reason));
      if (outcome.ok && outcome.plan) plan = { artifactId: outcome.plan.artifactId, sha256: outcome.plan.sha256, bytes: outcome.plan.bytes };
      await uploader.flush().catch((err) => log.warn("events not yet uploaded at step finish", { error: String(err) }));
      // A refused credential refuses the finish too: the step's work is done, and nothing more is sent for it.
      if (refused) {
        const next = input.steps[input.steps.indexOf(step) + 1];
        result.stoppedBy = "credential_refused";
        result.exitCode = 1;
        result.reason = next ? `stopped before ${next}: ${refused}` : `stopped after ${step}: ${refused}`;
        log.error("the server refused this job's credential; stopping work on the job", { error: refused });
        break;
      }
      const finish = await job.finishStep(step, {
        attemptId,
        result: outcome.ok ? "succeeded" : "failed",
        ...(outcome.ok ? {} : { reason: redactor.text(outcome.reason) }),
        // The plan's bytes stay in this process: the server has them as the artifact.
        ...(outcome.ok && outcome.plan ? { plan: { artifactId: outcome.plan.artifactId, sha256: outcome.plan.sha256, summary: outcome.plan.summary } } : {}),
      });
      result.steps.push({ step, result: outcome.ok ? "succeeded" : "failed" });
      log.info("step finished", { step, result: outcome.ok ? "succeeded" : "failed", next: finish.next });
      if (!outcome.ok) {
        result.exitCode = 1;
        result.stoppedBy = "failure";
        result.reason = `${step} failed: ${redactor.text(outcome.reason)}`;
        break;
      }
      if (finish.next === "stop" && step !== input.steps.at(-1)) {
        // A cancel the heartbeat brought is why the server says stop: say it is a cancel.
        const next = input.steps[input.steps.indexOf(step) + 1];
        result.stoppedBy = cancelRequested ? "cancel" : "server_stop";
        result.reason = cancelRequested ? `cancelled: stopped at the step boundary before ${next}` : `stopped after ${step} as the server asked`;
        break;
      }
    }
    if (!result.reason) result.reason = "completed";
  } catch (err) {
    result.exitCode = result.exitCode || 1;
    result.reason = `runner error: ${redactor.text(err instanceof Error ? err.message : String(err))}`;
    log.error("job run failed", { error: result.reason });
  } finally {
    clearInterval(heartbeat);
    await uploader.close().catch((err) => log.warn("some events could not be uploaded", { error: String(err), queued: uploader.queued }));
    try {
      await job.endAttempt({ attemptId, exitCode: result.exitCode, reason: result.reason });
    } catch (err) {
      log.error("attempt end failed", { error: String(err) });
    }
    if (!opts.keepWorkspace) await rm(workDir, { recursive: true, force: true }).catch(() => {});
    // The attempt's spans go out now, not at the next batch: a trace is whole once its job has ended.
    await flushTraces();
    log.info("attempt ended", { exitCode: result.exitCode, reason: result.reason });
  }
  return result;
}

/**
 * The stored credentials of the connection the job deploys through, as its provider's variables: only
 * in the engine process's environment, and masked in everything the job reports. A runner-mode
 * connection's variables are in this runner's own environment already.
 */
async function connectionEnv(input: IacInput, job: JobClient, redactor: Redactor): Promise<Record<string, string>> {
  if (input.connection?.mode !== "stored" || !CONNECTION_PROVIDERS[input.connection.provider]?.env) return {};
  const provider = CONNECTION_PROVIDERS[input.connection.provider];
  const { env } = await job.connectionEnv();
  // Values of credential fields are masked wherever they would appear; config (a region, a project) is not secret.
  for (const field of provider.credentialFields) {
    const variable = provider.env?.[field.name];
    if (variable && env[variable]) redactor.add(env[variable]);
  }
  return env;
}

/** What engine CLIs and modules see: the runner's environment without its token, which no module needs. */
export function engineEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { PLANTON_RUNNER_TOKEN: _token, ...rest } = env;
  return rest as NodeJS.ProcessEnv;
}

function runStep(adapter: EngineAdapter, step: StepName, ctx: StepContext): Promise<StepOutcome> {
  switch (step) {
    case "init":
      return adapter.init(ctx);
    case "refresh":
      return adapter.refresh(ctx);
    case "preview":
      return adapter.preview(ctx);
    case "apply":
      return adapter.apply(ctx);
    case "destroy":
      return adapter.destroy(ctx);
    case "import":
      return adapter.import(ctx);
  }
}
