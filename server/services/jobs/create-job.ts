// Creating an Infra Job: check the operation, run preflight, keep the IaC input, queue it (or end
// it failed with the preflight report when an essential is missing: then nothing runs).
import { z } from "zod";
import { createJobBody } from "@/lib/api/schemas";
import type { Queryable } from "@/db/client";
import { and, eq, isNull } from "drizzle-orm";
import { infraComponents, infraJobs, jobOperations } from "@/db/schema";
import { PLANTON_MANAGED_KIND } from "@/lib/state-backend-kinds";
import { newId } from "@/lib/ids";
import { withVariables } from "@/lib/secrets";
import { isOperation, unknownOperationMessage, type IacInput, type JobOperationKind } from "@/lib/runner-protocol";
import type { Actor } from "../../actor";
import { recordAudit } from "../../audit";
import { badRequest, conflict } from "../../errors";
import { getComponent, type InfraComponentView } from "../components/queries";
import { assertComponentAction, lockComponent } from "../components/refusals";
import { appendEvents } from "./events";
import { planFailedPreflight, planJob } from "./lifecycle";
import { preflightForComponent, type PreflightReport, type Resolved } from "./preflight";
import { notifyQueue } from "./transitions";
import { spanned, startSpan, traceparentOf } from "@/lib/telemetry";

export const createJobInput = createJobBody.extend({ componentId: z.string().min(1, { error: "Name the Infra Component to run the job for" }) });
export type CreateJobInput = z.input<typeof createJobInput>;

import type { StoredIacInput } from "@/db/schema";
export type { StoredIacInput };

/**
 * Creates a job. Refuses an unknown operation, or a component its status keeps from running one (deleted,
 * forgotten, being deleted): nothing is created. A failed preflight creates a completed/failed job.
 * Runs in the caller's transaction when given one (a create or change records its job with it).
 */
