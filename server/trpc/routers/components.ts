import { z } from "zod";
import { adminProcedure, engineerProcedure, router, viewerProcedure } from "../init";
import { createComponent, createComponentInput } from "../../services/components/create-component";
import { getComponent, listComponents } from "../../services/components/queries";
import { updateComponent, updateComponentInput } from "../../services/components/update-component";
import { resolveFlowControl } from "../../services/settings/flow-control";
import { getComponentState } from "../../services/state/component-state";
import { diffStateVersions, listStateVersions, rollbackStateVersion } from "../../services/state/state-versions";

export const componentsRouter = router({
  list: viewerProcedure
    .input(z.object({ environment: z.string().optional(), kind: z.string().optional() }))
    .query(({ ctx, input }) => listComponents(ctx.db, ctx.actor.orgId, input)),
  get: viewerProcedure.input(z.object({ id: z.string() })).query(({ ctx, input }) => getComponent(ctx.db, ctx.actor.orgId, input.id)),
  create: engineerProcedure.input(createComponentInput).mutation(({ ctx, input }) => createComponent(ctx.db, ctx.actor, input)),
  update: engineerProcedure.input(updateComponentInput).mutation(({ ctx, input }) => updateComponent(ctx.db, ctx.actor, input)),
  state: viewerProcedure.input(z.object({ id: z.string() })).query(({ ctx, input }) => getComponentState(ctx.db, ctx.actor.orgId, input.id)),
  stateVersions: viewerProcedure.input(z.object({ id: z.string() })).query(({ ctx, input }) => listStateVersions(ctx.db, ctx.actor, { componentId: input.id })),
  stateDiff: viewerProcedure
    .input(z.object({ id: z.string(), fromId: z.string(), toId: z.string() }))
    .query(({ ctx, input }) => diffStateVersions(ctx.db, ctx.actor, { componentId: input.id, fromId: input.fromId, toId: input.toId })),
  stateRollback: adminProcedure
    .input(z.object({ id: z.string(), versionId: z.string() }))
    .mutation(({ ctx, input }) => rollbackStateVersion(ctx.db, ctx.actor, { componentId: input.id, versionId: input.versionId })),
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
