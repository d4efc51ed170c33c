// The public REST API (/api/v1) and its OpenAPI document, both generated from the tRPC procedures that
// carry `openapi` meta (server/trpc/routers): their zod input and output schemas (lib/api/schemas.ts)
// are the one definition the console, REST and the document share. Three routes are not JSON and stay
// hand-written beside this: the live event stream (SSE), an artifact's bytes and the audit export; the document lists them here.
import { createOpenApiFetchHandler, forEachOpenApiProcedure, generateOpenApiDocument, type OpenApiMeta } from "trpc-to-openapi";
import { z, ZodError } from "zod";
import { auditEventSchema, auditFilterInput } from "@/lib/api/audit-schemas";
import { AUDIT_EXPORT_FORMATS } from "@/lib/audit-export";
import { answerFor, errorResponse, refusalResponse } from "../error-map";
import { PlantonError } from "../errors";
import { MAX_BODY_BYTES, readBodyText } from "../input-guard";
import { getRuntime } from "../runtime";
import type { ProcedureMeta } from "../trpc/init";
import { appRouter } from "../trpc/root";
import { restContext } from "./http";

export const API_BASE = "/api/v1";


type PublicMeta = ProcedureMeta & { openapi: NonNullable<OpenApiMeta["openapi"]> };

/** The public procedures: those with `openapi` meta, by tRPC path. */
export function publicProcedures(): { path: string; type: string; meta: PublicMeta }[] {
  const found: { path: string; type: string; meta: PublicMeta }[] = [];
  forEachOpenApiProcedure<ProcedureMeta>(appRouter._def.procedures, ({ path, type, meta }) => found.push({ path, type, meta }));
  return found;
}

const jobId = z.string().meta({ description: "The Infra Job's id" });
const bearer = [{ Authorization: [] }];

/** The routes that are not JSON: documented here, served by their own handlers in app/api/v1. */
const STREAMING_PATHS = {
  "/jobs/{id}/events/stream": {
    get: {
      operationId: "jobs-eventsStream",
      tags: ["Infra Jobs"],
      summary:
        "Live progress as server-sent events: one message per event, `id: <seq>` + `data: <ProgressEvent JSON>`, after Last-Event-ID (or ?after=), each once and in order (events that are ready together arrive in one write); `event: end` when the job has completed. Also works with the console's session cookie and ?org=",
      security: bearer,
      requestParams: {
        path: z.object({ id: jobId }),
        query: z.object({
          after: z.int32().min(0).optional().meta({ description: "The last seq already seen (Last-Event-ID wins when both are sent)" }),
          org: z.string().optional().meta({ description: "The organization's slug; with an API token it may be left out" }),
        }),
        header: z.object({ "last-event-id": z.string().optional() }),
      },
      responses: { 200: { description: "An event stream", content: { "text/event-stream": { schema: z.string() } } } },
    },
  },
  "/audit/export": {
    get: {
      operationId: "audit-export",
      tags: ["Audit"],
      summary: "The filtered audit record as a streamed download (oldest first): CSV with the columns seq, at, actorLabel, … hash, or one JSON array of AuditEvent; takes GET /audit's filters. Also works with the console's session cookie",
      security: bearer,
      requestParams: { query: auditFilterInput.extend({ format: z.enum(AUDIT_EXPORT_FORMATS).default("csv"), org: z.string().optional().meta({ description: "The organization's slug; with an API token it may be left out" }) }) },
      responses: {
        200: {
          description: "The file, as an attachment named audit-<org>-<YYYY-MM-DD>.csv|json",
          content: { "text/csv": { schema: z.string() }, "application/json": { schema: z.array(auditEventSchema) } },
        },
      },
    },
  },
  "/jobs/{id}/artifacts/{artifactId}": {
    get: {
      operationId: "jobs-artifactBytes",
      tags: ["Infra Jobs"],
      summary: "An artifact's bytes, with `Digest: sha-256=<base64>` to verify before use; encrypted artifacts (plans, state) are refused",
      security: bearer,
      requestParams: { path: z.object({ id: jobId, artifactId: z.string() }) },
      responses: { 200: { description: "The bytes", content: { "application/octet-stream": { schema: z.string().meta({ format: "binary" }) } } } },
    },
  },
};

