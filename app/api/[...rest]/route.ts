// Any address under /api that no route serves: a JSON refusal naming what exists, not the console's HTML 404 page.
import { noSuchRouteResponse } from "@/server/error-map";

export const dynamic = "force-dynamic";

const noSuchRoute = (req: Request) => noSuchRouteResponse(req.method, new URL(req.url).pathname);

export { noSuchRoute as GET, noSuchRoute as POST, noSuchRoute as PUT, noSuchRoute as PATCH, noSuchRoute as DELETE };
