import { z } from "zod";
import { router, viewerProcedure } from "../init";
import { getCatalogKind, listCatalogKinds } from "../../services/catalog";

export const catalogRouter = router({
  kinds: viewerProcedure.query(({ ctx }) => listCatalogKinds(ctx.db, ctx.actor.orgId)),
  kind: viewerProcedure.input(z.object({ kind: z.string() })).query(({ ctx, input }) => getCatalogKind(ctx.db, ctx.actor.orgId, input.kind)),
});
