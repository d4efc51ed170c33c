import { apiRoute, json } from "@/server/public-api/http";
import { preflightForKind } from "@/server/services/jobs/preflight";
import { listEnvironments } from "@/server/services/settings/environments";

export const dynamic = "force-dynamic";

/** `?kind=<catalog kind>&environment=<name>`: the four essentials, per environment (every one when none is named). */
export const GET = apiRoute("viewer", async ({ rt, actor, url }) => {
  const kind = url.searchParams.get("kind") ?? "";
  const named = url.searchParams.get("environment");
  const envs = named ? [named] : (await listEnvironments(rt.db, actor.orgId)).map((e) => e.name);
  const reports = [];
  for (const environment of envs) reports.push({ environment, ...(await preflightForKind(rt.db, actor, { kind, environment })) });
  return json({ kind, reports });
});
