// The runner API when a request reaches Next.js (scripts/serve.mjs answers it before, through the same
// dispatcher: server/direct-lane.ts): every route is in server/runner-api/routes.ts.
import { dispatchRunnerApi } from "@/server/runner-api/routes";

export const dynamic = "force-dynamic";

export { dispatchRunnerApi as GET, dispatchRunnerApi as POST, dispatchRunnerApi as PUT, dispatchRunnerApi as PATCH, dispatchRunnerApi as DELETE };
