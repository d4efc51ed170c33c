import { z } from "zod";
import { adminProcedure, router, viewerProcedure } from "../init";
import { createSecret, createSecretInput, deleteSecret, listSecrets, updateSecret, updateSecretInput } from "../../services/settings/secrets";

// No procedure returns a secret's value: jobs read them through the runner API with a job credential.
export const secretsRouter = router({
  list: viewerProcedure.query(({ ctx }) => listSecrets(ctx.db, ctx.actor.orgId)),
  create: adminProcedure.input(createSecretInput).mutation(({ ctx, input }) => createSecret(ctx.db, ctx.actor, input)),
  update: adminProcedure.input(updateSecretInput).mutation(({ ctx, input }) => updateSecret(ctx.db, ctx.actor, input)),
  delete: adminProcedure.input(z.object({ id: z.string() })).mutation(({ ctx, input }) => deleteSecret(ctx.db, ctx.actor, input.id)),
});
