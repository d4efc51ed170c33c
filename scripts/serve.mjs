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

/** A refusal before Next.js sees the request, in the shape every API answers with. */
const refusal = (status, message) => JSON.stringify({ error: { code: "BAD_REQUEST", message } });

const server = http.createServer((req, res) => {
  // Request durations for /metrics: server/metrics.ts installs the observer once the console has loaded.
  const started = process.hrtime.bigint();
  res.once("close", () => globalThis.__plantonObserveRequest?.(req.method ?? "", req.url ?? "/", res.statusCode, Number(process.hrtime.bigint() - started) / 1e9));
  delete req.headers[SOCKET_ADDRESS_HEADER];
  req.headers[SOCKET_ADDRESS_HEADER] = req.socket.remoteAddress ?? "";
  // Next.js answers a path it cannot decode (a malformed %-escape, invalid UTF-8) with a bare 500.
  try {
    decodeURIComponent((req.url ?? "/").split("?")[0]);
  } catch {
    res.writeHead(400, { "content-type": "application/json", "cache-control": "no-store" });
    res.end(refusal(400, "Nothing was done: the address has a malformed %-escape or is not UTF-8. Encode each path segment with encodeURIComponent."));
    return;
  }
  // The runner API and the live event streams, once the console has started (server/start.ts registers
  // them; server/direct-lane.ts): answered without Next.js's request handling.
  if (globalThis.__plantonDirectLane?.serve(req, res)) return;
  handle(req, res);
});
// Node refuses oversized headers and addresses (431) and unparsable requests (400) before any handler: say why.
server.on("clientError", (err, socket) => {
  if (!socket.writable) return socket.destroy();
  const tooLarge = err.code === "HPE_HEADER_OVERFLOW";
  const body = tooLarge
    ? refusal(431, "Nothing was done: the request's address and headers are larger than the server takes (16 KiB). Send large values in a POST body instead.")
    : refusal(400, "Nothing was done: the request is not valid HTTP.");
  socket.end(`HTTP/1.1 ${tooLarge ? "431 Request Header Fields Too Large" : "400 Bad Request"}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
});
server.listen(port, hostname, () => console.log(`Serving on http://${hostname}:${port}`));
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => server.close(() => process.exit(0)) && setTimeout(() => process.exit(0), 3000).unref());
