// The routes scripts/serve.mjs answers itself, without Next.js's request handling: the runner API
// (server/runner-api/routes.ts) and a job's live event stream (server/public-api/event-stream.ts).
// Next.js's request handling costs a few CPU-milliseconds per request — more than storing a runner's
// batch of events — and adds web-stream layers to every write of a live stream; these are the
// console's hot paths (a runner's many small requests while a job runs; a hundred viewers of one job).
// A request is made a web Request for the route's own handler, which Next.js's route files call too,
// and its Response is written back with the headers Next.js would add (next.config.ts's security
// headers; gzip for a large JSON answer the client accepts compressed; a stream written as it comes,
// at the pace the client reads it).
import type { IncomingMessage, ServerResponse } from "node:http";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import { RUNNER_API } from "@/lib/runner-protocol";
import { errorResponse } from "./error-map";
import { heldBody, holdBody } from "./held-bodies";
import { acceptsGzip } from "./gzip-pieces";
import { MAX_RUNNER_BODY_BYTES } from "./input-guard";
import { jobEventStream, JOB_EVENT_STREAM_PATH } from "./public-api/event-stream";
import { COMPRESS_FROM_BYTES } from "./runner-api/http";
import { dispatchRunnerApi } from "./runner-api/routes";
import { FORWARDED_HTTPS, NON_PAGE_CONTENT_SECURITY_POLICY, securityHeaders } from "./security-headers";

const gzipped = promisify(gzip);

/** A route's handler, and the edge whose words answer what it throws unexpectedly. */
type Route = { handler: (req: Request) => Promise<Response>; edge: "runner API" | "public API" };

/** The route for a request's method and path (Node's `req.url`: path and query), if this lane serves it. */
function routeFor(method: string, url: string): Route | undefined {
  if (url.startsWith(`${RUNNER_API}/`)) return { handler: dispatchRunnerApi, edge: "runner API" };
  const stream = method === "GET" ? JOB_EVENT_STREAM_PATH.exec(url.split("?")[0]) : null;
  // A malformed escape was refused by scripts/serve.mjs before this.
  if (stream) return { handler: (req) => jobEventStream(req, { params: Promise.resolve({ id: decodeURIComponent(stream[1]) }) }), edge: "public API" };
  return undefined;
}

/**
 * The body, read up to one byte past the runner API's bound (the handler refuses a larger one, as it
 * would reading the stream itself). A body declared larger is not read at all.
 */
function readBody(req: IncomingMessage): Promise<Buffer | null> {
  if (req.method === "GET" || req.method === "HEAD") return Promise.resolve(null);
  if (Number(req.headers["content-length"] ?? "0") > MAX_RUNNER_BODY_BYTES) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      req.off("data", onData);
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size > MAX_RUNNER_BODY_BYTES) {
        req.off("end", done);
        done();
      }
    };
    req.on("data", onData);
    req.once("end", done);
    req.once("error", reject);
  });
}

function requestOf(req: IncomingMessage, body: Buffer | null, signal: AbortSignal): Request {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i], raw[i + 1]);
  // The handlers read the address's path and query only, and the body through input-guard, which takes it as held.
  const request = new Request(new URL(req.url ?? "/", "http://console.invalid"), { method: req.method, headers, signal });
  return body ? holdBody(request, body) : request;
}

/** Resolves once the response can take more (or the client has gone). */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

/** A server-sent-event stream, written chunk by chunk as the handler makes them, no faster than the client takes them. */
async function pipeStream(res: ServerResponse, body: ReadableStream<Uint8Array>, gone: AbortSignal): Promise<void> {
  const reader = body.getReader();
  const cancel = () => void reader.cancel().catch(() => {});
  gone.addEventListener("abort", cancel);
  try {
    res.flushHeaders();
    for (;;) {
      const { done, value } = await reader.read();
      if (done || gone.aborted) break;
      if (!res.write(value)) await drained(res);
    }
  } finally {
    gone.removeEventListener("abort", cancel);
  }
  if (!gone.aborted) res.end();
}

async function write(req: IncomingMessage, res: ServerResponse, answer: Response, gone: AbortSignal): Promise<void> {
  const https = req.headers[FORWARDED_HTTPS.header] === FORWARDED_HTTPS.value;
  const headers: Record<string, string> = securityHeaders({ https, csp: NON_PAGE_CONTENT_SECURITY_POLICY });
  answer.headers.forEach((v, k) => (headers[k] = v));
  const type = answer.headers.get("content-type") ?? "";
  if (answer.body && type.startsWith("text/event-stream")) {
    res.writeHead(answer.status, headers);
    return pipeStream(res, answer.body, gone);
  }
  const given = heldBody(answer);
  let body = given !== undefined ? Buffer.from(given) : answer.body ? Buffer.from(await answer.arrayBuffer()) : null;
  if (body && body.length >= COMPRESS_FROM_BYTES && type.startsWith("application/json") && !/no-transform/.test(answer.headers.get("cache-control") ?? "")) {
    headers.vary = "Accept-Encoding";
    if (acceptsGzip(req.headers["accept-encoding"])) {
      body = await gzipped(body);
      headers["content-encoding"] = "gzip";
    }
  }
  if (body) headers["content-length"] = String(body.length);
  res.writeHead(answer.status, headers);
  res.end(body);
}

async function serve(req: IncomingMessage, res: ServerResponse, route: Route): Promise<void> {
  // The handler sees the client going away (a claim's long poll stops waiting, a stream ends), as under Next.js.
  const gone = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) gone.abort();
  });
  try {
    const body = await readBody(req);
    const answer = await route.handler(requestOf(req, body, gone.signal));
    if (gone.signal.aborted) return void answer.body?.cancel().catch(() => {});
    await write(req, res, answer, gone.signal);
  } catch (err) {
    if (gone.signal.aborted || res.headersSent) return void res.destroy();
    await write(req, res, errorResponse(err, route.edge), gone.signal);
  }
}

/** What scripts/serve.mjs finds on globalThis once the console has started (server/start.ts). */
export interface DirectLane {
  /** Answers the request and returns true when it is one of this lane's; false leaves it to Next.js. */
  serve: (req: IncomingMessage, res: ServerResponse) => boolean;
}

export const directLane: DirectLane = {
  serve(req, res) {
    const route = routeFor(req.method ?? "GET", req.url ?? "/");
    if (!route) return false;
    void serve(req, res, route);
    return true;
  },
};
