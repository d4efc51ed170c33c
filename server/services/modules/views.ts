// What the API answers for a module version, and which components run it now.
import { and, eq, inArray } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { iacModules, infraComponents, organizations } from "@/db/schema";
import type { ModuleInput, ModuleVersion } from "@/lib/api/module-schemas";
import type { Role } from "@/lib/roles";
import { roleAllows } from "@/lib/roles";
import { newestModuleFirst } from "../catalog";
import { notGone, selectComponents } from "../components/queries";
import { componentModules, type ModuleRow } from "./resolve";
import { maskedDefault } from "./inputs";

export type ModuleUser = { id: string; name: string; environment: string; moduleId: string };

/** The organization's managed components of some kinds, each with the module version it runs now. */
export async function moduleUsers(db: Queryable, orgId: string, kinds: string[]): Promise<ModuleUser[]> {
  if (!kinds.length) return [];
  const comps = await selectComponents(db, and(eq(infraComponents.orgId, orgId), inArray(infraComponents.kind, kinds), notGone));
  const chosen = await componentModules(db, orgId, comps);
  return comps.flatMap((c) => {
    const m = chosen.get(c.id)?.module;
    return m ? [{ id: c.id, name: c.name, environment: c.environment, moduleId: m.id }] : [];
  });
}

export function toModuleVersion(m: ModuleRow, users: ModuleUser[]): ModuleVersion {
  return {
    id: m.id,
    name: m.name,
    version: m.version,
    kind: m.kind,
    provisioner: m.provisioner,
    scope: m.scopeKey === "platform" ? "platform" : "organization",
    source: {
      kind: m.sourceKind,
      url: m.gitUrl,
      ref: m.gitRef,
      commit: m.gitCommit,
      path: m.sourceKind === "builtin" ? m.source : m.gitPath,
      archiveName: m.archiveName,
    },
    sha256: m.bundleSha256,
    size: m.size,
    fileCount: m.fileCount,
    inputs: (m.inputs as ModuleInput[]).map(maskedDefault),
    readme: m.readme,
    registeredBy: m.registeredByLabel,
    createdAt: m.createdAt,
    usedBy: users.filter((u) => u.moduleId === m.id).map(({ id, name, environment }) => ({ id, name, environment })),
  };
}

/** The organization's policy: may engineers register module versions? */
export async function modulePolicy(db: Queryable, orgId: string) {
  const [org] = await db.select({ engineersMayRegister: organizations.engineersRegisterModules }).from(organizations).where(eq(organizations.id, orgId));
  return { engineersMayRegister: !!org?.engineersMayRegister };
}

export const mayRegisterModules = (role: Role, policy: { engineersMayRegister: boolean }) => roleAllows(role, "admin") || (role === "engineer" && policy.engineersMayRegister);

/** Every version of the module `name` the organization can see (its own, else the platform's), newest first. */
export async function versionsOf(db: Queryable, orgId: string, name: string): Promise<ModuleRow[]> {
  const rows = await db.select().from(iacModules).where(and(eq(iacModules.name, name), inArray(iacModules.scopeKey, [orgId, "platform"])));
  const own = rows.filter((r) => r.scopeKey === orgId);
  return (own.length ? own : rows).sort(newestModuleFirst);
}
