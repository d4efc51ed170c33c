import { tracked } from "@trpc/server";
import { z } from "zod";
import {
  artifactListSchema,
  eventsPageSchema,
  iacInputSchema,
  jobPageSchema,
  jobRecordSchema,
  jobSchema,
  planReviewSchema,
  preflightResultSchema,
  resumeResultSchema,
} from "@/lib/api/schemas";
import { engineerProcedure, router, viewerProcedure } from "../init";
import { getRuntime } from "../../runtime";
import { metrics, observeDelivery } from "../../metrics";
import { lastSeenSeq } from "../../input-guard";
import { cancelJob, cancelJobInput } from "../../services/jobs/cancel-job";
import { createJob, createJobInput } from "../../services/jobs/create-job";
import { readEventsPage, readEventsPageInput } from "../../services/jobs/events";
import { streamJobEvents } from "../../services/jobs/event-feed";
import { preflightForKind, preflightForKindInput, preflightReports, preflightReportsInput } from "../../services/jobs/preflight";
import { countAwaitingApproval, getIacInput, getJob, getPlanReview, listJobStarters, listJobs, listJobsInput } from "../../services/jobs/queries";
import { preflightComponent, preflightComponentInput } from "../../services/jobs/preflight-component";
import { rerunJob, rerunJobInput } from "../../services/jobs/rerun-job";
import { resumeJob, resumeJobInput } from "../../services/jobs/resume-job";

const byId = z.object({ id: z.string().min(1) });
const tags = ["Infra Jobs"];

