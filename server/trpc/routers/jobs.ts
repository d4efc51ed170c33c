import { tracked } from "@trpc/server";
import { z } from "zod";
import { engineerProcedure, router, viewerProcedure } from "../init";
import { getRuntime } from "../../runtime";
import { cancelJob, cancelJobInput } from "../../services/jobs/cancel-job";
import { createJob, createJobInput } from "../../services/jobs/create-job";
import { readEventsAfter, streamJobEvents } from "../../services/jobs/events";
import { preflightForKind, preflightForKindInput } from "../../services/jobs/preflight";
import { countAwaitingApproval, getIacInput, getJob, getPlanReview, listJobStarters, listJobs, listJobsInput } from "../../services/jobs/queries";
import { preflightComponent, preflightComponentInput } from "../../services/jobs/preflight-component";
import { rerunJob, rerunJobInput } from "../../services/jobs/rerun-job";
import { resumeJob, resumeJobInput } from "../../services/jobs/resume-job";

const byId = z.object({ id: z.string().min(1) });

export const jobsRouter = router({
  list: viewerProcedure.input(listJobsInput).query(({ ctx, input }) => listJobs(ctx.db, ctx.actor.orgId, input, ctx.actor.role)),
  awaitingApprovalCount: viewerProcedure.query(({ ctx }) => countAwaitingApproval(ctx.db, ctx.actor.orgId)),
  starters: viewerProcedure.query(({ ctx }) => listJobStarters(ctx.db, ctx.actor.orgId)),
  get: viewerProcedure.input(byId).query(({ ctx, input }) => getJob(ctx.db, ctx.actor.orgId, input.id, ctx.actor.role)),
  events: viewerProcedure
    .input(z.object({ id: z.string().min(1), afterSeq: z.number().int().min(0).default(0), limit: z.number().int().min(1).max(5000).default(1000) }))
    .query(async ({ ctx, input }) => {
      await getJob(ctx.db, ctx.actor.orgId, input.id);
      return readEventsAfter(ctx.db, input.id, input.afterSeq, input.limit);
    }),
  create: engineerProcedure.input(createJobInput).mutation(({ ctx, input }) => createJob(ctx.db, ctx.actor, input)),
  cancel: engineerProcedure.input(cancelJobInput).mutation(({ ctx, input }) => cancelJob(ctx.db, ctx.actor, input)),
  resume: engineerProcedure.input(resumeJobInput).mutation(({ ctx, input }) => resumeJob(ctx.db, ctx.actor, input)),
  rerun: engineerProcedure.input(rerunJobInput).mutation(({ ctx, input }) => rerunJob(ctx.db, ctx.actor, input)),
  preflight: viewerProcedure.input(preflightForKindInput).query(({ ctx, input }) => preflightForKind(ctx.db, ctx.actor, input)),
  preflightComponent: viewerProcedure.input(preflightComponentInput).query(({ ctx, input }) => preflightComponent(ctx.db, ctx.actor, input)),
  iacInput: viewerProcedure.input(byId).query(({ ctx, input }) => getIacInput(ctx.db, ctx.actor.orgId, input.id)),
  plan: viewerProcedure.input(byId).query(({ ctx, input }) => getPlanReview(ctx.db, ctx.actor.orgId, input.id)),
  /** Live progress over SSE: every event after `lastEventId` (the last seq seen) once, in order. */
  stream: viewerProcedure
    .input(z.object({ id: z.string().min(1), lastEventId: z.string().nullish() }))
    .subscription(async function* ({ ctx, input, signal }) {
      await getJob(ctx.db, ctx.actor.orgId, input.id);
      const after = Number(input.lastEventId ?? 0) || 0;
      for await (const event of streamJobEvents((await getRuntime()).handle, input.id, after, signal)) yield tracked(String(event.seq), event);
    }),
});
