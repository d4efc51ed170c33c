// The web edge: which origins may send a change with the browser's sign-in cookie, whether a request
// came over HTTPS, and the size limits of a tRPC request. proxy.ts and the tRPC route apply them; the
// headers themselves are in security-headers.ts.
import os from "node:os";
import { boundedBody as readUpTo } from "./input-guard";
import { TRPC_ERROR_CODES_BY_KEY, type TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";
import { TRPC_MAX_BATCH_CALLS, TRPC_MAX_BODY_BYTES } from "@/lib/trpc/limits";
import type { ServerConfig } from "./config";

export type EdgeConfig = Pick<ServerConfig, "PLANTON_URL" | "PLANTON_TRUSTED_ORIGINS" | "HOST" | "PORT">;

const WILDCARD_HOSTS = new Set(["0.0.0.0", "::", "[::]"]);

/** The console's own address: PLANTON_URL, or where `npm start` serves it on this machine. */
export function consoleOrigin(config: EdgeConfig): string {
  if (config.PLANTON_URL) return new URL(config.PLANTON_URL).origin;
  const host = WILDCARD_HOSTS.has(config.HOST) ? "127.0.0.1" : config.HOST.includes(":") && !config.HOST.startsWith("[") ? `[${config.HOST}]` : config.HOST;
  return new URL(`http://${host}:${config.PORT}`).origin;
}

/** Every origin whose pages may make changes with the sign-in cookie: from configuration only, never from a request's headers. */
export function trustedOrigins(config: EdgeConfig): string[] {
  const origins = new Set([consoleOrigin(config)]);
  // Unset PLANTON_URL means the console is reached on this machine, by whichever loopback name.
  if (!config.PLANTON_URL) for (const host of ["127.0.0.1", "localhost", "[::1]"]) origins.add(`http://${host}:${config.PORT}`);
  // Served on every interface (HOST=0.0.0.0, a LAN): this machine's own addresses, as the OS lists them.
  if (!config.PLANTON_URL && WILDCARD_HOSTS.has(config.HOST)) {
    for (const list of Object.values(os.networkInterfaces())) {
      for (const i of list ?? []) origins.add(`http://${i.family === "IPv6" ? `[${i.address.split("%")[0]}]` : i.address}:${config.PORT}`);
    }
  }
  for (const o of config.PLANTON_TRUSTED_ORIGINS) origins.add(o);
  return [...origins];
}

/** Served over HTTPS: the public URL says so, or the request arrived over TLS (Next reads the socket and X-Forwarded-Proto). */
export const servedOverHttps = (config: EdgeConfig, requestUrl: URL) => requestUrl.protocol === "https:" || config.PLANTON_URL?.startsWith("https:") === true;

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Why a request that could change something must not be served, or null. A change is served when its
 * Origin (or, without one, its Referer, or else Sec-Fetch-Site) is a trusted origin. An API token
 * (`Authorization: Bearer …`) is exempt: a browser sends that header cross-site only after a CORS
 * preflight, which the console never grants, so it cannot ride a visitor's cookie. A request with none
 * of these headers comes from no browser, so it carries no visitor's cookie either.
 */
export function originRefusal(req: Request, config: EdgeConfig): string | null {
  if (SAFE_METHODS.has(req.method)) return null;
  if (/^Bearer\s+\S+$/i.test(req.headers.get("authorization") ?? "")) return null;
  const trusted = trustedOrigins(config);
  const origin = req.headers.get("origin") ?? originOfReferer(req.headers.get("referer"));
  const fix = `If you open the console at that address, set PLANTON_URL to it (or add it to PLANTON_TRUSTED_ORIGINS) and restart the console; otherwise open the console at ${consoleOrigin(config)} and try again.`;
  if (origin !== undefined) {
    if (trusted.includes(origin)) return null;
    if (origin === "null") return `Nothing was done: the request came from a page with no origin (Origin: null), which is not the console's address ${consoleOrigin(config)}. Open the console at ${consoleOrigin(config)} and try again.`;
    return `Nothing was done: the request came from ${origin}, which is not the console's address ${consoleOrigin(config)}, so it may be another site acting with your sign-in. ${fix}`;
  }
  const site = req.headers.get("sec-fetch-site");
  if (site === null || site === "same-origin" || site === "none") return null;
  return `Nothing was done: the browser says the request came from another site (Sec-Fetch-Site: ${site}), not from the console's address ${consoleOrigin(config)}. Open the console at ${consoleOrigin(config)} and try again.`;
}

function originOfReferer(referer: string | null): string | undefined {
  if (!referer) return undefined;
  try {
    return new URL(referer).origin;
  } catch {
    return "null";
  }
}

/**
 * A refusal in the shape the caller's client reads: tRPC's error envelope under /api/trpc (as superjson
 * serializes it, so the console shows the message), `{code, message}` for better-auth's client under
 * /api/auth, and the REST APIs' `{error: {code, message}}` elsewhere.
 */
export function refusalResponse(pathname: string, status: number, code: TRPC_ERROR_CODE_KEY, message: string): Response {
  const headers = { "content-type": "application/json", "cache-control": "no-store" };
  let body: unknown;
  if (pathname.startsWith("/api/trpc")) body = { error: { json: { message, code: TRPC_ERROR_CODES_BY_KEY[code], data: { code, httpStatus: status } } } };
  else if (pathname.startsWith("/api/auth")) body = { code, message };
  else body = { error: { code, message } };
  return new Response(JSON.stringify(body), { status, headers });
}

/** The number of procedures a tRPC request calls (`/api/trpc/a,b,c?batch=1`). */
export function trpcCallCount(url: URL): number {
  if (url.searchParams.get("batch") !== "1") return 1;
  const path = url.pathname.replace(/^\/api\/trpc\/?/, "");
  return path.split(",").length;
}

export const batchTooLargeMessage = (calls: number) =>
  `Nothing was done: the request batches ${calls} calls and the console takes at most ${TRPC_MAX_BATCH_CALLS} in one request. Send them in smaller batches (httpBatchLink's maxItems: ${TRPC_MAX_BATCH_CALLS}).`;

export const bodyTooLargeMessage = () =>
  `Nothing was done: the request body is larger than ${TRPC_MAX_BODY_BYTES / 1024 / 1024} MiB, the most the console takes in one request. Send less in one request (fewer calls in a batch, or a smaller value).`;

/** The request's body, read up to `limit` bytes (the tRPC bound by default); null when it is larger. */
export const boundedBody = (req: Request, limit = TRPC_MAX_BODY_BYTES) => readUpTo(req, limit);
