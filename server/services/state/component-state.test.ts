import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { seedTestOrg, type TestOrg } from "../../../test/fixtures";
import { stateBackends, stateObjects } from "@/db/schema";
import { eq } from "drizzle-orm";
import { newId } from "@/lib/ids";
import { draftComponent } from "../../../test/components";
import { getComponentState } from "./component-state";

let t: TestDatabase;
let org: TestOrg;

beforeAll(async () => {
  t = await createTestDatabase();
  org = await seedTestOrg(t.db);
});
afterAll(() => t.close());

describe("a component's state", () => {
  it("is absent before the first job wrote it", async () => {
    const c = await draftComponent(t.db, org.actor(), { environment: "dev", kind: "StaticSite", name: "fresh", spec: { site_name: "fresh" } });
    expect(await getComponentState(t.db, org.orgId, c.id)).toBeNull();
  });

  it("shows its backend, identity, lock and resources, and never a sensitive output's value", async () => {
    const c = await draftComponent(t.db, org.actor(), { environment: "dev", kind: "DatabaseCredentials", name: "db", spec: { database_name: "orders" } });
    const [backend] = await t.db.select().from(stateBackends).where(eq(stateBackends.orgId, org.orgId));
    const doc = {
      version: 4,
      terraform_version: "builtin-0.1.0",
      serial: 3,
      lineage: "abc",
      outputs: { database: { value: "orders", type: "string" }, password: { value: "hunter2-very-secret", type: "string", sensitive: true } },
      resources: [{ mode: "managed", type: "random_password", name: "password", provider: 'provider["registry.opentofu.org/hashicorp/random"]', instances: [{ attributes: { id: "none", result: "hunter2-very-secret" } }] }],
    };
    await t.db.insert(stateObjects).values({ id: newId("stateObject"), orgId: org.orgId, componentId: c.id, backendId: backend.id, key: `${c.id}.tfstate`, lineage: "abc", serial: 3, state: doc, lockInfo: { ID: "l1", Who: "runner", Path: `${c.id}.tfstate`, Operation: "OperationTypeApply", Version: "", Created: "2026-01-01T00:00:00Z", Info: "" }, lockedByJob: "job_x" });
    const s = await getComponentState(t.db, org.orgId, c.id);
    expect(s).toMatchObject({ backend: { name: "planton-managed", kind: "planton_managed" }, lineage: "abc", serial: 3, lock: { ID: "l1" }, lockedByJob: "job_x" });
    expect(s!.resources).toEqual([{ address: "random_password.password", type: "random_password", provider: 'provider["registry.opentofu.org/hashicorp/random"]', instances: 1, id: "none" }]);
    expect(s!.outputs).toEqual([
      { name: "database", sensitive: false, value: "orders" },
      { name: "password", sensitive: true, value: null },
    ]);
    expect(JSON.stringify(s)).not.toContain("hunter2");
  });

  it("of another organization's component is not found", async () => {
    const other = await seedTestOrg(t.db);
    const c = await draftComponent(t.db, other.actor(), { environment: "dev", kind: "StaticSite", name: "theirs", spec: { site_name: "theirs" } });
    await expect(getComponentState(t.db, org.orgId, c.id)).rejects.toThrow(/was not found/);
  });
});
