import { z } from "zod";
import { adminProcedure, router, viewerProcedure } from "../init";
import { createEnvironment, deleteEnvironment, environmentInput, listEnvironments, updateEnvironment } from "../../services/settings/environments";

export const environmentsRouter = router({
  list: viewerProcedure.query(({ ctx }) => listEnvironments(ctx.db, ctx.actor.orgId)),
  create: adminProcedure.input(environmentInput).mutation(({ ctx, input }) => createEnvironment(ctx.db, ctx.actor, input)),
  update: adminProcedure.input(z.object({ id: z.string(), description: z.string().max(300) })).mutation(({ ctx, input }) => updateEnvironment(ctx.db, ctx.actor, input)),
  delete: adminProcedure.input(z.object({ id: z.string() })).mutation(({ ctx, input }) => deleteEnvironment(ctx.db, ctx.actor, input.id)),
});
