import { claimRequest } from "@/lib/runner-protocol";
import { json, runnerRoute } from "@/server/runner-api/http";
import { claimJobWaiting } from "@/server/services/runners/claim";

export const dynamic = "force-dynamic";

/** Long-poll for one job: 200 ClaimResponse, or 204 when none came within waitSeconds. */
export const POST = runnerRoute(async ({ rt, runner, req, body }) => {
  const input = await body(claimRequest);
  const claim = await claimJobWaiting(rt.handle, runner, { waitSeconds: input.waitSeconds, signal: req.signal, version: input.version, engines: input.engines });
  return claim ? json(claim) : new Response(null, { status: 204 });
});
