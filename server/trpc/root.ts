import { router } from "./init";
import { catalogRouter } from "./routers/catalog";
import { connectionsRouter } from "./routers/connections";
import { componentsRouter } from "./routers/components";
import { environmentsRouter } from "./routers/environments";
import { flowControlRouter } from "./routers/flow-control";
import { meRouter } from "./routers/me";

export const appRouter = router({
  me: meRouter,
  catalog: catalogRouter,
  components: componentsRouter,
  connections: connectionsRouter,
  environments: environmentsRouter,
  flowControl: flowControlRouter,
});

export type AppRouter = typeof appRouter;
