// `planton module get|versions`, Settings → Modules → a module: one version (the latest unless named), or all.
import type { z } from "zod";
import type { Queryable } from "@/db/client";
import type { moduleRefInput, moduleVersionInput, moduleVersionListSchema, ModuleVersion } from "@/lib/api/module-schemas";
import type { Actor } from "../../actor";
import { notFound } from "../../errors";
import { moduleUsers, toModuleVersion, versionsOf } from "./views";

async function versionsOrRefuse(db: Queryable, orgId: string, name: string) {
  const rows = await versionsOf(db, orgId, name);
  if (!rows.length) throw notFound(`Module ${name}`, "Check the name (planton module list), or register it (planton module register).");
  return rows;
}

export async function getModuleVersion(db: Queryable, actor: Actor, input: z.infer<typeof moduleRefInput> & { version?: string }): Promise<ModuleVersion> {
  const rows = await versionsOrRefuse(db, actor.orgId, input.name);
  const row = input.version === undefined ? rows[0] : rows.find((r) => r.version === input.version);
  if (!row) throw notFound(`Version ${input.version} of module ${input.name}`, `Its versions are ${rows.map((r) => r.version).join(", ")} (planton module versions ${input.name}).`);
  return toModuleVersion(row, await moduleUsers(db, actor.orgId, [row.kind]));
}

export async function listModuleVersions(db: Queryable, actor: Actor, input: z.infer<typeof moduleRefInput>): Promise<z.infer<typeof moduleVersionListSchema>> {
  const rows = await versionsOrRefuse(db, actor.orgId, input.name);
  const users = await moduleUsers(db, actor.orgId, [...new Set(rows.map((r) => r.kind))]);
  return { name: input.name, versions: rows.map((r) => toModuleVersion(r, users)) };
}

export type { moduleVersionInput };
