import { z } from "zod";
import { adminProcedure, router, viewerProcedure } from "../init";
import { deleteFlowControlPolicy, listFlowControlPolicies, setFlowControlPolicy, setPolicyInput } from "../../services/settings/flow-control";

export const flowControlRouter = router({
  list: viewerProcedure.query(({ ctx }) => listFlowControlPolicies(ctx.db, ctx.actor.orgId)),
  set: adminProcedure.input(setPolicyInput).mutation(({ ctx, input }) => setFlowControlPolicy(ctx.db, ctx.actor, input)),
  delete: adminProcedure.input(z.object({ id: z.string() })).mutation(({ ctx, input }) => deleteFlowControlPolicy(ctx.db, ctx.actor, input.id)),
});
