// Any address under /api that no route serves: a JSON refusal naming what exists, not the console's HTML 404 page.
export const dynamic = "force-dynamic";

function noSuchRoute(req: Request): Response {
  const { pathname } = new URL(req.url);
  const message = `Nothing was done: there is no ${req.method} ${pathname}. The REST API is listed at /api/v1/openapi.json; runners speak /api/runner/v1 (lib/runner-protocol.ts).`;
  return Response.json({ error: { code: "NOT_FOUND", message } }, { status: 404, headers: { "cache-control": "no-store" } });
}

export { noSuchRoute as GET, noSuchRoute as POST, noSuchRoute as PUT, noSuchRoute as PATCH, noSuchRoute as DELETE };
