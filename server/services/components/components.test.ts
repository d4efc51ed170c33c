import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { count, eq } from "drizzle-orm";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { seedTestOrg, type TestOrg } from "../../../test/fixtures";
import { auditEvents, connections, infraComponents } from "@/db/schema";
import { newId } from "@/lib/ids";
import { recordAudit } from "../../audit";
import { draftComponent as createComponent } from "../../../test/components";
import { reconfigure as updateComponent } from "../../../test/components";
import { PlantonError } from "../../errors";

let t: TestDatabase;
let org: TestOrg;

beforeAll(async () => {
  t = await createTestDatabase();
  org = await seedTestOrg(t.db);
  await t.db.insert(connections).values({ id: newId("connection"), orgId: org.orgId, name: "aws-prod", provider: "aws", config: { region: "us-east-1" } });
});
afterAll(() => t.close());

const counts = async () => ({
  components: (await t.db.select({ n: count() }).from(infraComponents).where(eq(infraComponents.orgId, org.orgId)))[0].n,
  audit: (await t.db.select({ n: count() }).from(auditEvents).where(eq(auditEvents.orgId, org.orgId)))[0].n,
});

async function refused(call: () => Promise<unknown>) {
  const before = await counts();
  const err = await call().then(
    () => null,
    (e) => e,
  );
  expect(err, "the call was refused").toBeInstanceOf(PlantonError);
  expect(await counts(), "nothing was written").toEqual(before);
  return err as PlantonError;
}

describe("Infra Components", () => {
  it("are created with the spec's defaults filled in, and the creation is audited", async () => {
    const before = await counts();
    const c = await createComponent(t.db, org.actor("engineer"), { environment: "dev", kind: "StaticSite", name: "docs", spec: { site_name: "docs" }, connection: "local-sandbox" });
    expect(c.spec).toEqual({ site_name: "docs", title: "Hello from Planton", page_count: 2 });
    const after = await counts();
    expect(after.components).toBe(before.components + 1);
    const [event] = await t.db.select().from(auditEvents).where(eq(auditEvents.targetId, c.id));
    expect(event).toMatchObject({ action: "component.create", actorLabel: org.users.engineer.email, summary: "Created StaticSite docs in dev" });
  });

  it("refuse a duplicate name in the same environment, naming the field", async () => {
    await createComponent(t.db, org.actor(), { environment: "staging", kind: "StaticSite", name: "dup", spec: { site_name: "dup" } });
    const err = await refused(() => createComponent(t.db, org.actor(), { environment: "staging", kind: "StaticSite", name: "dup", spec: { site_name: "dup" } }));
    expect(err.message).toBe("A component named dup already exists in staging. Choose another name, or open the existing one.");
    expect(err.field).toBe("name");
    // The same name in another environment is fine.
    await createComponent(t.db, org.actor(), { environment: "prod", kind: "StaticSite", name: "dup", spec: { site_name: "dup" } });
  });

  it("refuse an unknown environment and list the known ones", async () => {
    const err = await refused(() => createComponent(t.db, org.actor(), { environment: "qa", kind: "StaticSite", name: "x1", spec: { site_name: "x" } }));
    expect(err.message).toBe("Environment qa was not found. Pick one of dev, staging, prod, or create it in Settings → Environments.");
    expect(err.field).toBe("environment");
  });

  it("refuse an unknown kind", async () => {
    const err = await refused(() => createComponent(t.db, org.actor(), { environment: "dev", kind: "Nope", name: "x2", spec: {} }));
    expect(err.message).toMatch(/^Catalog kind Nope was not found\. Use one of .*StaticSite/);
    expect(err.field).toBe("kind");
  });

  it("refuse a spec that does not match its kind, naming the field and what it accepts", async () => {
    let err = await refused(() => createComponent(t.db, org.actor(), { environment: "dev", kind: "StaticSite", name: "x3", spec: {} }));
    expect(err.field).toBe("spec.site_name");
    expect(err.message).toContain("The spec does not match StaticSite: site_name");
    err = await refused(() => createComponent(t.db, org.actor(), { environment: "dev", kind: "StaticSite", name: "x3", spec: { site_name: "ok", page_count: 99 } }));
    expect(err.message).toBe("The spec does not match StaticSite: page_count must be at most 20. Nothing was saved.");
    err = await refused(() => createComponent(t.db, org.actor(), { environment: "dev", kind: "StaticSite", name: "x3", spec: { site_name: "ok", colour: "red" } }));
    expect(err.message).toContain("Unknown field colour");
    err = await refused(() => createComponent(t.db, org.actor(), { environment: "dev", kind: "StaticSite", name: "x3", spec: { site_name: "Bad Name" } }));
    expect(err.message).toContain("site_name must be lower-case letters, digits and dashes");
  });

  it("refuse a connection of the wrong provider, naming the provider the kind needs", async () => {
    const err = await refused(() => createComponent(t.db, org.actor(), { environment: "dev", kind: "StaticSite", name: "x4", spec: { site_name: "xx" }, connection: "aws-prod" }));
    expect(err.message).toBe(
      "Connection aws-prod is an aws connection, but StaticSite deploys through a local connection. Pick a local connection, or create one in Settings → Connections.",
    );
    expect(err.field).toBe("connection");
  });

  it("update the spec with validation, audit what changed, and write nothing when the spec is wrong", async () => {
    const c = await createComponent(t.db, org.actor(), { environment: "dev", kind: "StaticSite", name: "upd", spec: { site_name: "upd" } });
    const updated = await updateComponent(t.db, org.actor("engineer"), { id: c.id, spec: { site_name: "upd", title: "New" } });
    expect(updated.spec).toMatchObject({ title: "New" });
    const events = await t.db.select().from(auditEvents).where(eq(auditEvents.targetId, c.id));
    expect(events.map((e) => e.action)).toEqual(["component.create", "component.update"]);
    await refused(() => updateComponent(t.db, org.actor(), { id: c.id, spec: { site_name: 5 } }));
  });

  it("are refused through the API for a viewer, with the role named", async () => {
    const err = await org.call("viewer").components.create({ org: org.slug, environment: "dev", kind: "StaticSite", name: "v1", spec: { site_name: "v" } }).catch((e) => e);
    expect(err.code).toBe("FORBIDDEN");
    expect(err.message).toBe(`Nothing was changed: this needs the engineer role, and you are a viewer in ${org.slug}. Ask an admin of ${org.slug} to change your role in Settings → Members.`);
  });
});

describe("audit events", () => {
  it("roll back with the change they describe", async () => {
    const before = await counts();
    await t.db
      .transaction(async (tx) => {
        await recordAudit(tx, org.actor(), { action: "component.create", summary: "never committed" });
        throw new Error("the change failed after the audit event was written");
      })
      .catch(() => {});
    expect(await counts()).toEqual(before);
  });
});
