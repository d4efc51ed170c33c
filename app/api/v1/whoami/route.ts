import { apiRoute, json } from "@/server/public-api/http";

export const dynamic = "force-dynamic";

/** Who the token speaks for: `planton auth login` and `auth status` verify a token with it. */
export const GET = apiRoute("viewer", async ({ actor, org }) => json({ user: { id: actor.userId, label: actor.label }, organization: org, role: actor.role }));
