import { describe, expect, it } from "vitest";
import { bearerMatches, metricsResponse } from "./metrics-endpoint";

describe("/metrics without PLANTON_METRICS_TOKEN", () => {
  it("is off, and says which variable turns it on", async () => {
    delete process.env.PLANTON_METRICS_TOKEN;
    const res = await metricsResponse(new Request("http://127.0.0.1/metrics", { headers: { authorization: "Bearer anything-at-all" } }));
    expect(res.status).toBe(404);
    expect((await res.json()).error.message).toMatch(/metrics are off\. Set PLANTON_METRICS_TOKEN .*Authorization: Bearer <that token>/);
  });

  it("takes exactly `Bearer <token>`", () => {
    const token = "0123456789abcdef0123";
    expect(bearerMatches(`Bearer ${token}`, token)).toBe(true);
    expect(bearerMatches(`bearer ${token}`, token)).toBe(true);
    for (const h of [null, "", token, `Bearer ${token}x`, `Bearer ${token.slice(1)}`, `Basic ${token}`]) expect(bearerMatches(h, token), String(h)).toBe(false);
  });
});