export async function createJob(db: Queryable, actor: Actor, raw: CreateJobInput, opts: { rerunOf?: string } = {}) {
  const input = createJobInput.parse(raw);
  if (!isOperation(input.operation)) throw badRequest(unknownOperationMessage(input.operation), "operation");
  const operation = input.operation;
  if (operation === "import" && !input.import) {
    throw badRequest("An import job needs the resource's address in the module and its provider id (--address, --id). No job was created.", "import");
  }
  const component = await getComponent(db, actor.orgId, input.componentId);
  assertComponentAction("deploy", component, actor.role);
  const { report, resolved } = await preflightForComponent(db, { ...component, orgId: actor.orgId });
  const jobId = newId("infraJob");
  const plan = report.passed ? planJob(operation, resolved.policy.toggles) : planFailedPreflight(operation, resolved.policy.toggles);
  const iacInput = report.passed ? buildIacInput(jobId, actor.orgId, component, operation, resolved, plan.steps, input.import) : null;
  // The job's trace starts here; its claims, steps and the engine's walks join it through the stored traceparent.
  const span = startSpan("job create", null, { "planton.job.id": jobId, "planton.job.operation": operation, "planton.component": component.name, "planton.environment": component.environment });

  return spanned(span, db.transaction(async (tx) => {
    // Under the component's lock: a delete that started since is seen, and the job runs the version it is at now.
    const locked = await lockComponent(tx, component.id);
    assertComponentAction("deploy", locked, actor.role);
    if (locked.specVersion !== component.specVersion) {
      throw conflict(`Nothing ran: ${component.name} changed to version ${locked.specVersion} while the job for version ${component.specVersion} was being prepared. Run the job again to run version ${locked.specVersion}.`);
    }
    // A draft is deployed by its first job.
    if (locked.status === "draft") await tx.update(infraComponents).set({ status: "active", updatedAt: new Date() }).where(eq(infraComponents.id, component.id));
    // The component's first state goes where the default is now; a default changed later is for new components.
    if (report.passed && resolved.backendFromDefault && resolved.backend && resolved.backend.kind !== PLANTON_MANAGED_KIND) {
      await tx.update(infraComponents).set({ stateBackendId: resolved.backend.id }).where(and(eq(infraComponents.id, component.id), isNull(infraComponents.stateBackendId)));
    }
    const [job] = await tx
      .insert(infraJobs)
      .values({
        id: jobId,
        orgId: actor.orgId,
        componentId: component.id,
        operation,
        specVersion: locked.specVersion,
        ...plan.initial,
        reason: report.reason,
        versionMessage: input.versionMessage,
        createdBy: actor.userId,
        createdByLabel: actor.label,
        rerunOf: opts.rerunOf ?? null,
        preflight: report,
        iacInput,
        moduleSha256: resolved.bundle?.sha256 ?? null,
        module: resolved.module && resolved.bundle ? { name: resolved.module.name, version: resolved.module.version, provisioner: resolved.module.provisioner, registry: resolved.module.scopeKey === "platform" ? "platform" : "organization" } : null,
        backendId: resolved.backend?.id ?? null,
        routeRunnerId: resolved.route.runner?.id ?? null,
        routeRule: resolved.route.rule,
        policy: { ...resolved.policy.toggles, selector: resolved.policy.selector, target: resolved.policy.target },
        importTarget: input.import ?? null,
        completedAt: plan.initial.status === "completed" ? new Date() : null,
        traceParent: traceparentOf(span) ?? null,
      })
      .returning();
    await tx.insert(jobOperations).values(
      plan.steps.map((s) => ({
        id: newId("jobOperation"),
        jobId,
        step: s.step,
        ordinal: s.ordinal,
        status: s.status,
        result: s.result,
        reason: s.reason,
        pauseAfter: s.pauseAfter ? 1 : 0,
        endedAt: s.status === "completed" ? new Date() : null,
      })),
    );
    await appendEvents(tx, jobId, [
      { operation: null, type: "job_status", payload: { ...plan.initial, ...(report.reason ? { reason: report.reason } : {}) } },
      ...(report.passed ? [] : [{ operation: null, type: "diagnostic" as const, payload: { severity: "error", summary: "Preflight failed", detail: preflightText(report) } }]),
    ]);
    // One event per job: a job refused by preflight is recorded as that refusal (result failure), naming the failed checks.
    const failed = report.checks.filter((c) => !c.passed);
    const verb = opts.rerunOf ? `Re-ran ${opts.rerunOf} as` : "Created";
    await recordAudit(tx, actor, {
      action: report.passed ? (opts.rerunOf ? "job.rerun" : "job.create") : "job.preflight_failed",
      targetId: jobId,
      targetName: component.name,
      environment: component.environment,
      result: report.passed ? "success" : "failure",
      summary: report.passed
        ? `${verb} ${operation} job ${jobId} for ${component.name}`
        : `${verb} ${operation} job ${jobId} for ${component.name}, refused by preflight (${failed.map((c) => c.essential).join(", ")}); nothing ran`,
      changes: {
        operation,
        component: component.name,
        componentId: component.id,
        ...(opts.rerunOf ? { rerunOf: opts.rerunOf } : {}),
        ...(input.versionMessage ? { versionMessage: input.versionMessage } : {}),
        ...(report.passed ? {} : { failedChecks: failed.map((c) => ({ essential: c.essential, errors: c.errors })) }),
      },
    });
    if (job.status === "queued") await notifyQueue(tx, actor.orgId);
    return job;
  }));
}

function buildIacInput(
  jobId: string,
  orgId: string,
  component: InfraComponentView,
  operation: JobOperationKind,
  r: Resolved,
  steps: ReturnType<typeof planJob>["steps"],
  importTarget?: { address: string; id: string },
): StoredIacInput {
  const m = r.module!;
  return {
    jobId,
    orgId,
    component: { id: component.id, name: component.name, kind: component.kind, environment: component.environment },
    operation,
    steps: steps.filter((s) => s.result !== "skipped").map((s) => s.step),
    module: { name: m.name, version: m.version, provisioner: m.provisioner, source: m.source, files: r.bundle!.files, sha256: r.bundle!.sha256 },
    // Variables are not secret: their values replace `$var/…` here; secrets stay references the runner resolves.
    variables: withVariables(component.spec ?? {}, r.variableValues) as Record<string, unknown>,
    connection: r.connection
      ? { name: r.connection.name, provider: r.connection.provider, mode: r.connection.mode, config: r.connection.config as Record<string, unknown> }
      : null,
    backend: { id: r.backend!.id, name: r.backend!.name, kind: r.backend!.kind, config: r.backend!.config as Record<string, unknown> },
    policy: r.policy.toggles,
    ...(importTarget ? { import: importTarget } : {}),
    parallelism: 10,
  };
}

/** The report as lines, for logs and the CLI. */
export function preflightText(report: PreflightReport): string {
  return report.checks
    .map((c) => `${c.passed ? "✓" : "✗"} ${c.essential}: ${c.resolvedTo ?? "not resolved"}${c.errors.map((e) => `\n    ${e}`).join("")}`)
    .join("\n");
}
