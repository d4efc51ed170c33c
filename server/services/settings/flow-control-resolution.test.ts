import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { seedTestOrg, type TestOrg } from "../../../test/fixtures";
import { draftComponent } from "../../../test/components";
import { PLATFORM_DEFAULT, type PolicyToggles } from "@/lib/flow-control";
import { deleteFlowControlPolicy, resolveFlowControl, setFlowControlPolicy } from "./flow-control";
import { environmentByName } from "../organizations/lookup";

let t: TestDatabase;
let org: TestOrg;
let scope: Parameters<typeof resolveFlowControl>[1];

const off: PolicyToggles = { manualStart: false, skipRefresh: false, previewBeforeApply: true, pauseBeforeApply: false, protectDeletes: false };

beforeAll(async () => {
  t = await createTestDatabase();
  org = await seedTestOrg(t.db);
  const env = await environmentByName(t.db, org.orgId, "staging");
  const c = await draftComponent(t.db, org.actor(), { environment: "staging", kind: "StaticSite", name: "site", spec: { site_name: "site" } });
  scope = { orgId: org.orgId, orgSlug: org.slug, environmentId: env.id, environmentName: "staging", componentId: c.id, componentName: "site" };
});
afterAll(() => t.close());

describe("flow-control resolution", () => {
  it("falls back to the platform default when nothing more specific exists, having visited every selector", async () => {
    const r = await resolveFlowControl(t.db, scope);
    expect(r.selector).toBe("platform");
    expect(r.toggles).toEqual(PLATFORM_DEFAULT);
    expect(r.visited.map((v) => `${v.selector}:${v.found}`)).toEqual(["component:false", "environment:false", "organization:false", "platform:true"]);
  });

  it("takes the most specific policy whole, never merging toggles from less specific ones", async () => {
    await setFlowControlPolicy(t.db, org.actor(), { selector: "organization", toggles: { ...off, manualStart: true } });
    let r = await resolveFlowControl(t.db, scope);
    expect(r.selector).toBe("organization");
    expect(r.toggles.manualStart).toBe(true);

    await setFlowControlPolicy(t.db, org.actor(), { selector: "environment", target: "staging", toggles: { ...off, pauseBeforeApply: true } });
    r = await resolveFlowControl(t.db, scope);
    expect(r.selector).toBe("environment");
    expect(r.target).toBe("staging");
    // The organization's manualStart does not leak in: no merging.
    expect(r.toggles).toEqual({ ...off, pauseBeforeApply: true });

    await setFlowControlPolicy(t.db, org.actor(), { selector: "component", target: scope.componentId, toggles: { ...off, skipRefresh: true } });
    r = await resolveFlowControl(t.db, scope);
    expect(r.selector).toBe("component");
    expect(r.toggles).toEqual({ ...off, skipRefresh: true });
    expect(r.visited.map((v) => `${v.selector}:${v.found}`)).toEqual(["component:true"]);
  });

  it("falls back to the next selector when the specific policy is removed", async () => {
    const r = await resolveFlowControl(t.db, scope);
    await deleteFlowControlPolicy(t.db, org.actor(), r.policyId!);
    const after = await resolveFlowControl(t.db, scope);
    expect(after.selector).toBe("environment");
    expect(after.visited.map((v) => `${v.selector}:${v.found}`)).toEqual(["component:false", "environment:true"]);
  });

  it("does not apply another environment's policy", async () => {
    const prod = await environmentByName(t.db, org.orgId, "prod");
    const r = await resolveFlowControl(t.db, { orgId: org.orgId, orgSlug: org.slug, environmentId: prod.id, environmentName: "prod" });
    expect(r.selector).toBe("organization");
  });
});
