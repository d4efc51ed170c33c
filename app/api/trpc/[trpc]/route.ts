import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { appRouter } from "@/server/trpc/root";
import { clientAddressOf, resolveCaller } from "@/server/trpc/context";
import { getRuntime } from "@/server/runtime";

export const dynamic = "force-dynamic";

async function handler(req: Request) {
  const rt = await getRuntime();
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    createContext: async () => ({
      db: rt.db,
      caller: await resolveCaller(rt.db, rt.auth, req.headers),
      clientAddress: clientAddressOf(req.headers),
    }),
  });
}

export { handler as GET, handler as POST };
