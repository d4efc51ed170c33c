// Throwaway object stores for the state-backend tests, started from the npm devDependencies (no global
// install, no network): S3 on s3rver and Azure Blob on azurite, each a child process on a free port
// with its data in a temp folder, stopped and removed afterwards.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

export interface S3Server {
  endpoint: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** A bucket the server created at start. */
  bucket: string;
  /** The server's process (bench/state-move.ts reads its CPU time). */
  pid: number;
  stop: () => Promise<void>;
}

export interface AzuriteServer {
  /** The blob service URL of the dev account (path style: http://127.0.0.1:port/devstoreaccount1). */
  url: string;
  accountName: string;
  accountKey: string;
  connectionString: string;
  stop: () => Promise<void>;
}

/** Starts `node <script> ...args` and resolves with the first stdout match of `ready`, or rejects with what it printed. */
function startChild(label: string, script: string, args: string[], ready: RegExp, cwd: string): Promise<{ child: ChildProcess; match: RegExpMatchArray }> {
  const child = spawn(process.execPath, [script, ...args], { cwd, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env } });
  // A test process that ends without stopping its server (a crash, a failed start) takes it along.
  const reap = () => child.kill("SIGKILL");
  process.once("exit", reap);
  child.once("exit", () => process.off("exit", reap));
  let output = "";
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = output.match(ready);
      if (match) {
        child.stdout?.off("data", onData);
        // Keep draining so a chatty server never blocks on a full pipe.
        child.stdout?.resume();
        resolve({ child, match });
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`${label} exited (code ${code}) before it was ready:\n${output}`)));
  });
}

function stopper(child: ChildProcess, dir: string) {
  return async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
}

/** s3rver (npm) on a free port with a fresh bucket; it accepts its well-known S3RVER/S3RVER keys. */
export async function startS3rver(bucket = "planton-states"): Promise<S3Server> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "planton-s3rver-"));
  const script = path.join(path.dirname(require.resolve("s3rver/package.json")), "bin", "s3rver.js");
  const { child, match } = await startChild(
    "s3rver",
    script,
    ["--directory", path.join(dir, "data"), "--address", "127.0.0.1", "--port", "0", "--silent", "--no-vhost-buckets", "--configure-bucket", bucket],
    /S3rver listening on [\d.]+:(\d+)/,
    dir,
  );
  return {
    endpoint: `http://127.0.0.1:${match[1]}`,
    region: "us-east-1",
    credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
    bucket,
    pid: child.pid!,
    stop: stopper(child, dir),
  };
}

// Azurite's documented development account (public, the same on every machine).
const DEV_ACCOUNT = "devstoreaccount1";
const DEV_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/** azurite's blob service (npm) in memory on a free port, telemetry off, any API version accepted. */
export async function startAzurite(): Promise<AzuriteServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "planton-azurite-"));
  const script = path.join(path.dirname(require.resolve("azurite/package.json")), "dist", "src", "blob", "main.js");
  const { child, match } = await startChild(
    "azurite",
    script,
    ["--blobHost", "127.0.0.1", "--blobPort", "0", "--inMemoryPersistence", "--skipApiVersionCheck", "--disableTelemetry", "--silent", "--loose"],
    /successfully listens on http:\/\/[\d.]+:(\d+)/,
    dir,
  );
  const url = `http://127.0.0.1:${match[1]}/${DEV_ACCOUNT}`;
  return {
    url,
    accountName: DEV_ACCOUNT,
    accountKey: DEV_KEY,
    connectionString: `DefaultEndpointsProtocol=http;AccountName=${DEV_ACCOUNT};AccountKey=${DEV_KEY};BlobEndpoint=${url};`,
    stop: stopper(child, dir),
  };
}
