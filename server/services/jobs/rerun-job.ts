// Rerun: a new job from a completed one, same component and operation, fresh preflight, linked to it.
import { and, eq } from "drizzle-orm";
import { z } from "zod";
import { rerunBody } from "@/lib/api/schemas";
import type { Database } from "@/db/client";
import { infraComponents, infraJobs } from "@/db/schema";
import type { Actor } from "../../actor";
import { conflict, notFound } from "../../errors";
import { deleteComponent } from "../components/delete-component";
import { createJob } from "./create-job";
import { jobActions } from "./lifecycle";

export const rerunJobInput = rerunBody.extend({ jobId: z.string().min(1) });

export async function rerunJob(db: Database, actor: Actor, raw: z.input<typeof rerunJobInput>) {
  const input = rerunJobInput.parse(raw);
  const [job] = await db.select().from(infraJobs).where(and(eq(infraJobs.id, input.jobId), eq(infraJobs.orgId, actor.orgId)));
  if (!job) throw notFound(`Infra Job ${input.jobId}`, "Check the id, or find it in the component's Infra Jobs tab.");
  const { rerun } = jobActions(job, actor.role);
  if (!rerun.allowed) throw conflict(`Nothing was re-run: ${rerun.why}.`);
  // Re-running the destroy that failed to delete its component is the delete's retry: when it succeeds the component is removed.
  const [component] = await db.select({ status: infraComponents.status, deleteJobId: infraComponents.deleteJobId }).from(infraComponents).where(eq(infraComponents.id, job.componentId));
  if (job.operation === "destroy" && component?.status === "delete_failed" && component.deleteJobId === job.id) {
    const { job: retry } = await deleteComponent(db, actor, { id: job.componentId, versionMessage: input.versionMessage ?? job.versionMessage }, { rerunOf: job.id });
    if (retry) return retry;
  }
  return createJob(
    db,
    actor,
    {
      componentId: job.componentId,
      operation: job.operation,
      versionMessage: input.versionMessage ?? job.versionMessage,
      import: (job.importTarget as { address: string; id: string } | null) ?? undefined,
    },
    { rerunOf: job.id },
  );
}
