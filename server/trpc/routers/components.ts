import { z } from "zod";
import { engineerProcedure, router, viewerProcedure } from "../init";
import { createComponent, createComponentInput } from "../../services/components/create-component";
import { getComponent, listComponents } from "../../services/components/queries";
import { updateComponent, updateComponentInput } from "../../services/components/update-component";
import { resolveFlowControl } from "../../services/settings/flow-control";
import { getComponentState } from "../../services/state/component-state";

export const componentsRouter = router({
  list: viewerProcedure
    .input(z.object({ environment: z.string().optional(), kind: z.string().optional() }))
    .query(({ ctx, input }) => listComponents(ctx.db, ctx.actor.orgId, input)),
  get: viewerProcedure.input(z.object({ id: z.string() })).query(({ ctx, input }) => getComponent(ctx.db, ctx.actor.orgId, input.id)),
  create: engineerProcedure.input(createComponentInput).mutation(({ ctx, input }) => createComponent(ctx.db, ctx.actor, input)),
  update: engineerProcedure.input(updateComponentInput).mutation(({ ctx, input }) => updateComponent(ctx.db, ctx.actor, input)),
  state: viewerProcedure.input(z.object({ id: z.string() })).query(({ ctx, input }) => getComponentState(ctx.db, ctx.actor.orgId, input.id)),
  flowControl: viewerProcedure.input(z.object({ id: z.string() })).query(async ({ ctx, input }) => {
    const c = await getComponent(ctx.db, ctx.actor.orgId, input.id);
    return resolveFlowControl(ctx.db, {
      orgId: ctx.org.id,
      orgSlug: ctx.org.slug,
      environmentId: c.environmentId,
      environmentName: c.environment,
      componentId: c.id,
      componentName: c.name,
    });
  }),
});
