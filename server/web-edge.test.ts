import os from "node:os";
import { describe, expect, it } from "vitest";
import { TRPC_MAX_BODY_BYTES } from "@/lib/trpc/limits";
import { serverConfig } from "./config";
import { boundedBody, consoleOrigin, originRefusal, trpcCallCount, trustedOrigins } from "./web-edge";

const served = serverConfig({ PLANTON_URL: "https://planton.example.com", PLANTON_TRUSTED_ORIGINS: "https://ops.example.com" });
const local = serverConfig({ PORT: "3000" });

const change = (headers: Record<string, string>, method = "POST") => new Request("http://127.0.0.1:3000/api/trpc/environments.update", { method, headers });

describe("which origins may make changes with the sign-in cookie", () => {
  it("are the console's URL and the configured extra origins, never a request's own host", () => {
    expect(trustedOrigins(served)).toEqual(["https://planton.example.com", "https://ops.example.com"]);
    expect(consoleOrigin(served)).toBe("https://planton.example.com");
    // Without PLANTON_URL the console is reached on this machine.
    expect(trustedOrigins(local)).toEqual(["http://127.0.0.1:3000", "http://localhost:3000", "http://[::1]:3000"]);
    // Served on every interface: this machine's own addresses (from the OS, not from any request).
    const lanAddresses = Object.values(os.networkInterfaces()).flatMap((l) => l ?? []).filter((i) => i.family === "IPv4" && !i.internal).map((i) => `http://${i.address}:3000`);
    expect(trustedOrigins({ ...local, HOST: "0.0.0.0" })).toEqual(expect.arrayContaining(["http://127.0.0.1:3000", ...lanAddresses]));
    expect(consoleOrigin(serverConfig({ HOST: "0.0.0.0", PORT: "8080" }))).toBe("http://127.0.0.1:8080");
    expect(consoleOrigin(serverConfig({ HOST: "192.168.1.5", PORT: "8080" }))).toBe("http://192.168.1.5:8080");
  });

  it("serves a change from the console's own pages, by Origin, Referer or Sec-Fetch-Site", () => {
    expect(originRefusal(change({ origin: "https://planton.example.com" }), served)).toBeNull();
    expect(originRefusal(change({ origin: "https://ops.example.com" }), served)).toBeNull();
    expect(originRefusal(change({ referer: "https://planton.example.com/o/acme/components" }), served)).toBeNull();
    expect(originRefusal(change({ "sec-fetch-site": "same-origin" }), served)).toBeNull();
    expect(originRefusal(change({ origin: "http://localhost:3000" }), local)).toBeNull();
  });

  it("refuses a change from any other page, saying what was not done and which setting fixes it", () => {
    const refusal = originRefusal(change({ origin: "https://evil.example", host: "evil.example" }), served);
    expect(refusal).toBe(
      "Nothing was done: the request came from https://evil.example, which is not the console's address https://planton.example.com, so it may be another site acting with your sign-in. If you open the console at that address, set PLANTON_URL to it (or add it to PLANTON_TRUSTED_ORIGINS) and restart the console; otherwise open the console at https://planton.example.com and try again.",
    );
    // The request's own Host and X-Forwarded-Host are never trusted.
    expect(originRefusal(change({ origin: "https://evil.example", host: "evil.example", "x-forwarded-host": "evil.example" }), served)).not.toBeNull();
    expect(originRefusal(change({ origin: "http://planton.example.com" }), served)).not.toBeNull();
    expect(originRefusal(change({ origin: "null" }), served)).toMatch(/^Nothing was done: the request came from a page with no origin \(Origin: null\)/);
    expect(originRefusal(change({ referer: "https://evil.example/page" }), served)).toMatch(/came from https:\/\/evil\.example,/);
    expect(originRefusal(change({ "sec-fetch-site": "cross-site" }), served)).toMatch(/^Nothing was done: the browser says the request came from another site \(Sec-Fetch-Site: cross-site\)/);
    expect(originRefusal(change({ "sec-fetch-site": "same-site" }), served)).not.toBeNull();
    expect(originRefusal(change({ origin: "https://evil.example" }, "DELETE"), served)).not.toBeNull();
  });

  it("leaves reads, API-token calls and clients that are no browser alone", () => {
    expect(originRefusal(change({ origin: "https://evil.example" }, "GET"), served)).toBeNull();
    expect(originRefusal(change({ origin: "https://evil.example", authorization: "Bearer plt_abc" }), served)).toBeNull();
    expect(originRefusal(change({}), served)).toBeNull();
    // A cookie does not make a browser-less request a browser's.
    expect(originRefusal(change({ cookie: "better-auth.session_token=x" }), served)).toBeNull();
  });
});

describe("tRPC request limits", () => {
  it("counts the calls of a batch from its path", () => {
    expect(trpcCallCount(new URL("http://c/api/trpc/me.get"))).toBe(1);
    expect(trpcCallCount(new URL("http://c/api/trpc/me.get,jobs.list,jobs.get?batch=1&input={}"))).toBe(3);
  });

  it("reads a body up to the limit and stops at the first byte past it", async () => {
    const at = new Uint8Array(TRPC_MAX_BODY_BYTES);
    expect((await boundedBody(new Request("http://c/", { method: "POST", body: at })))?.byteLength).toBe(TRPC_MAX_BODY_BYTES);
    expect(await boundedBody(new Request("http://c/", { method: "POST", body: new Uint8Array(TRPC_MAX_BODY_BYTES + 1) }))).toBeNull();
    // A streamed body without Content-Length is counted as it arrives.
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < 3; i++) c.enqueue(new Uint8Array(TRPC_MAX_BODY_BYTES / 2));
        c.close();
      },
    });
    expect(await boundedBody(new Request("http://c/", { method: "POST", body: stream, duplex: "half" } as RequestInit))).toBeNull();
  });
});
