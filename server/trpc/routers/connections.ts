import { z } from "zod";
import { addAuthorizationBody, authorizationChangeSchema, authorizationListSchema, listAuthorizationsInput, removeAuthorizationInput } from "@/lib/api/connection-schemas";
import { adminProcedure, router, viewerProcedure } from "../init";
import {
  addConnectionAuthorizations,
  authorizationInput,
  connectionInput,
  createConnection,
  deleteConnection,
  listConnectionAuthorizations,
  listConnections,
  listRunnerChoices,
  removeConnectionAuthorizations,
  setConnectionAuthorizations,
  updateConnection,
  updateConnectionInput,
} from "../../services/settings/connections";

const tags = ["Connections"];

export const connectionsRouter = router({
  list: viewerProcedure.query(({ ctx }) => listConnections(ctx.db, ctx.actor.orgId)),
  runners: viewerProcedure.query(({ ctx }) => listRunnerChoices(ctx.db, ctx.actor.orgId)),
  create: adminProcedure.input(connectionInput).mutation(({ ctx, input }) => createConnection(ctx.db, ctx.actor, input)),
  update: adminProcedure.input(updateConnectionInput).mutation(({ ctx, input }) => updateConnection(ctx.db, ctx.actor, input)),
  /** The console's form: replaces who may use the connection. */
  authorize: adminProcedure.input(authorizationInput).mutation(({ ctx, input }) => setConnectionAuthorizations(ctx.db, ctx.actor, input)),
  delete: adminProcedure.input(z.object({ id: z.string() })).mutation(({ ctx, input }) => deleteConnection(ctx.db, ctx.actor, input.id)),
  // `planton connection auth list|create|delete`: the preflight's unauthorized-connection refusal names create.
  listAuthorizations: viewerProcedure
    .meta({ openapi: { method: "GET", path: "/connections/authorizations", tags, summary: "Who may use each connection (or the one named): the organization, or environments by name" } })
    .input(listAuthorizationsInput)
    .output(authorizationListSchema)
    .query(({ ctx, input }) => listConnectionAuthorizations(ctx.db, ctx.actor, input)),
  addAuthorization: adminProcedure
    .meta({ created: true, openapi: { method: "POST", path: "/connections/{connection}/authorizations", tags, summary: "Let the organization, or the environments named, use a connection (201); those already allowed stay" } })
    .input(addAuthorizationBody)
    .output(authorizationChangeSchema)
    .mutation(({ ctx, input }) => addConnectionAuthorizations(ctx.db, ctx.actor, input)),
  removeAuthorization: adminProcedure
    .meta({ openapi: { method: "DELETE", path: "/connections/{connection}/authorizations", tags, summary: "Remove exactly the authorizations named (scope, and environments for scope environment); one that does not exist is refused" } })
    .input(removeAuthorizationInput)
    .output(authorizationChangeSchema)
    .mutation(({ ctx, input }) => removeConnectionAuthorizations(ctx.db, ctx.actor, input)),
});
