// The live event stream's wire format (GET /api/v1/jobs/{id}/events/stream), one definition for the
// server that writes it, the job page (EventSource) and the CLI's follow (lib/client) that read it:
// server-sent events, one message per progress event — `id: <seq>` and `data: <ProgressEvent JSON>` —
// so an SSE client's Last-Event-ID resumes after the last seq it saw; `event: end` once the job has
// completed and everything was sent. The server encodes a batch of events once and writes every
// subscriber's ready events in one write.
import type { ProgressEvent } from "./runner-protocol";

/** The event name of the message that ends the stream. */
export const JOB_STREAM_END_EVENT = "end";
export const JOB_STREAM_OPEN_FRAME = ": stream open\n\n";
export const JOB_STREAM_HEARTBEAT_FRAME = ": heartbeat\n\n";
export const JOB_STREAM_END_FRAME = `event: ${JOB_STREAM_END_EVENT}\ndata: {}\n\n`;
/** A comment every few seconds keeps proxies and load balancers from closing an idle stream. */
export const JOB_STREAM_HEARTBEAT_MS = 5_000;

/** The messages of these events, in order (JSON has no raw newline, so each `data:` is one line). */
export function encodeEventFrames(events: readonly ProgressEvent[]): string {
  let out = "";
  for (const e of events) out += `id: ${e.seq}\ndata: ${JSON.stringify(e)}\n\n`;
  return out;
}

/** The event a `message` carries. */
export function decodeEventMessage(data: string): ProgressEvent {
  return JSON.parse(data) as ProgressEvent;
}

/** The stream's path under /api/v1; `org` (the organization's slug) for the console's session cookie, `after` the last seq already seen. */
export function jobEventStreamPath(jobId: string, q: { org?: string; after?: number } = {}): string {
  const params = new URLSearchParams();
  if (q.org) params.set("org", q.org);
  if (q.after) params.set("after", String(q.after));
  const s = params.toString();
  return `/jobs/${encodeURIComponent(jobId)}/events/stream${s ? `?${s}` : ""}`;
}
