// Each test file gets its own database: a copy of the migrated template on the test Postgres,
// or an in-memory PGlite loaded from the migrated template when PLANTON_TEST_DRIVER=pglite.
import { inject } from "vitest";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import { openDatabase, type DatabaseHandle } from "../db/client";

export const testDriver = (process.env.PLANTON_TEST_DRIVER ?? "postgres") as "postgres" | "pglite";

export interface TestDatabase extends DatabaseHandle {
  url?: string;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  if (testDriver === "pglite") return openDatabase({ dataDir: "memory://", loadDataDir: new Blob([fs.readFileSync(inject("pgliteTemplate"))]), migrate: false });
  const base = new URL(inject("postgresBaseUrl"));
  const name = `t_${randomBytes(6).toString("hex")}`;
  const { default: postgres } = await import("postgres");
  const admin = postgres(new URL("/postgres", base).toString(), { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name} template planton_template`);
  await admin.end();
  const url = new URL(`/${name}`, base).toString();
  const handle = await openDatabase({ url, migrate: false });
  return { ...handle, url };
}
