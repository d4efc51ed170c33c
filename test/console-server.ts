// Starts the built console (`next start`) as its own process against a test database, the way it
// runs in production, for tests that need the real HTTP surface, hosted runners and the scheduler.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort } from "./postgres-cluster";

const root = path.resolve(import.meta.dirname, "..");

export interface ConsoleServer {
  url: string;
  dataDir: string;
  process: ChildProcess;
  output: () => string;
  stop: () => Promise<void>;
}

/** Builds once when there is no build yet (npm test builds before the tests run). */
export function ensureBuilt(): void {
  if (fs.existsSync(path.join(root, ".next", "BUILD_ID"))) return;
  const r = spawnSync(process.execPath, [path.join(root, "node_modules/next/dist/bin/next"), "build"], { cwd: root, stdio: "inherit" });
  if (r.status !== 0) throw new Error("next build failed");
}

export async function startConsoleServer(opts: { databaseUrl: string; hostedRunners?: number; env?: Record<string, string> }): Promise<ConsoleServer> {
  ensureBuilt();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "planton-it-"));
  const child = spawn(process.execPath, [path.join(root, "scripts/serve.mjs"), "-p", String(port), "-H", "127.0.0.1"], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: opts.databaseUrl,
      PLANTON_DATA_DIR: dataDir,
      PLANTON_URL: url,
      PORT: String(port),
      PLANTON_HOSTED_RUNNERS: String(opts.hostedRunners ?? 0),
      PLANTON_ADMIN_PASSWORD: "integration-admin-pw",
      NODE_ENV: "production",
      ...opts.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`The console exited during start-up:\n${out}`);
    const ok = await fetch(`${url}/api/health`).then((r) => r.ok, () => false);
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`The console did not become ready:\n${out}`);
    await new Promise((r) => setTimeout(r, 300));
  }
  return {
    url,
    dataDir,
    process: child,
    output: () => out,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await Promise.race([new Promise((r) => child.once("exit", r)), new Promise((r) => setTimeout(r, 8000))]);
        if (child.exitCode === null) child.kill("SIGKILL");
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
