// One map from what the services throw to what each edge answers (the console's tRPC, the REST API
// /api/v1, the runner API /api/runner/v1): the same status, code and words everywhere.
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server";
import { ZodError } from "zod";
import { newId } from "@/lib/ids";
import { PlantonError, type PlantonErrorCode } from "./errors";
import { IllegalTransitionError } from "./services/jobs/lifecycle";

export type Edge = "console" | "public API" | "runner API";

export interface ErrorAnswer {
  status: number;
  code: PlantonErrorCode | "INTERNAL";
  trpcCode: TRPC_ERROR_CODE_KEY;
  message: string;
  /** The form field a refusal belongs to. */
  field?: string;
  /** Set for an unexpected error: the server log carries the same id with the error itself. */
  errorId?: string;
}

const STATUS: Record<PlantonErrorCode | "INTERNAL", number> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PRECONDITION_FAILED: 412,
  INTERNAL: 500,
};

const refusal = (code: PlantonErrorCode, message: string, field?: string): ErrorAnswer => ({ status: STATUS[code], code, trpcCode: code, message, field });

const unexpectedErrorMessage = (errorId: string) =>
  `The server failed to answer (error ${errorId}); nothing is known to have changed. Try again, and give the console's operator the error id if it keeps failing.`;

/** What an edge answers for `err`. An unexpected error is logged here, once, under a new error id; its text never leaves the server. */
export function answerFor(err: unknown, edge: Edge): ErrorAnswer {
  if (err instanceof PlantonError) return refusal(err.code, err.message, err.field);
  if (err instanceof ZodError) {
    const first = err.issues[0];
    // A record key's own message (e.g. an output name) is nested under "Invalid key in record".
    const inner = "issues" in first && Array.isArray(first.issues) ? (first.issues as { message?: string }[]).flat()[0]?.message : undefined;
    return refusal("BAD_REQUEST", `Nothing was done: ${first.path.join(".") || (edge === "console" ? "input" : "body")}: ${inner ?? first.message}`);
  }
  // A lost race: the job or step moved on before this request's change, so nothing was done.
  if (err instanceof IllegalTransitionError) return refusal("CONFLICT", `Nothing was done: ${err.message}`);
  const errorId = newId("error");
  console.error(`${edge}: unexpected error ${errorId}:`, err);
  return { status: STATUS.INTERNAL, code: "INTERNAL", trpcCode: "INTERNAL_SERVER_ERROR", message: unexpectedErrorMessage(errorId), errorId };
}

/** The JSON answer of the REST and runner APIs: `{error: {code, message, errorId?}}` with the status (tRPC's INTERNAL_SERVER_ERROR is INTERNAL). */
export function refusalResponse(status: number, code: string, message: string, errorId?: string, headers?: HeadersInit): Response {
  const h = new Headers(headers);
  h.set("content-type", "application/json");
  h.set("cache-control", "no-store");
  const error = { code: code === "INTERNAL_SERVER_ERROR" ? "INTERNAL" : code, message, ...(errorId ? { errorId } : {}) };
  return new Response(JSON.stringify({ error }), { status, headers: h });
}

/** What the REST and runner APIs answer for `err`. */
export function errorResponse(err: unknown, edge: Exclude<Edge, "console">): Response {
  const a = answerFor(err, edge);
  return refusalResponse(a.status, a.code, a.message, a.errorId);
}

/** An address under /api that no route serves: a JSON refusal naming what exists, not the console's HTML 404 page. */
export function noSuchRouteResponse(method: string, pathname: string): Response {
  return refusalResponse(
    404,
    "NOT_FOUND",
    `Nothing was done: there is no ${method} ${pathname}. The REST API is listed at /api/v1/openapi.json; runners speak /api/runner/v1 (lib/runner-protocol.ts).`,
  );
}
