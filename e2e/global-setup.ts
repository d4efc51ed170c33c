// Starts what a user would: a throwaway Postgres, then the built console with hosted runners, on a
// free port. The admin sign-in is read from what the console prints on first start.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort, startCluster } from "../test/postgres-cluster";

export const E2E_STATE = path.join(process.cwd(), ".tmp", "e2e-state.json");

function withoutAdminCredentials(env: NodeJS.ProcessEnv) {
  const { PLANTON_ADMIN_EMAIL: _e, PLANTON_ADMIN_PASSWORD: _p, ...rest } = env;
  return rest;
}

export default async function globalSetup() {
  const root = process.cwd();
  const cluster = process.env.DATABASE_URL ? null : await startCluster();
  const dbUrl = process.env.DATABASE_URL ?? cluster!.url("postgres");
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "planton-e2e-"));
  // Test gates for the hosted runners: a test holds an apply at a gate and releases it (test/gates.ts).
  const gatesDir = path.join(dataDir, "gates");
  fs.mkdirSync(gatesDir, { recursive: true });
  if (!fs.existsSync(path.join(root, ".next", "BUILD_ID")) || process.env.E2E_BUILD === "1") {
    const r = spawnSync(process.execPath, ["node_modules/next/dist/bin/next", "build"], { cwd: root, stdio: "inherit" });
    if (r.status !== 0) throw new Error("next build failed");
  }
  const port = await freePort();
  const baseURL = `http://127.0.0.1:${port}`;
  const server = spawn(process.execPath, ["scripts/serve.mjs", "-p", String(port), "-H", "127.0.0.1"], {
    cwd: root,
    env: { ...withoutAdminCredentials(process.env), DATABASE_URL: dbUrl, PLANTON_DATA_DIR: dataDir, PLANTON_URL: baseURL, PORT: String(port), PLANTON_HOSTED_RUNNERS: process.env.PLANTON_HOSTED_RUNNERS ?? "1", PLANTON_TEST_GATES_DIR: gatesDir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  fs.mkdirSync(path.join(root, ".tmp"), { recursive: true });
  const logFile = fs.createWriteStream(path.join(root, ".tmp", "e2e-server.log"));
  server.stdout.on("data", (d) => {
    output += d;
    logFile.write(d);
  });
  server.stderr.on("data", (d) => logFile.write(d));

  const deadline = Date.now() + 120_000;
  let password: string | undefined;
  let email: string | undefined;
  while (Date.now() < deadline && !password) {
    if (server.exitCode !== null) throw new Error(`The console exited during start-up:\n${output}`);
    // The first request boots the runtime if instrumentation has not already.
    await fetch(`${baseURL}/sign-in`).catch(() => {});
    email = output.match(/Sign in as (\S+)/)?.[1];
    password = output.match(/password: (\S+)/)?.[1];
    if (!password) await new Promise((r) => setTimeout(r, 500));
  }
  if (!password || !email) throw new Error(`The console did not print the admin sign-in:\n${output}`);

  fs.mkdirSync(path.dirname(E2E_STATE), { recursive: true });
  fs.writeFileSync(E2E_STATE, JSON.stringify({ baseURL, email, password, dbUrl, dataDir, gatesDir }));
  process.env.E2E_BASE_URL = baseURL;

  return async () => {
    server.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 500));
    if (server.exitCode === null) server.kill("SIGKILL");
    cluster?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
}
