import { afterAll, beforeAll, describe, expect, it } from "vitest";
import path from "node:path";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { seedTestOrg } from "../../test/fixtures";
import { iacModules } from "@/db/schema";
import { newId } from "@/lib/ids";
import { modulesForKind } from "./catalog";
import { preflightForKind } from "./jobs/preflight";

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t.close());

const source = path.resolve("catalog/modules/static-site");

describe("module versions", () => {
  it("are ordered by semver: a release above its release candidates, 1.10.0 above 1.9.0, a non-semver version last", async () => {
    const org = await seedTestOrg(t.db);
    for (const version of ["1.0.0-rc.1", "1.0.0", "1.10.0", "1.9.0", "latest", "1.0.0-rc.2", "0.9.0"]) {
      await t.db.insert(iacModules).values({ id: newId("iacModule"), orgId: org.orgId, scopeKey: org.orgId, kind: "StaticSite", name: "site", provisioner: "builtin", version, source });
    }
    const versions = (await modulesForKind(t.db, org.orgId, "StaticSite")).filter((m) => m.scopeKey === org.orgId).map((m) => m.version);
    expect(versions).toEqual(["1.10.0", "1.9.0", "1.0.0", "1.0.0-rc.2", "1.0.0-rc.1", "0.9.0", "latest"]);
  });

  it("preflight resolves a kind to its release, not a release candidate registered after it", async () => {
    const org = await seedTestOrg(t.db);
    for (const version of ["2.0.0", "2.0.0-rc.1"]) {
      await t.db.insert(iacModules).values({ id: newId("iacModule"), orgId: org.orgId, scopeKey: org.orgId, kind: "StaticSite", name: "site", provisioner: "builtin", version, source });
    }
    const report = await preflightForKind(t.db, org.actor("viewer"), { kind: "StaticSite", environment: "dev" });
    expect(report.checks[0]).toMatchObject({ essential: "module", passed: true, resolvedTo: expect.stringMatching(/^site@2\.0\.0 \(builtin, organization registry latest, sha256 [0-9a-f]{64}\)$/) });
    expect(report.checks[0].visited).toContain("organization registry: site@2.0.0, site@2.0.0-rc.1");
  });
});
