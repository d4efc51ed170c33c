import { lastSeenSeq } from "@/server/input-guard";
import { streamingRoute } from "@/server/public-api/http";
import { streamJobEvents } from "@/server/services/jobs/event-feed";
import { metrics, observeDelivery } from "@/server/metrics";

export const dynamic = "force-dynamic";

const HEARTBEAT_MS = 5_000;

/**
 * Server-sent events: each progress event as `id: <seq>` + `data: <json>`, from after `Last-Event-ID`
 * (or `?after=`), each once and in order. When the job has completed and everything was sent, an
 * `event: end` closes the stream; a client that loses the connection before it reconnects with the last id.
 */
export const GET = streamingRoute(async ({ rt, api, params, req, url }) => {
  await api.jobs.get({ id: params.id });
  const fromHeader = req.headers.get("last-event-id");
  const after = fromHeader !== null ? lastSeenSeq(fromHeader) : lastSeenSeq(url.searchParams.get("after"), "after");
  const abort = new AbortController();
  req.signal.addEventListener("abort", () => abort.abort());
  const encoder = new TextEncoder();
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      const send = (text: string) => {
        if (!abort.signal.aborted) controller.enqueue(encoder.encode(text));
      };
      send(": stream open\n\n");
      const openedAt = Date.now();
      metrics().sseSubscribers.inc();
      heartbeat = setInterval(() => send(": heartbeat\n\n"), HEARTBEAT_MS);
      try {
        for await (const event of streamJobEvents(rt.handle, params.id, after, abort.signal)) {
          send(`id: ${event.seq}\ndata: ${JSON.stringify(event)}\n\n`);
          observeDelivery(event.ts, openedAt);
        }
        send("event: end\ndata: {}\n\n");
      } catch (err) {
        if (!abort.signal.aborted) console.error("event stream:", err);
      } finally {
        clearInterval(heartbeat);
        metrics().sseSubscribers.dec();
        try {
          controller.close();
        } catch {
          // already closed by the client going away
        }
      }
    },
    cancel() {
      clearInterval(heartbeat);
      abort.abort();
    },
  });
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      "x-accel-buffering": "no",
      connection: "keep-alive",
    },
  });
});
