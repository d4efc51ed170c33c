#!/usr/bin/env node
// `npm start`: builds the console when the sources are newer than the last build, then serves it
// on the embedded database (or DATABASE_URL) with PLANTON_HOSTED_RUNNERS hosted runners.
import { spawnSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { tsImport } from "tsx/esm/api";

const root = path.resolve(import.meta.dirname, "..");
const buildId = path.join(root, ".next", "BUILD_ID");
const SOURCES = ["app", "components", "server", "lib", "db", "engine", "catalog", "next.config.ts", "proxy.ts", "package.json", "instrumentation.ts"];

function newestMtime(p) {
  const full = path.join(root, p);
  if (!fs.existsSync(full)) return 0;
  const st = fs.statSync(full);
  if (!st.isDirectory()) return st.mtimeMs;
  let max = st.mtimeMs;
  for (const e of fs.readdirSync(full)) max = Math.max(max, newestMtime(path.join(p, e)));
  return max;
}

// A bad setting is refused before the build, naming the variable (server/config.ts).
const { serverConfig } = await tsImport("../server/config.ts", import.meta.url);
let config;
try {
  config = serverConfig();
} catch (err) {
  console.error(err.message);
  process.exit(1);
}

const builtAt = fs.existsSync(buildId) ? fs.statSync(buildId).mtimeMs : 0;
if (!builtAt || SOURCES.some((s) => newestMtime(s) > builtAt)) {
  console.log("Building the console (first start, or the sources changed)…");
  const r = spawnSync(process.execPath, [path.join(root, "node_modules/next/dist/bin/next"), "build"], { cwd: root, stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const port = String(config.PORT);
const host = config.HOST;
console.log(`Starting Planton console on http://${host === "0.0.0.0" ? "localhost" : host}:${port}`);
// scripts/serve.mjs rather than `next start`: it passes each request's socket address on (server/client-address.ts).
const child = spawn(process.execPath, [path.join(root, "scripts/serve.mjs"), "-p", port, "-H", host], { cwd: root, stdio: "inherit" });
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => child.kill(sig));
child.on("exit", (code) => process.exit(code ?? 0));
