// The HTTP edge of the runner API (/api/runner/v1): each route in routes.ts is one line over these.
// Refusals come back as JSON `{error: {message, code}}` with the matching status.
import type { z } from "zod";
import { errorResponse } from "../error-map";
import { holdBody } from "../held-bodies";
import { assertSafeInput, MAX_RUNNER_BODY_BYTES, parseJsonBody, readBodyBytes, readBodyText } from "../input-guard";
import { getRuntime, type Runtime } from "../runtime";
import { jobAccess, jobAccessUnconfirmed, type JobAccess, type JobRouteUse } from "../services/runners/job-access";
import { authenticateRunner, bearerOf, type RunnerRow } from "../services/runners/register-runner";

/** Below this size an answer is not worth compressing (the `compression` middleware's own default threshold). */
export const COMPRESS_FROM_BYTES = 1024;

/**
 * A JSON answer. Next streams a Response's body without its length, so the console's compression would
 * take every answer, however small, through a zlib stream of its own (a runner's event upload answers
 * `{"acceptedThrough":…}` many times a second); a small answer says `no-transform`, which the compression
 * middleware honours, and a large one (a state, a page) is still compressed.
 */
export const json = (body: unknown, status = 200, headers: Record<string, string> = {}) => {
  const text = JSON.stringify(body);
  const small = Buffer.byteLength(text) < COMPRESS_FROM_BYTES;
  return holdBody(new Response(text, { status, headers: { "content-type": "application/json", "cache-control": small ? "no-store, no-transform" : "no-store", ...headers } }), text);
};

/** The JSON body, within its bound and free of NUL bytes and lone surrogates. */
async function rawBody(req: Request): Promise<unknown> {
  const raw = parseJsonBody(await readBodyText(req, MAX_RUNNER_BODY_BYTES));
  assertSafeInput(raw);
  return raw;
}

async function body<T extends z.ZodType>(req: Request, schema: T): Promise<z.infer<T>> {
  return schema.parse(await rawBody(req));
}

export interface JobRouteContext {
  rt: Runtime;
  access: JobAccess;
  jobId: string;
  params: Record<string, string>;
  body: <T extends z.ZodType>(schema: T) => Promise<z.infer<T>>;
  /** The JSON body as sent, for services that check its shape themselves. */
  json: () => Promise<unknown>;
  /** The raw bytes of the body (artifact uploads). */
  bytes: () => Promise<Uint8Array>;
}

/** A route's handler: the request, and the path's parameters (decoded) as its pattern names them. */
export type RunnerApiHandler = (req: Request, params: Record<string, string>) => Promise<Response>;

/** A route that needs the runner token (`Bearer rnr_…`). */
export function runnerRoute(fn: (ctx: { rt: Runtime; runner: RunnerRow; req: Request; body: <T extends z.ZodType>(schema: T) => Promise<z.infer<T>> }) => Promise<Response>): RunnerApiHandler {
  return async (req) => {
    try {
      const rt = await getRuntime();
      const runner = await authenticateRunner(rt.db, bearerOf(req.headers));
      return await fn({ rt, runner, req, body: (s) => body(req, s) });
    } catch (err) {
      return errorResponse(err, "runner API");
    }
  };
}

/**
 * A route under /jobs/{jobId}/… that needs that job's credential (`Bearer jcr_…`), taken as `use` allows (see jobAccess).
 * `unconfirmed`: its service writes in one statement that tests the access itself (jobAccessUnconfirmed).
 */
export function jobRoute(fn: (ctx: JobRouteContext, req: Request) => Promise<Response>, opts: { use?: JobRouteUse; unconfirmed?: boolean } = {}): RunnerApiHandler {
  return async (req, p) => {
    try {
      const rt = await getRuntime();
      assertSafeInput(p);
      const access = await (opts.unconfirmed ? jobAccessUnconfirmed : jobAccess)(rt.db, bearerOf(req.headers), p.jobId, opts.use ?? "running");
      return await fn(
        { rt, access, jobId: p.jobId, params: p, body: (s) => body(req, s), json: () => rawBody(req), bytes: async () => new Uint8Array(await readBodyBytes(req, MAX_RUNNER_BODY_BYTES)) },
        req,
      );
    } catch (err) {
      return errorResponse(err, "runner API");
    }
  };
}
