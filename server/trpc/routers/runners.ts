import { adminProcedure, router } from "../init";
import { revokeRunner, runnerIdInput } from "../../services/runners/revoke-runner";
import { rotateRunnerToken } from "../../services/runners/rotate-runner-token";

/** Settings → Runners: an organization's own runners. */
export const runnersRouter = router({
  /** Returns the new token once; the old token and the job credentials issued under it stop working. */
  rotateToken: adminProcedure.input(runnerIdInput).mutation(({ ctx, input }) => rotateRunnerToken(ctx.db, ctx.actor, input)),
  revoke: adminProcedure.input(runnerIdInput).mutation(({ ctx, input }) => revokeRunner(ctx.db, ctx.actor, input)),
});
