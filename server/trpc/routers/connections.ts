import { router, viewerProcedure } from "../init";
import { listConnections } from "../../services/settings/connections";

export const connectionsRouter = router({
  list: viewerProcedure.query(({ ctx }) => listConnections(ctx.db, ctx.actor.orgId)),
});
