import { streamingRoute } from "@/server/public-api/http";
import { auditExportChunks, parseExportQuery } from "@/server/services/audit/export";
import { orgAccess, signedIn } from "@/server/trpc/init";
import { auditExportFileName } from "@/lib/audit-export";

export const dynamic = "force-dynamic";

const CONTENT_TYPES = { csv: "text/csv; charset=utf-8", json: "application/json; charset=utf-8" };

/**
 * The filtered audit record as a download (`?format=csv|json` and the filters of GET /audit), streamed:
 * each batch is read when the client has taken the one before. Viewers and up; the console's Export
 * buttons link here with the session cookie, scripts send an API token.
 */
export const GET = streamingRoute(
  async ({ rt, context, url }) => {
    const caller = signedIn(context);
    const { org: slug, format, filter } = parseExportQuery(url.searchParams);
    const { actor, org } = await orgAccess(caller, slug, "viewer");
    const chunks = auditExportChunks(rt.db, actor, org.slug, filter, format);
    // The opening and the first batch are read before answering, so a failure there is an answer, not a cut-off file.
    const ready: string[] = [];
    for (let i = 0; i < 2; i++) {
      const next = await chunks.next();
      if (next.done) break;
      ready.push(next.value);
    }
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (ready.length) return controller.enqueue(encoder.encode(ready.shift()!));
        try {
          const next = await chunks.next();
          if (next.done) controller.close();
          else controller.enqueue(encoder.encode(next.value));
        } catch (err) {
          // Headers are sent: the client sees a cut-off file, the log says why.
          console.error("audit export:", err);
          controller.error(err);
        }
      },
      async cancel() {
        await chunks.return(undefined);
      },
    });
    return new Response(body, {
      headers: {
        "content-type": CONTENT_TYPES[format],
        "content-disposition": `attachment; filename="${auditExportFileName(org.slug, format)}"`,
        "cache-control": "no-store",
        "x-accel-buffering": "no",
      },
    });
  },
  { sessionCookie: true },
);
