import { json, jobRoute } from "@/server/runner-api/http";
import { lockState, unlockState } from "@/server/services/runners/state";
import { lockRequest } from "@/lib/state-lock";

export const dynamic = "force-dynamic";

/** LockInfo → 200 {lock} | 409 {lock, message} with OpenTofu's "Error acquiring the state lock". */
export const POST = jobRoute(async ({ rt, access, body }) => {
  const r = await lockState(rt.db, access, await body(lockRequest));
  return r.ok ? json({ lock: r.lock }) : json({ lock: r.lock, message: r.message }, 409);
});

export const DELETE = jobRoute(async ({ rt, access }, req) => json(await unlockState(rt.db, access, new URL(req.url).searchParams.get("id"))));
