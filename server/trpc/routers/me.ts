import { authedProcedure, router } from "../init";
import { organizationsOfUser } from "../../services/organizations/lookup";
import { myApiTokensRouter } from "./api-tokens";

export const meRouter = router({
  get: authedProcedure.query(async ({ ctx }) => ({
    user: { id: ctx.caller.userId, email: ctx.caller.email, name: ctx.caller.name },
    organizations: (await organizationsOfUser(ctx.db, ctx.caller.userId)).filter((o) => !ctx.caller.tokenOrgId || o.id === ctx.caller.tokenOrgId),
  })),
  apiTokens: myApiTokensRouter,
});
