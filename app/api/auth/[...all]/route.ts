import { getRuntime } from "@/server/runtime";
import { serverConfig } from "@/server/config";
import { handleAuthRequest } from "@/server/auth/sign-in-limits";

export const dynamic = "force-dynamic";

async function handler(req: Request) {
  const { auth, db } = await getRuntime();
  return handleAuthRequest(db, req, (r) => auth.handler(r), {
    limits: serverConfig().PLANTON_AUTH_RATE_LIMIT === "on",
    sessionOf: async (headers) => {
      const s = await auth.api.getSession({ headers });
      return s ? { userId: s.user.id, email: s.user.email, sessionId: s.session.id } : null;
    },
  });
}

export { handler as GET, handler as POST };
