import { z } from "zod";
import { adminProcedure, router, viewerProcedure } from "../init";
import {
  authorizationInput,
  connectionInput,
  createConnection,
  deleteConnection,
  listConnections,
  listRunnerChoices,
  setConnectionAuthorizations,
  updateConnection,
  updateConnectionInput,
} from "../../services/settings/connections";

export const connectionsRouter = router({
  list: viewerProcedure.query(({ ctx }) => listConnections(ctx.db, ctx.actor.orgId)),
  runners: viewerProcedure.query(({ ctx }) => listRunnerChoices(ctx.db, ctx.actor.orgId)),
  create: adminProcedure.input(connectionInput).mutation(({ ctx, input }) => createConnection(ctx.db, ctx.actor, input)),
  update: adminProcedure.input(updateConnectionInput).mutation(({ ctx, input }) => updateConnection(ctx.db, ctx.actor, input)),
  authorize: adminProcedure.input(authorizationInput).mutation(({ ctx, input }) => setConnectionAuthorizations(ctx.db, ctx.actor, input)),
  delete: adminProcedure.input(z.object({ id: z.string() })).mutation(({ ctx, input }) => deleteConnection(ctx.db, ctx.actor, input.id)),
});
