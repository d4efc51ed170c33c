import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { appRouter } from "@/server/trpc/root";
import { clientAddressOf, resolveCaller, runnerBearerRefusal } from "@/server/trpc/context";
import { getRuntime } from "@/server/runtime";
import { TRPC_MAX_BATCH_CALLS } from "@/lib/trpc/limits";
import { batchTooLargeMessage, bodyTooLargeMessage, boundedBody, refusalResponse, trpcCallCount } from "@/server/web-edge";

export const dynamic = "force-dynamic";

async function handler(req: Request) {
  const url = new URL(req.url);
  // Limits first, so an oversized request costs no database work and runs nothing.
  const calls = trpcCallCount(url);
  if (calls > TRPC_MAX_BATCH_CALLS) return refusalResponse(url.pathname, 400, "BAD_REQUEST", batchTooLargeMessage(calls));
  if (req.method === "POST") {
    const body = await boundedBody(req);
    if (!body) return refusalResponse(url.pathname, 413, "PAYLOAD_TOO_LARGE", bodyTooLargeMessage());
    req = new Request(req, { body });
  }
  const rt = await getRuntime();
  const headers = req.headers;
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    maxBatchSize: TRPC_MAX_BATCH_CALLS,
    createContext: async () => ({
      db: rt.db,
      caller: await resolveCaller(rt.db, rt.auth, headers),
      clientAddress: clientAddressOf(headers),
      bearerRefused: runnerBearerRefusal(headers),
    }),
  });
}

export { handler as GET, handler as POST };
