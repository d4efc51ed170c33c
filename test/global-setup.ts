import type { TestProject } from "vitest/node";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startCluster, type Cluster } from "./postgres-cluster";
import { openDatabase } from "../db/client";

declare module "vitest" {
  export interface ProvidedContext {
    /** A server URL (database name left to the test) whose `planton_template` database is migrated. */
    postgresBaseUrl: string;
    /** A file holding a migrated PGlite data folder (`dumpDataDir`): each PGlite test database starts from it. */
    pgliteTemplate: string;
  }
}

/** Starts a throwaway Postgres (unless DATABASE_URL is given) and migrates a template database on it. */
async function preparePostgres(): Promise<{ baseUrl: string; stop: () => void }> {
  let cluster: Cluster | undefined;
  let adminUrl: string;
  if (process.env.DATABASE_URL) {
    adminUrl = process.env.DATABASE_URL;
  } else {
    cluster = await startCluster();
    adminUrl = cluster.url("postgres");
  }
  const { default: postgres } = await import("postgres");
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe("drop database if exists planton_template");
  await admin.unsafe("create database planton_template");
  await admin.end();
  const base = new URL(adminUrl);
  base.pathname = "/planton_template";
  const handle = await openDatabase({ url: base.toString() });
  await handle.close();
  base.pathname = "/";
  return { baseUrl: base.toString(), stop: () => cluster?.stop() };
}

/** Migrates one PGlite and dumps its data folder to a file: loading it costs a second, migrating a fresh one seconds of WASM per suite. */
async function preparePglite(): Promise<{ file: string; stop: () => void }> {
  const pglite = await openDatabase({ dataDir: "memory://" });
  const dump = await pglite.dumpDataDir!();
  await pglite.close();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "planton-pglite-template-"));
  const file = path.join(dir, "migrated.tar");
  fs.writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  return { file, stop: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

// Vitest runs this setup once per project, and once more for the root, in one process: they share one of each.
const shared = globalThis as {
  plantonTestPostgres?: ReturnType<typeof preparePostgres>;
  plantonTestPglite?: ReturnType<typeof preparePglite>;
  plantonTestSetups?: number;
};

export default async function setup(project: TestProject) {
  shared.plantonTestSetups = (shared.plantonTestSetups ?? 0) + 1;
  const pg = await (shared.plantonTestPostgres ??= preparePostgres());
  project.provide("postgresBaseUrl", pg.baseUrl);
  if (project.config.env?.PLANTON_TEST_DRIVER === "pglite") project.provide("pgliteTemplate", (await (shared.plantonTestPglite ??= preparePglite())).file);
  return async () => {
    if (--shared.plantonTestSetups! > 0) return;
    pg.stop();
    (await shared.plantonTestPglite)?.stop();
  };
}
