import { handlePublicApi } from "@/server/public-api/openapi";

export const dynamic = "force-dynamic";

/** Every JSON route of the public API, generated from the tRPC procedures (server/public-api/openapi.ts). */
export { handlePublicApi as GET, handlePublicApi as POST, handlePublicApi as PUT, handlePublicApi as PATCH, handlePublicApi as DELETE };
