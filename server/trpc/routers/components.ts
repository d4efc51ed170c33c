import { z } from "zod";
import {
  componentChangeSchema,
  componentListSchema,
  componentSchema,
  componentVersionListSchema,
  createComponentBody,
  deleteComponentBody,
  forgetComponentBody,
  forgetResultSchema,
  listComponentsInput,
  updateComponentBody,
} from "@/lib/api/component-schemas";
import { adminProcedure, engineerProcedure, router, viewerProcedure } from "../init";
import { getComponent } from "../../services/components/queries";
import {
  changeComponent,
  createComponentAndDeploy,
  deleteComponent,
  forgetComponent,
  getComponentView,
  listComponentVersions,
  listComponentViews,
} from "../../services/components/lifecycle";
import { resolveFlowControl } from "../../services/settings/flow-control";
import { getComponentState } from "../../services/state/component-state";
import { diffStateVersions, listStateVersions, rollbackStateVersion } from "../../services/state/state-versions";

const tags = ["Infra Components"];
const byId = z.object({ id: z.string().min(1) });

export const componentsRouter = router({
  list: viewerProcedure
    .meta({ openapi: { method: "GET", path: "/components", tags, summary: "The organization's Infra Components (?show=gone: the deleted and forgotten ones), newest first" } })
    .input(listComponentsInput)
    .output(componentListSchema)
    .query(({ ctx, input }) => listComponentViews(ctx.db, ctx.actor, input)),
  get: viewerProcedure
    .meta({ openapi: { method: "GET", path: "/components/{id}", tags, summary: "One Infra Component: its configuration, status, spec version, newest job and what you may do with it now" } })
    .input(byId)
    .output(componentSchema)
    .query(({ ctx, input }) => getComponentView(ctx.db, ctx.actor, input.id)),
  create: engineerProcedure
    .meta({ created: true, openapi: { method: "POST", path: "/components", tags, summary: "Create an Infra Component and queue its first update job (201); deploy: false saves a draft" } })
    .input(createComponentBody)
    .output(componentChangeSchema)
    .mutation(({ ctx, input }) => createComponentAndDeploy(ctx.db, ctx.actor, input)),
  update: engineerProcedure
    .meta({ openapi: { method: "PATCH", path: "/components/{id}", tags, summary: "Change the component: records the next spec version and queues an update job for it; send baseVersion so a concurrent change is refused, not lost" } })
    .input(updateComponentBody)
    .output(componentChangeSchema)
    .mutation(({ ctx, input }) => changeComponent(ctx.db, ctx.actor, input)),
  delete: engineerProcedure
    .meta({ openapi: { method: "DELETE", path: "/components/{id}", tags, summary: "Delete the component: a destroy job runs under flow control, and when it succeeds the component is removed (its history stays); also retries a failed delete" } })
    .input(deleteComponentBody)
    .output(componentChangeSchema)
    .mutation(({ ctx, input }) => deleteComponent(ctx.db, ctx.actor, input)),
  forget: adminProcedure
    .meta({ openapi: { method: "POST", path: "/components/{id}/forget", tags, summary: "Admins: remove the component from Planton without destroying its resources (send confirmName); its state is kept for export" } })
    .input(forgetComponentBody)
    .output(forgetResultSchema)
    .mutation(({ ctx, input }) => forgetComponent(ctx.db, ctx.actor, input)),
  versions: viewerProcedure
    .meta({ openapi: { method: "GET", path: "/components/{id}/versions", tags, summary: "The component's spec versions, newest first, each with its field-level diff from the one before and the jobs that ran it" } })
    .input(byId)
    .output(componentVersionListSchema)
    .query(({ ctx, input }) => listComponentVersions(ctx.db, ctx.actor.orgId, input.id)),
  state: viewerProcedure.input(byId).query(({ ctx, input }) => getComponentState(ctx.db, ctx.actor.orgId, input.id)),
  stateVersions: viewerProcedure.input(byId).query(({ ctx, input }) => listStateVersions(ctx.db, ctx.actor, { componentId: input.id })),
  stateDiff: viewerProcedure
    .input(z.object({ id: z.string(), fromId: z.string(), toId: z.string() }))
    .query(({ ctx, input }) => diffStateVersions(ctx.db, ctx.actor, { componentId: input.id, fromId: input.fromId, toId: input.toId })),
  stateRollback: adminProcedure
    .input(z.object({ id: z.string(), versionId: z.string() }))
    .mutation(({ ctx, input }) => rollbackStateVersion(ctx.db, ctx.actor, { componentId: input.id, versionId: input.versionId })),
  flowControl: viewerProcedure.input(byId).query(async ({ ctx, input }) => {
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