let document: ReturnType<typeof generateOpenApiDocument> | undefined;

/** The OpenAPI 3.1 document of /api/v1. */
export function openApiDocument() {
  document ??= withCreatedStatus(generateOpenApiDocument(appRouter, {
    title: "Planton console API",
    version: "1",
    description:
      "Run and steer Infra Jobs from scripts. Authenticate with an API token (Settings → API Tokens) sent as the header Authorization: Bearer plt_…; the token's organization is the one acted in. A refusal answers {error: {code, message}} with what was not done and the fix.",
    baseUrl: API_BASE,
    paths: STREAMING_PATHS as Parameters<typeof generateOpenApiDocument>[1]["paths"],
  }));
  return document;
}

/** The library documents every success as 200; a procedure with `created` meta answers 201 (responseMeta below). */
function withCreatedStatus(doc: ReturnType<typeof generateOpenApiDocument>) {
  for (const { meta } of publicProcedures()) {
    if (!meta.created) continue;
    const op = doc.paths?.[meta.openapi.path]?.[meta.openapi.method.toLowerCase() as "post"];
    if (op?.responses?.["200"]) {
      op.responses["201"] = { ...op.responses["200"], description: "Created" };
      delete op.responses["200"];
    }
  }
  return doc;
}

/** The library's own refusals (no procedure reached), in the product's words. */
function libraryMessage(code: string, req: Request): string | null {
  const url = new URL(req.url);
  if (code === "NOT_FOUND") return `Nothing was done: there is no ${req.method} ${url.pathname} in the Planton API. The routes are listed in ${API_BASE}/openapi.json.`;
  if (code === "PARSE_ERROR") return "Nothing was done: the body is not JSON.";
  if (code === "UNSUPPORTED_MEDIA_TYPE") return "Nothing was done: send the body as JSON, with Content-Type: application/json.";
  return null;
}

interface LibraryErrorBody {
  message?: string;
  code?: string;
  issues?: ZodError["issues"];
  data?: { path?: string; errorId?: string };
}

/** Rewrites the library's error body into the API's `{error: {code, message, errorId?}}`, the same as the runner API's. */
async function refusal(res: Response, req: Request): Promise<Response> {
  const body = (await res.json().catch(() => ({}))) as LibraryErrorBody;
  const code = body.code ?? "INTERNAL_SERVER_ERROR";
  let message = body.message ?? "";
  if (body.issues?.length) message = answerFor(new ZodError(body.issues), "public API").message;
  else if (!body.data?.path) message = libraryMessage(code, req) ?? message;
  return refusalResponse(res.status, code, message, body.data?.errorId, res.headers);
}

/** The body read once, within its bound; a POST without one (`curl -X POST …/cancel`) is an empty JSON object. */
async function withJsonBody(req: Request): Promise<Request> {
  if (req.method === "GET" || req.method === "HEAD") return req;
  const text = await readBodyText(req, MAX_BODY_BYTES);
  const headers = new Headers(req.headers);
  if (!headers.get("content-type")) headers.set("content-type", "application/json");
  return new Request(req.url, { method: req.method, headers, body: text.trim() ? text : "{}", signal: req.signal });
}

/** Answers one request to /api/v1 with the procedure its method and path name. */
export async function handlePublicApi(incoming: Request): Promise<Response> {
  let req: Request;
  try {
    decodeURIComponent(new URL(incoming.url).pathname);
    req = await withJsonBody(incoming);
  } catch (err) {
    return errorResponse(err instanceof URIError ? new PlantonError("BAD_REQUEST", "Nothing was done: the address has a malformed %-escape. Encode each path segment with encodeURIComponent.") : err, "public API");
  }
  const rt = await getRuntime();
  const res = await createOpenApiFetchHandler({
    endpoint: API_BASE,
    router: appRouter,
    req,
    createContext: () => restContext(rt, req),
    responseMeta: ({ paths, errors }) => {
      const meta = paths?.length === 1 ? publicProcedures().find((p) => p.path === paths[0])?.meta : undefined;
      return { status: !errors.length && meta?.created ? 201 : undefined, headers: { "cache-control": "no-store" } };
    },
  });
  return res.ok ? res : refusal(res, req);
}
