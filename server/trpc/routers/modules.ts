import {
  listModulesInput,
  moduleListSchema,
  modulePolicyBody,
  modulePolicySchema,
  moduleRefInput,
  moduleVersionInput,
  moduleVersionListSchema,
  moduleVersionSchema,
  registerModuleBody,
} from "@/lib/api/module-schemas";
import { adminProcedure, engineerProcedure, router, viewerProcedure } from "../init";
import { getModuleVersion, listModuleVersions } from "../../services/modules/get-module";
import { listModules } from "../../services/modules/list-modules";
import { registerModule } from "../../services/modules/register-module";
import { setModulePolicy } from "../../services/modules/set-policy";

const tags = ["Modules"];

// Order matters for REST: PUT /modules/policy is matched before anything under /modules/{name}.
/** Settings → Modules and `planton module …`: everyone reads; admins register (engineers too when the organization allows it). */
export const modulesRouter = router({
  list: viewerProcedure
    .meta({ openapi: { method: "GET", path: "/modules", tags, summary: "The organization's modules and the platform's: kind, provisioner, latest version, components using each; and who may register" } })
    .input(listModulesInput)
    .output(moduleListSchema)
    .query(({ ctx, input }) => listModules(ctx.db, ctx.actor, input)),
  setPolicy: adminProcedure
    .meta({ openapi: { method: "PUT", path: "/modules/policy", tags, summary: "Whether engineers may register module versions (admins always may)" } })
    .input(modulePolicyBody)
    .output(modulePolicySchema)
    .mutation(({ ctx, input }) => setModulePolicy(ctx.db, ctx.actor, input)),
  get: viewerProcedure
    .meta({ openapi: { method: "GET", path: "/modules/{name}", tags, summary: "A module's latest version: source, checksum, inputs, README, components using it" } })
    .input(moduleRefInput)
    .output(moduleVersionSchema)
    .query(({ ctx, input }) => getModuleVersion(ctx.db, ctx.actor, input)),
  versions: viewerProcedure
    .meta({ openapi: { method: "GET", path: "/modules/{name}/versions", tags, summary: "Every registered version of a module, newest first" } })
    .input(moduleRefInput)
    .output(moduleVersionListSchema)
    .query(({ ctx, input }) => listModuleVersions(ctx.db, ctx.actor, input)),
  version: viewerProcedure
    .meta({ openapi: { method: "GET", path: "/modules/{name}/versions/{version}", tags, summary: "One version of a module" } })
    .input(moduleVersionInput)
    .output(moduleVersionSchema)
    .query(({ ctx, input }) => getModuleVersion(ctx.db, ctx.actor, input)),
  /** Engineers are let through here; the service refuses them unless the organization's policy allows it. */
  register: engineerProcedure
    .meta({
      created: true,
      openapi: {
        method: "POST",
        path: "/modules",
        tags,
        summary: "Register a module version from a git repository or an uploaded .tar.gz/.zip (201): fetched once, stored immutably with its SHA-256; a new kind's fields come from its variables",
      },
    })
    .input(registerModuleBody)
    .output(moduleVersionSchema)
    .mutation(({ ctx, input }) => registerModule(ctx.db, ctx.actor, input)),
});
