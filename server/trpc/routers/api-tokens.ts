import { z } from "zod";
import { adminProcedure, router, viewerProcedure } from "../init";
import { createApiToken, createApiTokenInput, listApiTokens, revokeApiToken } from "../../services/settings/api-tokens";

/** The caller's own tokens: every member, whatever their role, may hold tokens for the CLI (mounted under `me`). */
export const myApiTokensRouter = router({
  list: viewerProcedure.query(({ ctx }) => listApiTokens(ctx.db, ctx.actor)),
  create: viewerProcedure.input(createApiTokenInput).mutation(({ ctx, input }) => createApiToken(ctx.db, ctx.actor, input)),
  revoke: viewerProcedure.input(z.object({ id: z.string() })).mutation(({ ctx, input }) => revokeApiToken(ctx.db, ctx.actor, input.id)),
});

/** Every member's tokens in the organization, for admins. */
export const apiTokensRouter = router({
  list: adminProcedure.query(({ ctx }) => listApiTokens(ctx.db, ctx.actor, { all: true })),
  revoke: adminProcedure.input(z.object({ id: z.string() })).mutation(({ ctx, input }) => revokeApiToken(ctx.db, ctx.actor, input.id)),
});
