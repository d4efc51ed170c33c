// The HTTP edge of the runner API (/api/runner/v1): route handlers in app/ are one line over these.
// Refusals come back as JSON `{error: {message, code}}` with the matching status.
import { ZodError, type z } from "zod";
import { PlantonError } from "../errors";
import { getRuntime, type Runtime } from "../runtime";
import { IllegalTransitionError } from "../services/jobs/lifecycle";
import { jobAccess, type JobAccess, type JobRouteUse } from "../services/runners/job-access";
import { authenticateRunner, bearerOf, type RunnerRow } from "../services/runners/register-runner";

const STATUS: Record<PlantonError["code"], number> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PRECONDITION_FAILED: 412,
};

export const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", "cache-control": "no-store", ...headers } });

function errorResponse(err: unknown): Response {
  if (err instanceof PlantonError) return json({ error: { code: err.code, message: err.message } }, STATUS[err.code]);
  if (err instanceof ZodError) {
    const first = err.issues[0];
    // A record key's own message (e.g. an output name) is nested under "Invalid key in record".
    const inner = "issues" in first && Array.isArray(first.issues) ? (first.issues as { message?: string }[]).flat()[0]?.message : undefined;
    return json({ error: { code: "BAD_REQUEST", message: `Nothing was done: ${first.path.join(".") || "body"}: ${inner ?? first.message}` } }, 400);
  }
  if (err instanceof IllegalTransitionError) return json({ error: { code: "CONFLICT", message: `Nothing was done: ${err.message}` } }, 409);
  console.error("runner API:", err);
  return json({ error: { code: "INTERNAL", message: "The server failed to answer; the runner may retry." } }, 500);
}

async function body<T extends z.ZodType>(req: Request, schema: T): Promise<z.infer<T>> {
  let raw: unknown;
  try {
    raw = await req.json();
  } catch {
    throw new PlantonError("BAD_REQUEST", "Nothing was done: the body is not JSON.");
  }
  return schema.parse(raw);
}

export interface JobRouteContext {
  rt: Runtime;
  access: JobAccess;
  jobId: string;
  params: Record<string, string>;
  body: <T extends z.ZodType>(schema: T) => Promise<z.infer<T>>;
}

type Params = { params: Promise<Record<string, string>> };

/** A route that needs the runner token (`Bearer rnr_…`). */
export function runnerRoute(fn: (ctx: { rt: Runtime; runner: RunnerRow; req: Request; body: <T extends z.ZodType>(schema: T) => Promise<z.infer<T>> }) => Promise<Response>) {
  return async (req: Request) => {
    try {
      const rt = await getRuntime();
      const runner = await authenticateRunner(rt.db, bearerOf(req.headers));
      return await fn({ rt, runner, req, body: (s) => body(req, s) });
    } catch (err) {
      return errorResponse(err);
    }
  };
}

/** A route under /jobs/{jobId}/… that needs that job's credential (`Bearer jcr_…`), taken as `use` allows (see jobAccess). */
export function jobRoute(fn: (ctx: JobRouteContext, req: Request) => Promise<Response>, opts: { use?: JobRouteUse } = {}) {
  return async (req: Request, { params }: Params) => {
    try {
      const rt = await getRuntime();
      const p = await params;
      const access = await jobAccess(rt.db, bearerOf(req.headers), p.jobId, opts.use ?? "running");
      return await fn({ rt, access, jobId: p.jobId, params: p, body: (s) => body(req, s) }, req);
    } catch (err) {
      return errorResponse(err);
    }
  };
}
