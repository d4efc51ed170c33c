// Reads a text/event-stream body into messages, parsed by eventsource-parser.
import { createParser } from "eventsource-parser";

export interface EventStreamMessage {
  id?: string;
  event: string;
  data: string;
}

export async function* readEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<EventStreamMessage> {
  const parsed: EventStreamMessage[] = [];
  const parser = createParser({ onEvent: (m) => parsed.push({ id: m.id, event: m.event || "message", data: m.data }) });
  const decoder = new TextDecoder();
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      parser.feed(decoder.decode(value, { stream: true }));
      while (parsed.length) yield parsed.shift()!;
    }
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => {});
  }
}
