// FAKES of third-party APIs for the remote kinds' tests: small local HTTP servers that answer the few
// calls each kind makes, the way the real service documents them. They are stand-ins, not the services:
// a test that uses one says so in its name, and the real service is tested by the conformance suite
// when its credentials are in the environment.
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface FakeAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface FakeServer {
  url: string;
  /** Every request the fake answered, in order. */
  requests: FakeRequest[];
  stop: () => Promise<void>;
}

/** Starts a fake on a free port; `handle` answers each request synchronously (so check-and-set is atomic, as on the service). */
export async function startFake(handle: (req: FakeRequest) => FakeAnswer): Promise<FakeServer> {
  const requests: FakeRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://fake");
      const request: FakeRequest = { method: req.method ?? "GET", path: url.pathname, query: url.searchParams, headers: req.headers, body: Buffer.concat(chunks) };
      requests.push(request);
      let answer: FakeAnswer;
      try {
        answer = handle(request);
      } catch (e) {
        answer = { status: 500, body: { error: { message: (e as Error).message } } };
      }
      const raw = answer.body === undefined ? "" : Buffer.isBuffer(answer.body) || answer.body instanceof Uint8Array ? Buffer.from(answer.body) : JSON.stringify(answer.body);
      res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
      res.end(raw);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    stop: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
