import { auditCheckpointListSchema, auditPageSchema, auditVerifySchema, listAuditInput } from "@/lib/api/audit-schemas";
import { router, viewerProcedure } from "../init";
import { listCheckpoints } from "../../services/audit/archive";
import { listAudit } from "../../services/audit/list";
import { verifyAudit } from "../../services/audit/verify";

const tags = ["Audit"];

/** The audit record: every role reads it (the managers' role is viewer); nobody can change it. */
export const auditRouter = router({
  list: viewerProcedure
    .meta({ openapi: { method: "GET", path: "/audit", tags, summary: "The organization's audit events, newest first, with filters; ?cursor= pages on" } })
    .input(listAuditInput)
    .output(auditPageSchema)
    .query(({ ctx, input }) => listAudit(ctx.db, ctx.actor, ctx.org.slug, input)),
  verify: viewerProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/audit/verify",
        tags,
        summary: "Check the organization's audit chain from its start (or last archive checkpoint): the first broken link if any, and the head to keep outside Planton",
      },
    })
    .output(auditVerifySchema)
    .query(({ ctx }) => verifyAudit(ctx.db, ctx.actor)),
  checkpoints: viewerProcedure
    .meta({ openapi: { method: "GET", path: "/audit/checkpoints", tags, summary: "The retention archive's checkpoints, oldest first: each archive file's name and SHA-256 and the last event it holds" } })
    .output(auditCheckpointListSchema)
    .query(({ ctx }) => listCheckpoints(ctx.db, ctx.actor.orgId)),
});
