import { z } from "zod";
import {
  accessCheckSchema,
  componentStateSchema,
  forceUnlockSchema,
  plantonManagedUsageInput,
  plantonManagedUsageSchema,
  setDefaultBody,
  stateBackendBody,
  stateBackendDeletedSchema,
  stateBackendListSchema,
  stateBackendPatch,
  stateBackendSavedSchema,
  stateBackendSchema,
  testAccessBody,
} from "@/lib/api/state-schemas";
import { adminProcedure, router, viewerProcedure } from "../init";
import {
  createStateBackend,
  deleteStateBackend,
  getStateBackend,
  listStateBackends,
  setDefaultStateBackend,
  testStateBackendAccess,
  unsetDefaultStateBackend,
  updateStateBackend,
} from "../../services/state-backends/backends";
import { forceUnlockComponentState } from "../../services/state-backends/force-unlock";
import { plantonManagedUsage } from "../../services/state-backends/planton-managed-usage";
import { getComponentState } from "../../services/state/component-state";

const tags = ["State Backends"];
const byName = z.object({ name: z.string().min(1) });

// Order matters for REST: /state-backends/planton-managed is matched before /state-backends/{name}.
export const stateBackendsRouter = router({
  list: viewerProcedure
    .meta({ openapi: { method: "GET", path: "/state-backends", tags, summary: "The organization's state backends: kind, connection, components served, default per provisioner" } })
    .output(stateBackendListSchema)
    .query(({ ctx }) => listStateBackends(ctx.db, ctx.actor)),
  plantonManaged: viewerProcedure
    .meta({ openapi: { method: "GET", path: "/state-backends/planton-managed", tags, summary: "Every state still on Planton-managed storage (with limit: the first that many), with totals per environment and per provisioner" } })
    .input(plantonManagedUsageInput)
    .output(plantonManagedUsageSchema)
    .query(({ ctx, input }) => plantonManagedUsage(ctx.db, ctx.actor, input)),
  get: viewerProcedure
    .meta({ openapi: { method: "GET", path: "/state-backends/{name}", tags, summary: "One state backend" } })
    .input(byName)
    .output(stateBackendSchema)
    .query(({ ctx, input }) => getStateBackend(ctx.db, ctx.actor, input)),
  testAccess: adminProcedure
    .meta({ openapi: { method: "POST", path: "/state-backends/test-access", tags, summary: "Write, read back and delete a probe state in a saved backend (name) or an unsaved one (kind, config, connection)" } })
    .input(testAccessBody)
    .output(accessCheckSchema)
    .mutation(({ ctx, input }) => testStateBackendAccess(ctx.db, ctx.actor, input)),
  create: adminProcedure
    .meta({ created: true, openapi: { method: "POST", path: "/state-backends", tags, summary: "Create a state backend (201) after its access test; a failing test saves nothing" } })
    .input(stateBackendBody)
    .output(stateBackendSavedSchema)
    .mutation(({ ctx, input }) => createStateBackend(ctx.db, ctx.actor, input)),
  update: adminProcedure
    .meta({ openapi: { method: "PATCH", path: "/state-backends/{name}", tags, summary: "Change a backend's kind, config or connection after its access test" } })
    .input(stateBackendPatch)
    .output(stateBackendSavedSchema)
    .mutation(({ ctx, input }) => updateStateBackend(ctx.db, ctx.actor, input)),
  delete: adminProcedure
    .meta({ openapi: { method: "DELETE", path: "/state-backends/{name}", tags, summary: "Delete a backend that keeps no component's state and is no default" } })
    .input(byName)
    .output(stateBackendDeletedSchema)
    .mutation(({ ctx, input }) => deleteStateBackend(ctx.db, ctx.actor, input)),
  setDefault: adminProcedure
    .meta({ openapi: { method: "PUT", path: "/state-backends/defaults/{provisioner}", tags, summary: "Make a backend the default for a provisioner: new components keep their state there" } })
    .input(setDefaultBody)
    .output(stateBackendListSchema)
    .mutation(({ ctx, input }) => setDefaultStateBackend(ctx.db, ctx.actor, input)),
  unsetDefault: adminProcedure
    .meta({ openapi: { method: "DELETE", path: "/state-backends/defaults/{provisioner}", tags, summary: "Remove a provisioner's default: new components keep their state on Planton-managed storage" } })
    .input(z.object({ provisioner: z.string().min(1) }))
    .output(stateBackendListSchema)
    .mutation(({ ctx, input }) => unsetDefaultStateBackend(ctx.db, ctx.actor, input)),
  forceUnlock: adminProcedure
    .meta({ openapi: { method: "POST", path: "/components/{componentId}/state/force-unlock", tags, summary: "Remove the lock on a component's state whatever its holder (recorded in the audit log)" } })
    .input(z.object({ componentId: z.string().min(1) }))
    .output(forceUnlockSchema)
    .mutation(({ ctx, input }) => forceUnlockComponentState(ctx.db, ctx.actor, input)),
  componentState: viewerProcedure
    .meta({ openapi: { method: "GET", path: "/components/{componentId}/state", tags, summary: "What a component's state holds: its resources (what a destroy deletes), backend, serial and lineage; never a value" } })
    .input(z.object({ componentId: z.string().min(1) }))
    .output(componentStateSchema)
    .query(async ({ ctx, input }) => {
      const st = await getComponentState(ctx.db, ctx.actor.orgId, input.componentId);
      return {
        componentId: input.componentId,
        format: st?.format ?? null,
        backend: st?.backend.name ?? null,
        serial: st?.serial ?? null,
        lineage: st?.lineage ?? null,
        updatedAt: st?.updatedAt ?? null,
        resources: (st?.resources ?? []).map((r) => ({ address: r.address, type: r.type, instances: r.instances })),
      };
    }),
});
