// The caller of the public REST API (/api/v1): an API token (`Authorization: Bearer plt_…`), acting in
// the token's organization. Both the generated routes (openapi.ts) and the hand-written ones (the
// event stream, an artifact's bytes, the audit export) take it from here, and reach the data through the same tRPC
// procedures, so roles and organizations are checked in one place (server/trpc/init.ts).
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { TRPCError } from "@trpc/server";
import type { Runtime } from "../runtime";
import { getRuntime } from "../runtime";
import { errorResponse, refusalResponse } from "../error-map";
import { callerFromApiToken, clientAddressOf, resolveCaller, runnerBearerRefusal, TOKEN_REFUSED, type Context } from "../trpc/context";
import { createCallerFactory } from "../trpc/init";
import { appRouter } from "../trpc/root";

/** Bearer tokens only: a browser's session cookie is no credential here, so no page elsewhere can act with it. */
export async function restContext(rt: Runtime, req: Request): Promise<Context> {
  const token = req.headers.get("authorization")?.match(/^Bearer\s+(\S+)$/i)?.[1];
  const caller = token ? (token.startsWith("plt_") ? await callerFromApiToken(rt.db, token) : null) : null;
  if (token && !caller) throw new TRPCError({ code: "UNAUTHORIZED", message: runnerBearerRefusal(req.headers) ?? TOKEN_REFUSED });
  return { db: rt.db, caller, clientAddress: clientAddressOf(req.headers) };
}

/**
 * A download the console links to (the audit export): an API token as above, or else the browser's
 * session cookie. Only GET routes that change nothing take this, so a cookie sent by another site's
 * page can start a download but never act.
 */
export async function downloadContext(rt: Runtime, req: Request): Promise<Context> {
  if (req.headers.get("authorization")) return restContext(rt, req);
  return { db: rt.db, caller: await resolveCaller(rt.db, rt.auth, req.headers), clientAddress: clientAddressOf(req.headers) };
}

const callerOf = createCallerFactory(appRouter);

/** A route that is not JSON: `fn` gets the procedures as the request's caller may call them (and the context they run in). */
export function streamingRoute(
  fn: (ctx: { rt: Runtime; api: ReturnType<typeof callerOf>; context: Context; req: Request; params: Record<string, string>; url: URL }) => Promise<Response>,
  opts: { sessionCookie?: boolean } = {},
) {
  return async (req: Request, { params }: { params: Promise<Record<string, string>> }) => {
    try {
      const rt = await getRuntime();
      const context = await (opts.sessionCookie ? downloadContext : restContext)(rt, req);
      const api = callerOf(context);
      return await fn({ rt, api, context, req, params: await params, url: new URL(req.url) });
    } catch (err) {
      // The procedures' refusals are already in the product's words (server/trpc/init.ts); anything else is mapped here.
      return err instanceof TRPCError ? refusalResponse(getHTTPStatusCodeFromError(err), err.code, err.message) : errorResponse(err, "public API");
    }
  };
}
