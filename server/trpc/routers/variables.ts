import { z } from "zod";
import { adminProcedure, router, viewerProcedure } from "../init";
import { createVariable, deleteVariable, listVariables, updateVariable, updateVariableInput, variableInput } from "../../services/settings/secrets";

export const variablesRouter = router({
  list: viewerProcedure.query(({ ctx }) => listVariables(ctx.db, ctx.actor.orgId)),
  create: adminProcedure.input(variableInput).mutation(({ ctx, input }) => createVariable(ctx.db, ctx.actor, input)),
  update: adminProcedure.input(updateVariableInput).mutation(({ ctx, input }) => updateVariable(ctx.db, ctx.actor, input)),
  delete: adminProcedure.input(z.object({ id: z.string() })).mutation(({ ctx, input }) => deleteVariable(ctx.db, ctx.actor, input.id)),
});
