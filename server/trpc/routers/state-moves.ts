import { currentMoveSchema, dryRunBody, dryRunSchema, migrateBackendResultSchema, moveOffBody, stateMoveSchema } from "@/lib/api/state-schemas";
import { MOVE_ITEMS_SHOWN } from "@/lib/state-moves";
import { adminProcedure, router, viewerProcedure } from "../init";
import { getRuntime } from "../../runtime";
import {
  currentMove,
  dryRun,
  getMove,
  getMoveInput,
  migrateBackend,
  migrateBackendInput,
  moveIdInput,
  retryMove,
  rollbackItem,
  rollbackInput,
  startMove,
  watchCurrentMove,
} from "../../services/state-backends/move";

const tags = ["State Backends"];

/** Moving states between backends: admins act, every member reads. */
export const stateMovesRouter = router({
  dryRun: adminProcedure
    .meta({ openapi: { method: "POST", path: "/state-moves/dry-run", tags, summary: "What moving every state off Planton-managed storage would do (component, keys, size, serial); changes nothing" } })
    .input(dryRunBody)
    .output(dryRunSchema)
    .mutation(({ ctx, input }) => dryRun(ctx.db, ctx.actor, input)),
  start: adminProcedure
    .meta({ created: true, openapi: { method: "POST", path: "/state-moves", tags, summary: "Move every state off Planton-managed storage (201); it runs in the background, one move at a time" } })
    .input(moveOffBody)
    .output(stateMoveSchema)
    .mutation(({ ctx, input }) => startMove(ctx.db, ctx.actor, input)),
  current: viewerProcedure
    .meta({ openapi: { method: "GET", path: "/state-moves/current", tags, summary: `The running move, else the latest one (its counts, and at most ${MOVE_ITEMS_SHOWN} items: failed first, then in flight), and how many states are left on Planton-managed storage` } })
    .output(currentMoveSchema)
    .query(({ ctx }) => currentMove(ctx.db, ctx.actor)),
  get: viewerProcedure
    .meta({ openapi: { method: "GET", path: "/state-moves/{id}", tags, summary: "One state move with every component's step (with limit: the counts, and that many items, failed first)" } })
    .input(getMoveInput)
    .output(stateMoveSchema)
    .query(({ ctx, input }) => getMove(ctx.db, ctx.actor, input)),
  retry: adminProcedure
    .meta({ openapi: { method: "POST", path: "/state-moves/{id}/retry", tags, summary: "Run a failed move's failed items again" } })
    .input(moveIdInput)
    .output(stateMoveSchema)
    .mutation(({ ctx, input }) => retryMove(ctx.db, ctx.actor, input)),
  rollback: adminProcedure
    .meta({ openapi: { method: "POST", path: "/state-moves/{id}/items/{itemId}/rollback", tags, summary: "Switch one moved component back to Planton-managed storage (what was written since is copied back first)" } })
    .input(rollbackInput)
    .output(stateMoveSchema)
    .mutation(({ ctx, input }) => rollbackItem(ctx.db, ctx.actor, input)),
  migrateBackend: adminProcedure
    .meta({ openapi: { method: "POST", path: "/components/{componentId}/state/migrate-backend", tags, summary: "Move one component's state to another backend, or only say what would move (dryRun)" } })
    .input(migrateBackendInput)
    .output(migrateBackendResultSchema)
    .mutation(({ ctx, input }) => migrateBackend(ctx.db, ctx.actor, input)),
  /** Live: the current move as its steps commit, a few times a second at most (as jobs.stream does over SSE). */
  watch: viewerProcedure.subscription(async function* ({ ctx, signal }) {
    for await (const current of watchCurrentMove((await getRuntime()).handle, ctx.actor, signal)) yield currentMoveSchema.parse(current);
  }),
});
