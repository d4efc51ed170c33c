// The HTTP edge of the public REST API (/api/v1): route handlers in app/api/v1 are a few lines over
// these. A caller is an API token (`Authorization: Bearer plt_…`); its organization is the token's.
// Refusals come back as JSON `{error: {code, message}}` with the matching status, in the services' words (server/error-map.ts).
import type { z } from "zod";
import type { Role } from "@/lib/roles";
import { roleAllows } from "@/lib/roles";
import type { Actor } from "../actor";
import { errorResponse } from "../error-map";
import { PlantonError } from "../errors";
import { getRuntime, type Runtime } from "../runtime";
import { membershipOf } from "../services/organizations/lookup";
import { callerFromApiToken, clientAddressOf } from "../trpc/context";
import { organizations } from "@/db/schema";
import { eq } from "drizzle-orm";

export const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", "cache-control": "no-store", ...headers } });

export const NOT_SIGNED_IN = "You are not signed in. Sign in, or send an API token as Authorization: Bearer <token>.";
export const TOKEN_REFUSED =
  "The API token was refused: it is unknown, revoked or expired. Nothing was done. Create a new one in Settings → API Tokens, then run planton auth login --token <token>.";

export interface ApiContext {
  rt: Runtime;
  actor: Actor;
  org: { id: string; slug: string; name: string };
  req: Request;
  params: Record<string, string>;
  url: URL;
  body: <T extends z.ZodType>(schema: T) => Promise<z.infer<T>>;
}

type Params = { params: Promise<Record<string, string>> };

async function readBody<T extends z.ZodType>(req: Request, schema: T): Promise<z.infer<T>> {
  const text = await req.text();
  let raw: unknown = {};
  if (text.trim()) {
    try {
      raw = JSON.parse(text);
    } catch {
      throw new PlantonError("BAD_REQUEST", "Nothing was done: the body is not JSON.");
    }
  }
  return schema.parse(raw);
}

/** A route that needs an API token whose owner has at least `need` in the token's organization. */
export function apiRoute(need: Role, fn: (ctx: ApiContext) => Promise<Response>) {
  return async (req: Request, { params }: Params) => {
    try {
      const rt = await getRuntime();
      const header = req.headers.get("authorization");
      const bearer = header?.match(/^Bearer\s+(\S+)$/i)?.[1];
      if (!bearer) throw new PlantonError("UNAUTHORIZED", NOT_SIGNED_IN);
      const caller = bearer.startsWith("plt_") ? await callerFromApiToken(rt.db, bearer) : null;
      if (!caller?.tokenOrgId) throw new PlantonError("UNAUTHORIZED", TOKEN_REFUSED);
      const [org] = await rt.db.select({ id: organizations.id, slug: organizations.slug, name: organizations.name }).from(organizations).where(eq(organizations.id, caller.tokenOrgId));
      const role = org ? await membershipOf(rt.db, org.id, caller.userId) : null;
      if (!org || !role) {
        throw new PlantonError("FORBIDDEN", `Nothing was done: the token's owner ${caller.email} is no longer a member of its organization. Ask one of its admins to add you, then create a new token.`);
      }
      if (!roleAllows(role, need)) {
        throw new PlantonError(
          "FORBIDDEN",
          `Nothing was changed: this needs the ${need} role, and you are ${role === "admin" ? "an" : "a"} ${role} in ${org.slug}. Ask an admin of ${org.slug} to change your role in Settings → Members.`,
        );
      }
      const actor: Actor = {
        userId: caller.userId,
        label: caller.tokenName ? `${caller.email} (token ${caller.tokenName})` : caller.email,
        orgId: org.id,
        role,
        clientAddress: clientAddressOf(req.headers),
      };
      return await fn({ rt, actor, org, req, params: await params, url: new URL(req.url), body: (s) => readBody(req, s) });
    } catch (err) {
      return errorResponse(err, "public API");
    }
  };
}
