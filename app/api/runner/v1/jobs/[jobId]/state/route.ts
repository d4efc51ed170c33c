import { json, jobRoute } from "@/server/runner-api/http";
import { getState, putState } from "@/server/services/runners/state";

export const dynamic = "force-dynamic";

export const GET = jobRoute(async ({ rt, access }) => {
  const state = await getState(rt.db, access);
  return state ? json(state) : new Response(null, { status: 204 });
});

export const PUT = jobRoute(async ({ rt, access, json: read }, req) => {
  const state = await read();
  return json(await putState(rt.db, access, new URL(req.url).searchParams.get("lockId"), state));
});
