// Where a `local` state backend may keep its files. The console itself reads and writes them, in a folder an
// organization's admin names: unconfined, an admin could point a backend at another organization's states (and
// read them, secrets and all, through a component of the same name) or at the console's own files. So the
// folder must lie under the organization's own folder, <data folder>/local-states/<organization id>, or under
// one the console's operator allows (PLANTON_STATE_LOCAL_ROOTS) — the rule hosted runners follow for `local`
// connections (PLANTON_LOCAL_ROOTS) and module registration for file:// URLs (PLANTON_MODULE_LOCAL_ROOTS).
// Folders the operator allows are shared by every organization, so a folder there may not be, hold or lie
// inside another organization's backend's folder; and the rest of the data folder is never one, whatever
// the operator allows.
import path from "node:path";
import { and, eq, ne, sql } from "drizzle-orm";
import { LOCAL_STATE_FOLDERS_LOCK } from "@/db/advisory-locks";
import type { Queryable } from "@/db/client";
import { stateBackends } from "@/db/schema";
import { confined } from "@/lib/confined-path";
import { serverConfig, type ServerConfig } from "../../config";

/** The folder under the data folder that holds every organization's own folder of local states. */
export const localStatesBase = (dataDir: string) => path.join(dataDir, "local-states");

/** The folders an organization's `local` backends may keep their files in: its own and those the operator allows (and the data folder, which holds its own). */
export function localStateFolders(orgId: string, config: Pick<ServerConfig, "PLANTON_DATA_DIR" | "PLANTON_STATE_LOCAL_ROOTS"> = serverConfig()) {
  const dataDir = config.PLANTON_DATA_DIR;
  return { dataDir, own: path.join(localStatesBase(dataDir), orgId), allowed: config.PLANTON_STATE_LOCAL_ROOTS };
}
export type LocalStateFolders = ReturnType<typeof localStateFolders>;

/** What to do about a refused folder, in every refusal's words. */
export const localFolderFix = ({ own }: LocalStateFolders) => `Choose a folder under ${own}, or have the console's operator allow the folder with PLANTON_STATE_LOCAL_ROOTS`;

/** Why an organization's `local` backend (with these folders) may not keep its files in `folder` (as the clause after "its folder …"), or null when it may. */
export function localFolderRefusal({ dataDir, own, allowed }: LocalStateFolders, folder: string): string | null {
  if (!path.isAbsolute(folder)) return `its folder ${folder} is not an absolute path`;
  if (confined(own, folder)) return null;
  // The console's own files (its key, database, other organizations' folders) are never a state folder, whatever the operator allows.
  if (confined(dataDir, folder) || confined(folder, dataDir)) return `its folder ${folder} is, holds or lies inside the console's data folder, outside ${own}, where this organization's local states are kept`;
  if (allowed.some((root) => confined(root, folder))) return null;
  return `its folder ${folder} is outside ${own}, where this organization's local states are kept${allowed.length ? ` (the operator also allows ${allowed.join(", ")})` : ""}`;
}

/**
 * Why `folder` may not be used because another organization's `local` backend uses it, or a folder holding it or
 * inside it (which organization and backend is not said), or null.
 */
export async function sharedFolderRefusal(db: Queryable, orgId: string, folder: string): Promise<string | null> {
  const others = await db.select({ config: stateBackends.config }).from(stateBackends).where(and(eq(stateBackends.kind, "local"), ne(stateBackends.orgId, orgId)));
  for (const { config } of others) {
    const theirs = (config as { path?: unknown } | null)?.path;
    if (typeof theirs !== "string" || !theirs) continue;
    if (confined(theirs, folder) || confined(folder, theirs)) return `its folder ${folder} is, holds or lies inside the folder of another organization's state backend`;
  }
  return null;
}

/**
 * sharedFolderRefusal again, inside the transaction that saves the backend and under a lock every such save takes:
 * the check made before the access test cannot see a backend another organization saves meanwhile, so two admins
 * saving at once could otherwise both claim one shared folder. The lock is held to the transaction's end.
 */
export async function sharedFolderRefusalAtSave(tx: Queryable, orgId: string, folder: string): Promise<string | null> {
  await tx.execute(sql`select pg_advisory_xact_lock(${LOCAL_STATE_FOLDERS_LOCK})`);
  return sharedFolderRefusal(tx, orgId, folder);
}
