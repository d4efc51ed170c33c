import type { WhoamiResponse } from "@/lib/runner-protocol";
import { json, runnerRoute } from "@/server/runner-api/http";

export const dynamic = "force-dynamic";

/** Which runner a token belongs to: a runner checks its token here before it says it started. */
export const GET = runnerRoute(async ({ runner }) => json({ runner: { id: runner.id, name: runner.name, kind: runner.kind, orgId: runner.orgId } } satisfies WhoamiResponse));
