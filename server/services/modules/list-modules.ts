// Settings → Modules, `planton module list`: the modules the organization can use, one row per name.
import { inArray } from "drizzle-orm";
import type { z } from "zod";
import type { Queryable } from "@/db/client";
import { iacModules } from "@/db/schema";
import { listModulesInput, type moduleListSchema, type ModuleRow as ModuleListRow } from "@/lib/api/module-schemas";
import type { Actor } from "../../actor";
import { newestModuleFirst } from "../catalog";
import { mayRegisterModules, modulePolicy, moduleUsers } from "./views";

export async function listModules(db: Queryable, actor: Actor, raw: z.input<typeof listModulesInput>): Promise<z.infer<typeof moduleListSchema>> {
  const input = listModulesInput.parse(raw);
  const rows = (await db.select().from(iacModules).where(inArray(iacModules.scopeKey, [actor.orgId, "platform"]))).filter((r) => !input.kind || r.kind === input.kind);
  const users = await moduleUsers(db, actor.orgId, [...new Set(rows.map((r) => r.kind))]);
  const byName = new Map<string, typeof rows>();
  for (const r of rows.sort(newestModuleFirst)) {
    // An organization's module of a name shadows the platform's of the same name.
    const key = r.name;
    const list = byName.get(key) ?? [];
    if (list.length && list[0].scopeKey !== r.scopeKey) {
      if (r.scopeKey === "platform") continue;
      if (list[0].scopeKey === "platform") list.length = 0;
    }
    list.push(r);
    byName.set(key, list);
  }
  const modules: ModuleListRow[] = [...byName.values()].map((versions) => {
    const latest = versions[0];
    const ids = new Set(versions.map((v) => v.id));
    return {
      name: latest.name,
      kind: latest.kind,
      provisioner: latest.provisioner,
      scope: latest.scopeKey === "platform" ? "platform" : "organization",
      latestVersion: latest.version,
      versionCount: versions.length,
      componentsUsing: users.filter((u) => ids.has(u.moduleId)).length,
    };
  });
  modules.sort((a, b) => (a.scope === b.scope ? a.name.localeCompare(b.name) : a.scope === "organization" ? -1 : 1));
  const policy = await modulePolicy(db, actor.orgId);
  return { modules, policy, mayRegister: mayRegisterModules(actor.role, policy) };
}
