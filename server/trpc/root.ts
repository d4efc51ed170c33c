import { router } from "./init";
import { auditRouter } from "./routers/audit";
import { catalogRouter } from "./routers/catalog";
import { connectionsRouter } from "./routers/connections";
import { componentsRouter } from "./routers/components";
import { environmentsRouter } from "./routers/environments";
import { flowControlRouter } from "./routers/flow-control";
import { jobsRouter } from "./routers/jobs";
import { meRouter } from "./routers/me";
import { modulesRouter } from "./routers/modules";
import { apiTokensRouter } from "./routers/api-tokens";
import { membersRouter } from "./routers/members";
import { runnersRouter } from "./routers/runners";
import { secretsRouter } from "./routers/secrets";
import { stateBackendsRouter } from "./routers/state-backends";
import { stateMovesRouter } from "./routers/state-moves";
import { variablesRouter } from "./routers/variables";

export const appRouter = router({
  me: meRouter,
  catalog: catalogRouter,
  modules: modulesRouter,
  components: componentsRouter,
  connections: connectionsRouter,
  environments: environmentsRouter,
  flowControl: flowControlRouter,
  jobs: jobsRouter,
  secrets: secretsRouter,
  variables: variablesRouter,
  members: membersRouter,
  apiTokens: apiTokensRouter,
  runners: runnersRouter,
  stateBackends: stateBackendsRouter,
  stateMoves: stateMovesRouter,
  audit: auditRouter,
});

export type AppRouter = typeof appRouter;
