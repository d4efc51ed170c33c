import { metricsResponse } from "@/server/metrics-endpoint";

export const dynamic = "force-dynamic";

/** Prometheus's scrape: the console's metrics, for the bearer of PLANTON_METRICS_TOKEN only (not part of the REST API). */
export const GET = metricsResponse;
