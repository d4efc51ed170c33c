import type { TestProject } from "vitest/node";
import { startCluster, type Cluster } from "./postgres-cluster";
import { openDatabase } from "../db/client";

declare module "vitest" {
  export interface ProvidedContext {
    /** A server URL (database name left to the test) whose `planton_template` database is migrated. */
    postgresBaseUrl: string;
  }
}

let cluster: Cluster | undefined;

/** Starts a throwaway Postgres (unless DATABASE_URL is given) and migrates a template database once. */
export default async function setup(project: TestProject) {
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
  project.provide("postgresBaseUrl", base.toString());
  return async () => {
    cluster?.stop();
  };
}
