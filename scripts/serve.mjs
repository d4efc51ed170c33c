#!/usr/bin/env node
// Serves the built console (or, with --dev, the dev server) through Node's own HTTP server, so every
// request carries the address of the socket it came on: Next.js route handlers cannot see the socket,
// and X-Forwarded-For is whatever the client wrote. Any incoming copy of that header is dropped first.
// Usage: node scripts/serve.mjs [-p PORT] [-H HOST] [--dev]
import http from "node:http";
import path from "node:path";

const SOCKET_ADDRESS_HEADER = "x-planton-socket-address"; // the same name as server/client-address.ts
const args = process.argv.slice(2);
const arg = (flag, fallback) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : fallback);
const port = Number(arg("-p", process.env.PORT ?? "3000"));
const hostname = arg("-H", process.env.HOST ?? "127.0.0.1");
const dev = args.includes("--dev");
// The server configuration (server/config.ts) reads where it is served from HOST and PORT.
process.env.HOST = hostname;
process.env.PORT = String(port);
// As `next start` and `next dev` do, before Next.js is loaded.
process.env.NODE_ENV = dev ? "development" : "production";
const { default: next } = await import("next");

const app = next({ dev, dir: path.resolve(import.meta.dirname, ".."), hostname, port });
const handle = app.getRequestHandler();
await app.prepare();
// Tells server/client-address.ts that the header is this server's own, not the client's.
globalThis.__plantonSocketAddressHeader = true;

const server = http.createServer((req, res) => {
  delete req.headers[SOCKET_ADDRESS_HEADER];
  req.headers[SOCKET_ADDRESS_HEADER] = req.socket.remoteAddress ?? "";
  handle(req, res);
});
server.listen(port, hostname, () => console.log(`Serving on http://${hostname}:${port}`));
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => server.close(() => process.exit(0)) && setTimeout(() => process.exit(0), 3000).unref());