export const jobsRouter = router({
  list: viewerProcedure
    .meta({ openapi: { method: "GET", path: "/jobs", tags, summary: "The organization's Infra Jobs, newest first, with filters; ?cursor= pages on" } })
    .input(listJobsInput)
    .output(jobPageSchema)
    .query(({ ctx, input }) => listJobs(ctx.db, ctx.actor.orgId, input, ctx.actor.role)),
  /** The component's jobs: the same list, at the component's address. */
  listForComponent: viewerProcedure
    .meta({ openapi: { method: "GET", path: "/components/{componentId}/jobs", tags, summary: "An Infra Component's jobs, newest first; ?cursor= pages on" } })
    .input(listJobsInput.pick({ cursor: true, limit: true }).extend({ componentId: z.string().min(1) }))
    .output(jobPageSchema)
    .query(({ ctx, input }) => listJobs(ctx.db, ctx.actor.orgId, input, ctx.actor.role)),
  awaitingApprovalCount: viewerProcedure.query(({ ctx }) => countAwaitingApproval(ctx.db, ctx.actor.orgId)),
  starters: viewerProcedure.query(({ ctx }) => listJobStarters(ctx.db, ctx.actor.orgId)),
  get: viewerProcedure
    .meta({ openapi: { method: "GET", path: "/jobs/{id}", tags, summary: "One Infra Job: steps, runner attempts, approvals, artifacts, and what you may do with it now" } })
    .input(byId)
    .output(jobSchema)
    .query(({ ctx, input }) => getJob(ctx.db, ctx.actor.orgId, input.id, ctx.actor.role)),
  events: viewerProcedure
    .meta({ openapi: { method: "GET", path: "/jobs/{id}/events", tags, summary: "The job's progress events after a seq, in order (live: GET /jobs/{id}/events/stream)" } })
    .input(readEventsPageInput)
    .output(eventsPageSchema)
    .query(({ ctx, input }) => readEventsPage(ctx.db, ctx.actor.orgId, input)),
  artifacts: viewerProcedure
    .meta({ openapi: { method: "GET", path: "/jobs/{id}/artifacts", tags, summary: "The job's artifacts (plan files, logs, state snapshots, IaC inputs), without their bytes" } })
    .input(byId)
    .output(artifactListSchema)
    .query(async ({ ctx, input }) => ({ artifacts: (await getJob(ctx.db, ctx.actor.orgId, input.id)).artifacts })),
  create: engineerProcedure
    .meta({
      created: true,
      openapi: { method: "POST", path: "/components/{componentId}/jobs", tags, summary: "Run an Infra Job for the component (201); an unknown operation creates nothing" },
    })
    .input(createJobInput)
    .output(jobRecordSchema)
    .mutation(({ ctx, input }) => createJob(ctx.db, ctx.actor, input)),
  cancel: engineerProcedure
    .meta({ openapi: { method: "POST", path: "/jobs/{jobId}/cancel", tags, summary: "Cancel the job: at once, or after the step in flight" } })
    .input(cancelJobInput)
    .output(jobRecordSchema)
    .mutation(({ ctx, input }) => cancelJob(ctx.db, ctx.actor, input)),
  resume: engineerProcedure
    .meta({ openapi: { method: "POST", path: "/jobs/{jobId}/resume", tags, summary: "Approve a paused job: send the checksum of the plan you reviewed (GET /jobs/{id}/plan)" } })
    .input(resumeJobInput)
    .output(resumeResultSchema)
    .mutation(({ ctx, input }) => resumeJob(ctx.db, ctx.actor, input)),
  rerun: engineerProcedure
    .meta({ created: true, openapi: { method: "POST", path: "/jobs/{jobId}/rerun", tags, summary: "A new job from a completed one (201)" } })
    .input(rerunJobInput)
    .output(jobRecordSchema)
    .mutation(({ ctx, input }) => rerunJob(ctx.db, ctx.actor, input)),
  /** One environment's report, for the console's forms. */
  preflight: viewerProcedure.input(preflightForKindInput).query(({ ctx, input }) => preflightForKind(ctx.db, ctx.actor, input)),
  preflightReports: viewerProcedure
    .meta({ openapi: { method: "GET", path: "/preflight", tags, summary: "The four essentials for a catalog kind, per environment (every one when none is named)" } })
    .input(preflightReportsInput)
    .output(preflightResultSchema)
    .query(({ ctx, input }) => preflightReports(ctx.db, ctx.actor, input)),
  preflightComponent: viewerProcedure.input(preflightComponentInput).query(({ ctx, input }) => preflightComponent(ctx.db, ctx.actor, input)),
  iacInput: viewerProcedure
    .meta({ openapi: { method: "GET", path: "/jobs/{id}/iac-input", tags, summary: "The input the job ran with: module files, variables with secret references, backend, policy" } })
    .input(byId)
    .output(iacInputSchema)
    .query(({ ctx, input }) => getIacInput(ctx.db, ctx.actor.orgId, input.id)),
  plan: viewerProcedure
    .meta({ openapi: { method: "GET", path: "/jobs/{id}/plan", tags, summary: "The review document of the job's saved plan: checksum and verdict, state identity, counts, deletes, operations" } })
    .input(byId)
    .output(planReviewSchema)
    .query(({ ctx, input }) => getPlanReview(ctx.db, ctx.actor.orgId, input.id)),
  /**
   * Live progress over tRPC's SSE: every event after `lastEventId` (the last seq seen) once, in order, one
   * message each. The console's job page and the CLI read GET /api/v1/jobs/{id}/events/stream instead,
   * which writes the feed's shared encoded batches (lib/job-event-stream.ts); this stays for typed-client scripts and tests.
   */
  stream: viewerProcedure
    .input(z.object({ id: z.string().min(1), lastEventId: z.string().nullish() }))
    .subscription(async function* ({ ctx, input, signal }) {
      await getJob(ctx.db, ctx.actor.orgId, input.id);
      const after = lastSeenSeq(input.lastEventId);
      const openedAt = Date.now();
      metrics().sseSubscribers.inc();
      try {
        for await (const event of streamJobEvents((await getRuntime()).handle, input.id, after, signal)) {
          observeDelivery(event.ts, openedAt);
          yield tracked(String(event.seq), event);
        }
      } finally {
        metrics().sseSubscribers.dec();
      }
    }),
});
