// A job's live events (the job page, `planton infra job … --follow`): GET /api/v1/jobs/{id}/events/stream.
// scripts/serve.mjs answers it without Next.js's request handling (server/direct-lane.ts); Next.js's
// route (app/api/v1/jobs/[id]/events/stream) answers through the same handler if a request reaches it.
import { assertSafeInput, lastSeenSeq } from "../input-guard";
import { assertJobInOrg } from "../services/jobs/queries";
import { orgAccess, signedIn } from "../trpc/init";
import { streamJobEventBatches } from "../services/jobs/event-feed";
import { metrics, observeDeliveries } from "../metrics";
import { JOB_STREAM_END_FRAME, JOB_STREAM_HEARTBEAT_FRAME, JOB_STREAM_HEARTBEAT_MS, JOB_STREAM_OPEN_FRAME } from "@/lib/job-event-stream";
import { acceptsGzip, deflatePiece, GzipPieces, type DeflatedPiece } from "../gzip-pieces";
import { streamingRoute } from "./http";
import { API_BASE } from "./openapi";

/** The stream's path (`$1` the job's id, encoded): lib/job-event-stream.ts's jobEventStreamPath under the REST API's base. */
export const JOB_EVENT_STREAM_PATH = new RegExp(`^${API_BASE}/jobs/([^/]+)/events/stream$`);

const OPEN = deflatePiece(Buffer.from(JOB_STREAM_OPEN_FRAME));
const HEARTBEAT = deflatePiece(Buffer.from(JOB_STREAM_HEARTBEAT_FRAME));
const END = deflatePiece(Buffer.from(JOB_STREAM_END_FRAME));

/**
 * Server-sent events (lib/job-event-stream.ts): each progress event as `id: <seq>` + `data: <json>`,
 * from after `Last-Event-ID` (or `?after=`), each once and in order. When the job has completed and
 * everything was sent, an `event: end` closes the stream; a client that loses the connection before
 * it reconnects with the last id. An API token, or the console's session cookie with `?org=`.
 * Pulled: the next events are taken only once the client has taken the last write, so a slow client's
 * events wait in the job's feed (bounded) and then in the database, not in this process. Gzip-compressed
 * when the client accepts it (browsers and fetch do), each batch deflated once for all its viewers.
 */
export const jobEventStream = streamingRoute(
  async ({ rt, context, params, req, url }) => {
    // The rule every read of a job follows (viewers and up, in the job's organization), without reading the whole job.
    const org = url.searchParams.get("org") ?? undefined;
    assertSafeInput({ id: params.id, org });
    const { actor } = await orgAccess(signedIn(context), org, "viewer");
    await assertJobInOrg(rt.db, actor.orgId, params.id);
    const fromHeader = req.headers.get("last-event-id");
    const after = fromHeader !== null ? lastSeenSeq(fromHeader) : lastSeenSeq(url.searchParams.get("after"), "after");
    const abort = new AbortController();
    req.signal.addEventListener("abort", () => abort.abort());
    abort.signal.addEventListener("abort", () => finish());
    const batches = streamJobEventBatches(rt.handle, params.id, after, abort.signal);
    const gzip = acceptsGzip(req.headers.get("accept-encoding")) ? new GzipPieces() : null;
    /** A piece as this viewer's stream carries it: deflated (shared) when gzip'd, raw otherwise. */
    const frame = (piece: DeflatedPiece) => (gzip ? gzip.next(piece) : piece.raw);
    const openedAt = Date.now();
    let heartbeat: ReturnType<typeof setInterval> | undefined;
    let counted = false;
    const finish = () => {
      clearInterval(heartbeat);
      if (counted) metrics().sseSubscribers.dec();
      counted = false;
    };
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(frame(OPEN));
        metrics().sseSubscribers.inc();
        counted = true;
        heartbeat = setInterval(() => {
          if (!abort.signal.aborted) controller.enqueue(frame(HEARTBEAT));
        }, JOB_STREAM_HEARTBEAT_MS);
      },
      async pull(controller) {
        try {
          const next = await batches.next();
          if (abort.signal.aborted) return;
          if (!next.done) {
            controller.enqueue(gzip ? gzip.next(next.value.piece) : next.value.bytes);
            observeDeliveries(next.value, openedAt, Date.now());
            return;
          }
          controller.enqueue(gzip ? Buffer.concat([frame(END), gzip.end()]) : frame(END));
        } catch (err) {
          if (abort.signal.aborted) return;
          console.error("event stream:", err);
        }
        finish();
        controller.close();
      },
      cancel() {
        finish();
        abort.abort();
        void batches.return(undefined);
      },
    });
    return new Response(body, {
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache, no-transform",
        "x-accel-buffering": "no",
        connection: "keep-alive",
        vary: "Accept-Encoding",
        ...(gzip ? { "content-encoding": "gzip" } : {}),
      },
    });
  },
  { sessionCookie: true },
);
