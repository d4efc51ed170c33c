// Registering a module version in the organization's registry (planton module register, Settings → Modules).
import type { z } from "zod";
import type { Database } from "@/db/client";
import { registerModuleBody, type ModuleVersion } from "@/lib/api/module-schemas";
import type { Actor } from "../../actor";
import { PlantonError } from "../../errors";

export async function registerModule(db: Database, actor: Actor, raw: z.input<typeof registerModuleBody>): Promise<ModuleVersion> {
  registerModuleBody.parse(raw);
  void db;
  void actor;
  throw new PlantonError("PRECONDITION_FAILED", "Nothing was registered: registering module versions is not implemented yet.");
}
