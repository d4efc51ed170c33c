// Rerun: a new job from a completed one, same component and operation, fresh preflight, linked to it.
import { and, eq } from "drizzle-orm";
import { z } from "zod";
import { rerunBody } from "@/lib/api/schemas";
import type { Database } from "@/db/client";
import { infraJobs } from "@/db/schema";
import type { Actor } from "../../actor";
import { conflict, notFound } from "../../errors";
import { createJob } from "./create-job";
import { jobActions } from "./lifecycle";

export const rerunJobInput = rerunBody.extend({ jobId: z.string().min(1) });

export async function rerunJob(db: Database, actor: Actor, raw: z.input<typeof rerunJobInput>) {
  const input = rerunJobInput.parse(raw);
  const [job] = await db.select().from(infraJobs).where(and(eq(infraJobs.id, input.jobId), eq(infraJobs.orgId, actor.orgId)));
  if (!job) throw notFound(`Infra Job ${input.jobId}`, "Check the id, or find it in the component's Infra Jobs tab.");
  const { rerun } = jobActions(job, actor.role);
  if (!rerun.allowed) throw conflict(`Nothing was re-run: ${rerun.why}.`);
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
