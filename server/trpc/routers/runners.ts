import {
  defaultRunnerSchema,
  registerRunnerBody,
  runnerDetailSchema,
  runnerListSchema,
  runnerRefInput,
  runnerRevokedSchema,
  runnerTokenSchema,
} from "@/lib/api/runner-schemas";
import { adminProcedure, router, viewerProcedure } from "../init";
import {
  getDefaultRunner,
  getRunner,
  listRunners,
  registerOwnRunner,
  revokeOwnRunner,
  rotateOwnRunnerToken,
  setDefaultRunner,
  unsetDefaultRunner,
} from "../../services/runners/manage";

const tags = ["Runners"];

// Order matters for REST: /runners/default is matched before /runners/{runner}.
/** Settings → Runners and `planton runner …`: admins manage, everyone else reads. */
export const runnersRouter = router({
  list: viewerProcedure
    .meta({ openapi: { method: "GET", path: "/runners", tags, summary: "The organization's runners and the Planton-hosted ones: status, last seen, version, engines, running jobs, default" } })
    .output(runnerListSchema)
    .query(({ ctx }) => listRunners(ctx.db, ctx.actor)),
  getDefault: viewerProcedure
    .meta({ openapi: { method: "GET", path: "/runners/default", tags, summary: "Where deploys run when a connection names no runner" } })
    .output(defaultRunnerSchema)
    .query(({ ctx }) => getDefaultRunner(ctx.db, ctx.actor)),
  setDefault: adminProcedure
    .meta({ openapi: { method: "PUT", path: "/runners/default", tags, summary: "Make one of the organization's runners the default; refused while any state is on Planton-managed storage" } })
    .input(runnerRefInput)
    .output(defaultRunnerSchema)
    .mutation(({ ctx, input }) => setDefaultRunner(ctx.db, ctx.actor, input)),
  unsetDefault: adminProcedure
    .meta({ openapi: { method: "DELETE", path: "/runners/default", tags, summary: "Clear the default runner: deploys return to a Planton-hosted runner" } })
    .output(defaultRunnerSchema)
    .mutation(({ ctx }) => unsetDefaultRunner(ctx.db, ctx.actor)),
  get: viewerProcedure
    .meta({ openapi: { method: "GET", path: "/runners/{runner}", tags, summary: "One runner with its running and recent jobs" } })
    .input(runnerRefInput)
    .output(runnerDetailSchema)
    .query(({ ctx, input }) => getRunner(ctx.db, ctx.actor, input)),
  register: adminProcedure
    .meta({ created: true, openapi: { method: "POST", path: "/runners", tags, summary: "Register a self-hosted runner (201); its token is returned once" } })
    .input(registerRunnerBody)
    .output(runnerTokenSchema)
    .mutation(({ ctx, input }) => registerOwnRunner(ctx.db, ctx.actor, input)),
  /** Returns the new token once; the old token and the job credentials issued under it stop working. */
  rotateToken: adminProcedure
    .meta({ openapi: { method: "POST", path: "/runners/{runner}/rotate-token", tags, summary: "A new token, returned once; the old one and its jobs' credentials stop working" } })
    .input(runnerRefInput)
    .output(runnerTokenSchema)
    .mutation(({ ctx, input }) => rotateOwnRunnerToken(ctx.db, ctx.actor, input)),
  revoke: adminProcedure
    .meta({ openapi: { method: "POST", path: "/runners/{runner}/revoke", tags, summary: "Revoke a runner: its claims and heartbeats are refused at once; its running jobs fail" } })
    .input(runnerRefInput)
    .output(runnerRevokedSchema)
    .mutation(({ ctx, input }) => revokeOwnRunner(ctx.db, ctx.actor, input)),
});
