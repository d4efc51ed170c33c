import { z } from "zod";
import { adminProcedure, router, viewerProcedure } from "../init";
import { addMember, addMemberInput, changeMemberRole, changeRoleInput, listMembers, removeMember, resetMemberSignIn } from "../../services/settings/members";

export const membersRouter = router({
  list: viewerProcedure.query(({ ctx }) => listMembers(ctx.db, ctx.actor.orgId)),
  add: adminProcedure.input(addMemberInput).mutation(({ ctx, input }) => addMember(ctx.db, ctx.actor, input)),
  changeRole: adminProcedure.input(changeRoleInput).mutation(({ ctx, input }) => changeMemberRole(ctx.db, ctx.actor, input)),
  resetSignIn: adminProcedure.input(z.object({ id: z.string() })).mutation(({ ctx, input }) => resetMemberSignIn(ctx.db, ctx.actor, input.id)),
  remove: adminProcedure.input(z.object({ id: z.string() })).mutation(({ ctx, input }) => removeMember(ctx.db, ctx.actor, input.id)),
});
