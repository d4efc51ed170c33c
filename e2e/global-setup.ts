// Starts what a user would: a throwaway Postgres, then the built console with hosted runners, on a
// free port. The admin sign-in is read from what the console prints on first start.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ensureBuilt, startConsoleServer } from "../test/console-server";
import { startCluster } from "../test/postgres-cluster";

export const E2E_STATE = path.join(process.cwd(), ".tmp", "e2e-state.json");

export default async function globalSetup() {
  const root = process.cwd();
  const cluster = process.env.DATABASE_URL ? null : await startCluster();
  const dbUrl = process.env.DATABASE_URL ?? cluster!.url("postgres");
  // Test gates for the hosted runners: a test holds an apply at a gate and releases it (test/gates.ts).
  const gatesDir = fs.mkdtempSync(path.join(os.tmpdir(), "planton-e2e-gates-"));
  // Git repositories on local disk that the console may register modules from (file:// URLs).
  const moduleRootsDir = fs.mkdtempSync(path.join(os.tmpdir(), "planton-e2e-module-repos-"));
  ensureBuilt(process.env.E2E_BUILD === "1");
  // One key for secrets at rest, shared by the console and the specs that seed through services
  // (Playwright hands globalSetup's environment to its workers), whatever a spec imported first.
  process.env.PLANTON_SECRET_KEY ??= randomBytes(32).toString("hex");
  // Specs keep `local` state backends in temporary folders, which the console (and a spec's own services) allow.
  process.env.PLANTON_STATE_LOCAL_ROOTS ??= os.tmpdir();
  fs.mkdirSync(path.join(root, ".tmp"), { recursive: true });
  const server = await startConsoleServer({
    databaseUrl: dbUrl,
    hostedRunners: Number(process.env.PLANTON_HOSTED_RUNNERS ?? 1),
    // Two specs run at once (playwright.config.ts), each may hold a job at a gate: room for both to hold one and run others.
    env: { PLANTON_TEST_GATES_DIR: gatesDir, PLANTON_MODULE_LOCAL_ROOTS: moduleRootsDir, PLANTON_STATE_LOCAL_ROOTS: process.env.PLANTON_STATE_LOCAL_ROOTS, PLANTON_HOSTED_RUNNER_CAPACITY: process.env.PLANTON_HOSTED_RUNNER_CAPACITY ?? "4" },
    firstAdmin: "printed",
    logFile: path.join(root, ".tmp", "e2e-server.log"),
  });
  const [, email] = await server.waitForOutput(/Sign in as (\S+)/, "it printed the admin sign-in");
  const [, password] = await server.waitForOutput(/password: (\S+)/, "it printed the admin password");

  fs.writeFileSync(E2E_STATE, JSON.stringify({ baseURL: server.url, email, password, dbUrl, dataDir: server.dataDir, gatesDir, moduleRootsDir }));
  process.env.E2E_BASE_URL = server.url;

  return async () => {
    await server.stop();
    cluster?.stop();
    fs.rmSync(gatesDir, { recursive: true, force: true });
    fs.rmSync(moduleRootsDir, { recursive: true, force: true });
  };
}
