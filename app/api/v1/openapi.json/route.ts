import { openApiDocument } from "@/server/public-api/openapi";

export const dynamic = "force-dynamic";

export const GET = () => Response.json(openApiDocument(), { headers: { "cache-control": "no-store" } });
