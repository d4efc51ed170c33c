// The server's process-wide parts, opened once: the database, auth, and what runs beside them.
import path from "node:path";
import { openDatabase, type DatabaseHandle } from "@/db/client";
import { createAuth, type Auth } from "./auth/auth";
import { serverConfig } from "./config";
import { describeRepair, makeDataFolderPrivate } from "./data-folder";
import { ensurePlatformCatalog } from "./services/catalog";
import { ensurePlatformPolicy } from "./services/settings/flow-control";
import { seedDemoOrganization } from "./seed";

export interface Runtime {
  handle: DatabaseHandle;
  db: DatabaseHandle["db"];
  auth: Auth;
}

const g = globalThis as unknown as { __plantonRuntime?: Promise<Runtime> };

export function getRuntime(): Promise<Runtime> {
  g.__plantonRuntime ??= boot().catch((err) => {
    g.__plantonRuntime = undefined;
    throw err;
  });
  return g.__plantonRuntime;
}

async function boot(): Promise<Runtime> {
  const config = serverConfig();
  const dataDir = config.PLANTON_DATA_DIR;
  const repaired = makeDataFolderPrivate(dataDir);
  if (repaired.length) console.log(`[data-folder] ${describeRepair(dataDir, repaired)}`);
  const handle = await openDatabase(
    config.DATABASE_URL ? { url: config.DATABASE_URL, pool: config.PLANTON_DB_POOL } : { dataDir: path.join(dataDir, "pglite") },
  );
  // PGlite creates its files 0666 and 0644 whatever the umask (its WASM file system sets modes itself): they are made private as soon as it has opened.
  if (handle.driver === "pglite") makeDataFolderPrivate(dataDir);
  const auth = createAuth(handle.db);
  await ensurePlatformCatalog(handle.db);
  await ensurePlatformPolicy(handle.db);
  await seedDemoOrganization(handle.db, auth);
  return { handle, db: handle.db, auth };
}
