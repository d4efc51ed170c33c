// A small reader of text/event-stream bodies (the parts the API uses: id, event, data, comments).
export interface EventStreamMessage {
  id?: string;
  event: string;
  data: string;
}

export async function* readEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<EventStreamMessage> {
  const decoder = new TextDecoder();
  let buffer = "";
  let msg: { id?: string; event?: string; data: string[] } = { data: [] };
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffer.search(/\r?\n/)) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + (buffer[nl] === "\r" ? 2 : 1));
        if (line === "") {
          if (msg.data.length || msg.event) yield { id: msg.id, event: msg.event ?? "message", data: msg.data.join("\n") };
          msg = { data: [] };
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "data") msg.data.push(value);
        else if (field === "event") msg.event = value;
        else if (field === "id") msg.id = value;
      }
    }
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => {});
  }
}
