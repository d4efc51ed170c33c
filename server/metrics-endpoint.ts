// GET /metrics: the Prometheus text format, behind PLANTON_METRICS_TOKEN. It is the operator's scrape
// endpoint, not part of the REST API, so it is in neither the OpenAPI document nor lib/client.
import { createHash, timingSafeEqual } from "node:crypto";
import { serverConfig } from "./config";
import { metrics, readDatabaseGauges } from "./metrics";
import { getRuntime } from "./runtime";

const refusal = (status: number, code: string, message: string, headers: Record<string, string> = {}) =>
  Response.json({ error: { code, message } }, { status, headers: { "cache-control": "no-store", ...headers } });

const digest = (text: string) => createHash("sha256").update(text).digest();

/** True when `authorization` is `Bearer <token>`; compares digests in constant time, so the answer's timing tells nothing of the token. */
export function bearerMatches(authorization: string | null, token: string): boolean {
  const given = /^Bearer (.+)$/i.exec(authorization ?? "")?.[1]?.trim() ?? "";
  return timingSafeEqual(digest(given), digest(token));
}

let config: { token: string | undefined } | undefined;

export async function metricsResponse(req: Request): Promise<Response> {
  const token = (config ??= { token: serverConfig().PLANTON_METRICS_TOKEN }).token;
  if (!token) {
    return refusal(404, "NOT_FOUND", "Nothing is served at /metrics: metrics are off. Set PLANTON_METRICS_TOKEN on the console (at least 16 characters, e.g. openssl rand -hex 32) and restart it, then scrape /metrics with the header Authorization: Bearer <that token>.");
  }
  const authorization = req.headers.get("authorization");
  if (!bearerMatches(authorization, token)) {
    const why = authorization ? "its bearer token is not the console's PLANTON_METRICS_TOKEN" : "it carries no Authorization header";
    return refusal(401, "UNAUTHORIZED", `No metrics were returned: ${why}. Send Authorization: Bearer <PLANTON_METRICS_TOKEN> (in Prometheus: authorization.credentials in the scrape config).`, { "www-authenticate": 'Bearer realm="metrics"' });
  }
  const { registry } = metrics();
  await readDatabaseGauges((await getRuntime()).handle);
  return new Response(await registry.metrics(), { headers: { "content-type": registry.contentType, "cache-control": "no-store" } });
}
