import { whoAmISchema } from "@/lib/api/schemas";
import { authedProcedure, router, viewerProcedure } from "../init";
import { organizationsOfUser } from "../../services/organizations/lookup";
import { myApiTokensRouter } from "./api-tokens";

export const meRouter = router({
  get: authedProcedure.query(async ({ ctx }) => ({
    user: { id: ctx.caller.userId, email: ctx.caller.email, name: ctx.caller.name },
    organizations: (await organizationsOfUser(ctx.db, ctx.caller.userId)).filter((o) => !ctx.caller.tokenOrgId || o.id === ctx.caller.tokenOrgId),
  })),
  /** Who the caller is in the organization: `planton auth login` and `auth status` verify a token with it. */
  whoami: viewerProcedure
    .meta({ openapi: { method: "GET", path: "/whoami", tags: ["Account"], summary: "Who the token speaks for: user, organization and role" } })
    .output(whoAmISchema)
    .query(({ ctx }) => ({ user: { id: ctx.caller.userId, label: ctx.actor.label }, organization: { id: ctx.org.id, slug: ctx.org.slug, name: ctx.org.name }, role: ctx.actor.role })),
  apiTokens: myApiTokensRouter,
});
