// The runner API when a request reaches Next.js (scripts/serve.mjs answers it before, through the same
// dispatcher: server/direct-lane.ts): every route is in server/runner-api/routes.ts.
import { dispatchRunnerApi } from "@/server/runner-api/routes";

export const dynamic = "force-dynamic";

const dispatch = (req: Request) => dispatchRunnerApi(req);

export { dispatch as GET, dispatch as POST, dispatch as PUT, dispatch as PATCH, dispatch as DELETE };
