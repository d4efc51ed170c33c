// The runner API straight from Node's HTTP server (scripts/serve.mjs), without Next.js: a request is
// made a web Request for the one dispatcher (routes.ts), and its Response written back with the
// headers Next.js would add (next.config.ts's security headers; gzip for a large JSON answer the
// client accepts compressed). Next.js's request handling cost a few CPU-milliseconds per request —
// more than storing a batch of events — and runners send many small requests while a job runs.
import type { IncomingMessage, ServerResponse } from "node:http";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import { MAX_RUNNER_BODY_BYTES } from "../input-guard";
import { FORWARDED_HTTPS, NON_PAGE_CONTENT_SECURITY_POLICY, securityHeaders } from "../security-headers";
import { errorResponse } from "../error-map";
import { COMPRESS_FROM_BYTES } from "./http";
import { RUNNER_API } from "@/lib/runner-protocol";
import { dispatchRunnerApi } from "./routes";

const gzipped = promisify(gzip);


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
  // The handlers read the address's path and query only.
  return new Request(new URL(req.url ?? "/", "http://console.invalid"), { method: req.method, headers, body: body as Uint8Array<ArrayBuffer> | null, signal });
}

async function write(req: IncomingMessage, res: ServerResponse, answer: Response): Promise<void> {
  const https = req.headers[FORWARDED_HTTPS.header] === FORWARDED_HTTPS.value;
  const headers: Record<string, string | string[]> = securityHeaders({ https, csp: NON_PAGE_CONTENT_SECURITY_POLICY });
  answer.headers.forEach((v, k) => (headers[k] = v));
  let body = answer.body ? Buffer.from(await answer.arrayBuffer()) : null;
  const type = answer.headers.get("content-type") ?? "";
  if (body && body.length >= COMPRESS_FROM_BYTES && type.startsWith("application/json") && !/no-transform/.test(answer.headers.get("cache-control") ?? "")) {
    headers.vary = "Accept-Encoding";
    if (/\bgzip\b/.test(String(req.headers["accept-encoding"] ?? ""))) {
      body = await gzipped(body);
      headers["content-encoding"] = "gzip";
    }
  }
  if (body) headers["content-length"] = String(body.length);
  res.writeHead(answer.status, headers);
  res.end(req.method === "HEAD" ? undefined : body);
}

/** What scripts/serve.mjs finds on globalThis once the console has started (server/start.ts). */
export interface RunnerApiLane {
  /** Whether the request's address (Node's `req.url`) is the runner API's. */
  handles: (url: string) => boolean;
  serve: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
}

export const runnerApiLane: RunnerApiLane = { handles: (url) => url.startsWith(`${RUNNER_API}/`), serve: serveRunnerApi };

/** Answers one runner API request on Node's own request and response. */
export async function serveRunnerApi(req: IncomingMessage, res: ServerResponse): Promise<void> {
  // The handler sees the client going away (a claim's long poll stops waiting), as under Next.js.
  const gone = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) gone.abort();
  });
  try {
    const body = await readBody(req);
    const answer = await dispatchRunnerApi(requestOf(req, body, gone.signal));
    if (gone.signal.aborted) return;
    await write(req, res, answer);
  } catch (err) {
    if (gone.signal.aborted || res.headersSent) return void res.destroy();
    await write(req, res, errorResponse(err, "runner API"));
  }
}
