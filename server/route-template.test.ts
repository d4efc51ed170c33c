import { describe, expect, it } from "vitest";
import { routeTemplate } from "./route-template";

describe("a request's route template (the HTTP metric's label)", () => {
  it("replaces ids, organization slugs and names, and keeps the route", () => {
    expect(routeTemplate("/api/runner/v1/jobs/job_01JZ3K8Q9V0W1X2Y3Z4A5B6C7D/heartbeat", 200)).toBe("/api/runner/v1/jobs/{id}/heartbeat");
    expect(routeTemplate("/api/runner/v1/jobs/job_01JZ3K8Q9V0W1X2Y3Z4A5B6C7D/secrets/DB_PASSWORD", 200)).toBe("/api/runner/v1/jobs/{id}/secrets/{name}");
    expect(routeTemplate("/o/acme/components/cmp_01JZ3K8Q9V0W1X2Y3Z4A5B6C7D?tab=jobs", 200)).toBe("/o/{org}/components/{id}");
    expect(routeTemplate("/api/trpc/jobs.get,jobs.events?batch=1", 200)).toBe("/api/trpc/{procedures}");
    expect(routeTemplate("/_next/static/chunks/abc123.js", 200)).toBe("/_next/*");
    expect(routeTemplate("/metrics", 401)).toBe("/metrics");
  });

  it("labels every address nothing serves alike, so made-up paths add no series", () => {
    expect(routeTemplate("/made/up/job_01JZ3K8Q9V0W1X2Y3Z4A5B6C7D", 404)).toBe("(unmatched)");
    expect(routeTemplate("/Weird Path/%00", 200)).toBe("/{param}/{param}");
  });
});
