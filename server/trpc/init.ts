import { initTRPC, TRPCError } from "@trpc/server";
import superjson from "superjson";
import type { OpenApiMeta } from "trpc-to-openapi";
import { z, ZodError } from "zod";
import { roleAllows, type Role } from "@/lib/roles";
import type { Actor } from "../actor";
import { answerFor } from "../error-map";
import { PlantonError } from "../errors";
import { assertSafeInput } from "../input-guard";
import { IllegalTransitionError } from "../services/jobs/lifecycle";
import { getOrganizationById, getOrganizationBySlug, membershipOf } from "../services/organizations/lookup";
import { NOT_SIGNED_IN, type Caller, type Context } from "./context";

/**
 * `requires` is the least role a procedure needs (the permission tests read it). `openapi` makes a
 * procedure part of the public REST API under /api/v1 (server/public-api/openapi.ts): it must then
 * declare its output schema, from lib/api/schemas.ts. `created` answers REST with 201 instead of 200.
 */
export type ProcedureMeta = OpenApiMeta<{ requires?: Role; created?: boolean }>;

const t = initTRPC.context<Context>().meta<ProcedureMeta>().create({
  transformer: superjson,
  // A comment every few seconds on each live stream, as the REST event stream sends: a proxy in front of
  // the replicas (nginx's proxy_read_timeout) never takes a quiet job's stream for a dead one.
  sse: { ping: { enabled: true, intervalMs: 5_000 } },
  errorFormatter({ shape, error }) {
    const cause = error.cause;
    // An error that did not pass the refusals middleware (a subscription's stream, the context) is mapped here.
    const unmapped = error.code === "INTERNAL_SERVER_ERROR" && !(cause instanceof MappedError) ? answerFor(cause ?? error, "console") : undefined;
    const field = cause instanceof PlantonError ? cause.field : undefined;
    const fieldErrors =
      cause instanceof ZodError
        ? Object.fromEntries(cause.issues.map((i) => [i.path.join(".") || "_", i.message]))
        : field
          ? { [field]: error.message }
          : undefined;
    const errorId = cause instanceof MappedError ? cause.errorId : unmapped?.errorId;
    return { ...shape, message: unmapped?.message ?? shape.message, data: { ...shape.data, stack: undefined, field, fieldErrors, errorId } };
  },
});

/** The cause of a TRPCError made from an unexpected error: it was logged under `errorId` already. */
class MappedError extends Error {
  constructor(readonly errorId: string) {
    super(`error ${errorId}`);
  }
}

/** What tRPC says when a procedure's answer fails its `.output()` schema. */
const OUTPUT_INVALID = "Output validation failed";

/** Turns what the services throw into tRPC errors through the one error map (server/error-map.ts). */
const refusals = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok) {
    const { cause, code } = result.error;
    const mapped = cause instanceof PlantonError || cause instanceof ZodError || cause instanceof IllegalTransitionError || code === "INTERNAL_SERVER_ERROR";
    if (mapped && !(cause instanceof MappedError)) {
      // An answer that does not match its declared output schema is the server's fault, not bad input.
      const ours = result.error.message === OUTPUT_INVALID;
      const a = answerFor(ours ? result.error : (cause ?? result.error), "console");
      throw new TRPCError({ code: a.trpcCode, message: a.message, cause: a.errorId ? new MappedError(a.errorId) : cause });
    }
  }
  return result;
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
/** NUL bytes, lone surrogates and absurd nesting are refused before any schema or service sees them. */
const safeInput = t.middleware(async ({ getRawInput, next }) => {
  assertSafeInput(await getRawInput());
  return next();
});

export const publicProcedure = t.procedure.use(refusals).use(safeInput);

/** The context of a signed-in caller, or the refusal (what was wrong with the bearer, if one was sent). The hand-written routes of /api/v1 call it too. */
export function signedIn<C extends Context>(ctx: C): C & { caller: Caller } {
  if (!ctx.caller) throw new TRPCError({ code: "UNAUTHORIZED", message: ctx.bearerRefused ?? NOT_SIGNED_IN });
  return { ...ctx, caller: ctx.caller };
}

export const authedProcedure = publicProcedure.use(({ ctx, next }) => next({ ctx: signedIn(ctx) }));

const orgInput = z.object({
  org: z
    .string()
    .min(1)
    .optional()
    .meta({ description: "The organization's slug. With an API token it may be left out: the token's organization." }),
});

/**
 * The caller's standing in one organization (`org` its slug, or an API token's organization): the
 * actor to act as, or the refusal. Procedures take it through orgProcedure; the hand-written routes
 * of /api/v1 that are not tRPC (the audit export) call it directly, so the rule stays one.
 */
export async function orgAccess(ctx: Context & { caller: Caller }, slug: string | undefined, need: Role) {
  if (!slug && !ctx.caller.tokenOrgId) {
    throw new TRPCError({ code: "BAD_REQUEST", message: "Nothing was done: name the organization (org, its slug), or call with an API token of that organization." });
  }
  const org = slug ? await getOrganizationBySlug(ctx.db, slug) : await getOrganizationById(ctx.db, ctx.caller.tokenOrgId!);
  const role = org ? await membershipOf(ctx.db, org.id, ctx.caller.userId) : null;
  if (org && !slug && !role) {
    throw new TRPCError({
      code: "FORBIDDEN",
      message: `Nothing was done: the token's owner ${ctx.caller.email} is no longer a member of its organization. Ask one of its admins to add you, then create a new token.`,
    });
  }
  if (!org || !role || (ctx.caller.tokenOrgId && ctx.caller.tokenOrgId !== org.id)) {
    throw new TRPCError({ code: "NOT_FOUND", message: `Organization ${slug} was not found, or you are not a member of it. Ask one of its admins to add you.` });
  }
  if (!roleAllows(role, need)) {
    throw new TRPCError({
      code: "FORBIDDEN",
      message: `Nothing was changed: this needs the ${need} role, and you are ${role === "admin" ? "an" : "a"} ${role} in ${org.slug}. Ask an admin of ${org.slug} to change your role in Settings → Members.`,
    });
  }
  const actor: Actor = {
    userId: ctx.caller.userId,
    label: ctx.caller.tokenName ? `${ctx.caller.email} (token ${ctx.caller.tokenName})` : ctx.caller.email,
    orgId: org.id,
    role,
    clientAddress: ctx.clientAddress,
  };
  return { actor, org };
}

/** A procedure in one organization (`input.org` is its slug, or an API token's organization) that needs at least `need`. */
function orgProcedure(need: Role) {
  return authedProcedure
    .meta({ requires: need })
    .input(orgInput)
    .use(async ({ ctx, input, next }) => next({ ctx: { ...ctx, ...(await orgAccess(ctx, input.org, need)) } }));
}

export const viewerProcedure = orgProcedure("viewer");
export const engineerProcedure = orgProcedure("engineer");
export const adminProcedure = orgProcedure("admin");
