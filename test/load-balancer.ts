// nginx in front of console replicas, for the replicas test: README's example configuration
// (docs/replicas/nginx.conf) with only its listen port and upstream servers changed, run from a temp
// folder of its own (its -p prefix) on a free port, by the test, not as the system's service.
// Ready is a signal: nginx writes its pid file once its listening socket is open.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort } from "./postgres-cluster";

const root = path.resolve(import.meta.dirname, "..");
export const EXAMPLE_NGINX_CONF = path.join(root, "docs", "replicas", "nginx.conf");

export interface LoadBalancer {
  url: string;
  /** The nginx version that ran, as `nginx -v` prints it. */
  version: string;
  output: () => string;
  stop: () => Promise<void>;
}

function findNginx(): string {
  const onPath = spawnSync("sh", ["-c", "command -v nginx"], { encoding: "utf8" }).stdout.trim();
  const found = [onPath, "/usr/sbin/nginx"].find((p) => p && fs.existsSync(p));
  if (!found) throw new Error("nginx is not installed, and the replicas test runs the console behind it. Install it from Debian's packages (apt-get install -y nginx; .ci/run does this), then run the test again.");
  return found;
}

/** The example configuration, listening on `port` and balancing over `upstreams` (host:port each). */
export function nginxConfig(port: number, upstreams: string[]): string {
  const example = fs.readFileSync(EXAMPLE_NGINX_CONF, "utf8");
  const servers = /^( *)server 127\.0\.0\.1:3001;\n *server 127\.0\.0\.1:3002;\n/m;
  const listen = /^( *)listen 8080;$/m;
  if (!servers.test(example) || !listen.test(example)) throw new Error(`${EXAMPLE_NGINX_CONF} no longer has the "listen 8080;" and two "server 127.0.0.1:300N;" lines this test replaces; update test/load-balancer.ts with it.`);
  return example
    .replace(servers, (_, indent: string) => upstreams.map((u) => `${indent}server ${u};\n`).join(""))
    .replace(listen, (_, indent: string) => `${indent}listen 127.0.0.1:${port};`);
}

export async function startLoadBalancer(upstreams: string[], port?: number): Promise<LoadBalancer> {
  const nginx = findNginx();
  const version = spawnSync(nginx, ["-v"], { encoding: "utf8" }).stderr.trim();
  const listenPort = port ?? (await freePort());
  const prefix = fs.mkdtempSync(path.join(os.tmpdir(), "planton-nginx-"));
  const conf = path.join(prefix, "nginx.conf");
  fs.writeFileSync(conf, nginxConfig(listenPort, upstreams));
  const pidFile = path.join(prefix, "nginx.pid");
  let out = "";
  const child = spawn(nginx, ["-p", prefix, "-e", "stderr", "-c", conf, "-g", "daemon off;"], { stdio: ["ignore", "pipe", "pipe"] });
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    await new Promise<void>((resolve, reject) => {
      const watcher = fs.watch(prefix, () => {
        if (fs.existsSync(pidFile)) (watcher.close(), resolve());
      });
      void exited.then(() => (watcher.close(), reject(new Error(`nginx (${version}) exited before it listened:\n${out}`))));
      if (fs.existsSync(pidFile)) (watcher.close(), resolve());
    });
  } catch (err) {
    fs.rmSync(prefix, { recursive: true, force: true });
    throw err;
  }
  return {
    url: `http://127.0.0.1:${listenPort}`,
    version,
    output: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await exited;
      }
      fs.rmSync(prefix, { recursive: true, force: true });
    },
  };
}
