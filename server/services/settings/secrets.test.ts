import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { count, eq, sql } from "drizzle-orm";
import { environments, infraComponents, infraJobs, secretEnvironments, secrets, variables } from "@/db/schema";
import { newId } from "@/lib/ids";
import { draftComponent } from "../../../test/components";
import { appRouter } from "../../trpc/root";
import { createTestDatabase, testDriver, type TestDatabase } from "../../../test/database";
import { auditCount, auditOf, refusal, seedSettingsOrg, type SettingsOrg } from "../../../test/settings";
import { decryptSecret } from "../../crypto";
import { createSecret, createVariable, deleteSecret, deleteVariable, listSecrets, secretValue, updateSecret, updateVariable } from "./secrets";

let t: TestDatabase;
let org: SettingsOrg;
const VALUE = "s3cr3t-p@ss-0f-acme";
const NEW_VALUE = "rotated-value-9b1c";

beforeAll(async () => {
  t = await createTestDatabase();
  org = await seedSettingsOrg(t.db);
});
afterAll(() => t.close());

const secretCount = async () => (await t.db.select({ n: count() }).from(secrets).where(eq(secrets.orgId, org.orgId)))[0].n;

describe(`secrets (${testDriver})`, () => {
  it("an admin creates a secret; it is stored encrypted with AES-256-GCM and decrypts back for jobs", async () => {
    const { id } = await org.as("admin").secrets.create({ org: org.slug, name: "DB_PASSWORD", description: "Primary database", value: VALUE });
    const [row] = await t.db.select().from(secrets).where(eq(secrets.id, id));
    expect(row.valueEncrypted).not.toContain(VALUE);
    // iv (12) + tag (16) + ciphertext as long as the UTF-8 value
    expect(Buffer.from(row.valueEncrypted, "base64").length).toBe(12 + 16 + Buffer.byteLength(VALUE));
    expect(decryptSecret(row.valueEncrypted)).toBe(VALUE);
    expect(await secretValue(t.db, org.orgId, "DB_PASSWORD")).toBe(VALUE);
    const [event] = await auditOf(t.db, org.orgId, "secret.create");
    expect(event.summary).toBe("Created secret DB_PASSWORD for the organization");
    expect(JSON.stringify(event)).not.toContain(VALUE);
  });

  it("no query procedure returns a secret's value in clear, to admins or anyone else", async () => {
    await org.as("admin").variables.create({ org: org.slug, name: "REGION", value: "eu-west-1" });
    const listed = await org.as("admin").secrets.list({ org: org.slug });
    expect(listed.map((s) => s.name)).toEqual(["DB_PASSWORD"]);
    expect(Object.keys(listed[0]).sort()).toEqual(["createdAt", "description", "environments", "id", "name", "scope", "updatedAt"]);

    // Every query in the app router, called as each role with only the organization: whatever answers must not hold the value.
    const queries = Object.entries((appRouter as unknown as { _def: { procedures: Record<string, { _def: { type: string } }> } })._def.procedures).filter(
      ([, p]) => p._def.type === "query",
    );
    let answered = 0;
    for (const role of ["admin", "engineer", "viewer"] as const) {
      const caller = org.as(role) as unknown as Record<string, unknown>;
      for (const [path] of queries) {
        const fn = path.split(".").reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], caller) as (i: unknown) => Promise<unknown>;
        const result = await fn({ org: org.slug }).catch(() => undefined);
        if (result === undefined) continue;
        answered++;
        expect(JSON.stringify(result), `${role} ${path}`).not.toContain(VALUE);
      }
    }
    expect(answered).toBeGreaterThan(10);
  });

  it("replacing a value keeps the name, re-encrypts, and audits that it was replaced without either value", async () => {
    const [s] = await listSecrets(t.db, org.orgId);
    await org.as("admin").secrets.update({ org: org.slug, id: s.id, value: NEW_VALUE });
    expect(await secretValue(t.db, org.orgId, "DB_PASSWORD")).toBe(NEW_VALUE);
    await updateSecret(t.db, org.actor(), { id: s.id, description: "Primary database (rotated monthly)" });
    expect(await secretValue(t.db, org.orgId, "DB_PASSWORD")).toBe(NEW_VALUE);
    const events = await auditOf(t.db, org.orgId, "secret.update");
    expect(events.map((e) => e.summary)).toEqual(["Replaced the value of secret DB_PASSWORD", "Changed the description of secret DB_PASSWORD"]);
    expect(events[0].changes).toEqual({ value: "replaced" });
    const all = JSON.stringify(await auditOf(t.db, org.orgId, "secret.update"));
    expect(all).not.toContain(VALUE);
    expect(all).not.toContain(NEW_VALUE);
  });

  it("refuses a bad or duplicate name beside the name field, and writes nothing", async () => {
    const before = { rows: await secretCount(), audit: await auditCount(t.db, org.orgId) };
    const dup = await refusal(org.as("admin").secrets.create({ org: org.slug, name: "DB_PASSWORD", value: "x" }));
    expect(dup).toMatchObject({ code: "CONFLICT", field: "name" });
    expect(dup.message).toBe("A secret named DB_PASSWORD already exists. Nothing was saved. Choose another name, or replace the existing secret's value.");
    const bad = await refusal(createSecret(t.db, org.actor(), { name: "1-bad-name", value: "x" }));
    expect(bad).toMatchObject({ code: "BAD_REQUEST", field: "name" });
    const empty = await refusal(createSecret(t.db, org.actor(), { name: "EMPTY", value: "" }));
    expect(empty.field).toBe("value");
    expect(await secretCount()).toBe(before.rows);
    expect(await auditCount(t.db, org.orgId)).toBe(before.audit);
  });

  it("engineers and viewers see secret names but cannot create, replace or delete them", async () => {
    const [s] = await listSecrets(t.db, org.orgId);
    for (const role of ["engineer", "viewer"] as const) {
      expect((await refusal(org.as(role).secrets.create({ org: org.slug, name: "MINE", value: "x" }))).code).toBe("FORBIDDEN");
      expect((await refusal(org.as(role).secrets.update({ org: org.slug, id: s.id, value: "x" }))).code).toBe("FORBIDDEN");
      expect((await refusal(org.as(role).secrets.delete({ org: org.slug, id: s.id }))).code).toBe("FORBIDDEN");
      expect((await org.as(role).secrets.list({ org: org.slug })).map((x) => x.name)).toContain("DB_PASSWORD");
    }
    expect(await secretValue(t.db, org.orgId, "DB_PASSWORD")).toBe(NEW_VALUE);
  });

  it("deletes a secret with an audit event", async () => {
    const { id } = await createSecret(t.db, org.actor(), { name: "TEMP_TOKEN", value: "temporary" });
    await org.as("admin").secrets.delete({ org: org.slug, id });
    expect((await listSecrets(t.db, org.orgId)).map((s) => s.name)).toEqual(["DB_PASSWORD"]);
    expect((await auditOf(t.db, org.orgId, "secret.delete"))[0].summary).toBe("Deleted secret TEMP_TOKEN");
  });
});

describe(`variables (${testDriver})`, () => {
  it("are plain values an admin creates, edits and deletes, each audited", async () => {
    const { id } = await createVariable(t.db, org.actor(), { name: "INSTANCE_TYPE", value: "t3.small", description: "Default size" });
    await org.as("admin").variables.update({ org: org.slug, id, value: "t3.medium" });
    const listed = await org.as("viewer").variables.list({ org: org.slug });
    expect(listed.find((v) => v.id === id)).toMatchObject({ name: "INSTANCE_TYPE", value: "t3.medium", description: "Default size" });
    const [upd] = await auditOf(t.db, org.orgId, "variable.update");
    expect(upd.changes).toEqual({ value: { from: "t3.small", to: "t3.medium" } });
    await updateVariable(t.db, org.actor(), { id, description: "Default instance size" });
    await deleteVariable(t.db, org.actor(), id);
    expect((await org.as("viewer").variables.list({ org: org.slug })).some((v) => v.id === id)).toBe(false);
    expect(await auditCount(t.db, org.orgId, "variable.create")).toBe(2);
    expect(await auditCount(t.db, org.orgId, "variable.update")).toBe(2);
    expect(await auditCount(t.db, org.orgId, "variable.delete")).toBe(1);
  });

  it("refuse a duplicate or malformed name beside the name field, and writes nothing", async () => {
    const before = { rows: (await t.db.select({ n: count() }).from(variables))[0].n, audit: await auditCount(t.db, org.orgId) };
    const dup = await refusal(org.as("admin").variables.create({ org: org.slug, name: "REGION", value: "us-east-1" }));
    expect(dup).toMatchObject({ code: "CONFLICT", field: "name" });
    expect(dup.message).toBe("A variable named REGION already exists. Nothing was saved. Choose another name, or edit the existing variable.");
    const bad = await refusal(org.as("admin").variables.create({ org: org.slug, name: "has space", value: "x" }));
    expect(bad).toMatchObject({ code: "BAD_REQUEST", field: "name" });
    expect(bad.message).toContain("letters, digits and underscores");
    const engineer = await refusal(org.as("engineer").variables.create({ org: org.slug, name: "OK_NAME", value: "x" }));
    expect(engineer.code).toBe("FORBIDDEN");
    expect((await t.db.select({ n: count() }).from(variables))[0].n).toBe(before.rows);
    expect(await auditCount(t.db, org.orgId)).toBe(before.audit);
  });

  it("a secret and a deleted secret's audit trail never hold a value", async () => {
    const { id } = await createSecret(t.db, org.actor(), { name: "ONE_MORE", value: "one-more-secret-value" });
    await deleteSecret(t.db, org.actor(), id);
    const all = await auditOf(t.db, org.orgId, "secret.delete");
    expect(JSON.stringify(all)).not.toContain("one-more-secret-value");
  });
});

describe(`scope: who may use a secret or variable (${testDriver})`, () => {
  it("a secret is the organization's by default; scoped to environments, it lists them, and an update replaces them", async () => {
    const org2 = await seedSettingsOrg(t.db);
    const admin = org2.as("admin");
    await admin.secrets.create({ org: org2.slug, name: "SHARED_TOKEN", value: "shared-token-value" });
    const { id } = await admin.secrets.create({ org: org2.slug, name: "PROD_DB_PASSWORD", value: "prod-db-value", scope: "environment", environments: ["prod", "staging"] });
    const listed = await org2.as("viewer").secrets.list({ org: org2.slug });
    expect(listed.map(({ name, scope, environments }) => ({ name, scope, environments }))).toEqual([
      { name: "PROD_DB_PASSWORD", scope: "environment", environments: ["prod", "staging"] },
      { name: "SHARED_TOKEN", scope: "organization", environments: [] },
    ]);
    expect((await auditOf(t.db, org2.orgId, "secret.create")).map((e) => e.summary)).toContain("Created secret PROD_DB_PASSWORD for environments prod, staging");

    await admin.secrets.update({ org: org2.slug, id, scope: "environment", environments: ["prod"] });
    expect((await listSecrets(t.db, org2.orgId)).find((s) => s.id === id)).toMatchObject({ scope: "environment", environments: ["prod"] });
    const [upd] = await auditOf(t.db, org2.orgId, "secret.update");
    expect(upd).toMatchObject({ summary: "Secret PROD_DB_PASSWORD may now be used by environments prod", changes: { scope: { from: "environments prod, staging", to: "environments prod" } } });
    await admin.secrets.update({ org: org2.slug, id, scope: "organization" });
    expect((await listSecrets(t.db, org2.orgId)).find((s) => s.id === id)).toMatchObject({ scope: "organization", environments: [] });
    expect(await t.db.select().from(secretEnvironments).where(eq(secretEnvironments.secretId, id))).toEqual([]);
    // A value-only update keeps the scope.
    await admin.secrets.update({ org: org2.slug, id, scope: "environment", environments: ["dev"] });
    await admin.secrets.update({ org: org2.slug, id, value: "rotated-prod-db-value" });
    expect((await listSecrets(t.db, org2.orgId)).find((s) => s.id === id)).toMatchObject({ scope: "environment", environments: ["dev"] });
  });

  it("refuses an environment scope with no environment or an unknown one, beside the environments field, and saves nothing", async () => {
    const before = await secretCount();
    const none = await refusal(org.as("admin").secrets.create({ org: org.slug, name: "SCOPED", value: "x1234", scope: "environment", environments: [] }));
    expect(none).toMatchObject({ code: "BAD_REQUEST", field: "environments" });
    expect(none.message).toBe("Pick at least one environment whose jobs may use the secret SCOPED, or make it the organization's. Nothing was saved.");
    const unknown = await refusal(org.as("admin").secrets.create({ org: org.slug, name: "SCOPED", value: "x1234", scope: "environment", environments: ["qa"] }));
    expect(unknown).toMatchObject({ code: "NOT_FOUND", field: "environments" });
    expect(unknown.message).toBe("Environment qa was not found, so the secret SCOPED was not saved. Pick from dev, staging, prod, or create it in Settings → Environments.");
    expect(await secretCount()).toBe(before);
  });

  it("a variable takes the same scope", async () => {
    const { id } = await org.as("admin").variables.create({ org: org.slug, name: "STAGING_REGION", value: "eu-west-1", scope: "environment", environments: ["staging"] });
    expect((await org.as("viewer").variables.list({ org: org.slug })).find((v) => v.id === id)).toMatchObject({ scope: "environment", environments: ["staging"] });
    await org.as("admin").variables.update({ org: org.slug, id, scope: "organization" });
    expect((await org.as("viewer").variables.list({ org: org.slug })).find((v) => v.id === id)).toMatchObject({ scope: "organization", environments: [] });
  });
});

describe(`values the database cannot store (${testDriver})`, () => {
  it("a NUL byte or an unpaired surrogate in a secret's or variable's value is refused on the value field, and nothing is saved", async () => {
    const before = { secrets: await secretCount(), audit: await auditCount(t.db, org.orgId) };
    const nul = await refusal(org.as("admin").secrets.create({ org: org.slug, name: "WITH_NUL", value: "abc\u0000def" }));
    expect(nul).toMatchObject({ code: "BAD_REQUEST", field: "value" });
    expect(nul.message).toContain("The value cannot be stored: it contains a NUL byte (\\0). Nothing was saved. Remove that character, then save again.");
    const surrogate = await refusal(createSecret(t.db, org.actor(), { name: "WITH_SURROGATE", value: "abc\ud800def" }));
    expect(surrogate.field).toBe("value");
    expect(surrogate.message).toContain("unpaired UTF-16 surrogate");
    const [s] = await listSecrets(t.db, org.orgId);
    expect((await refusal(org.as("admin").secrets.update({ org: org.slug, id: s.id, value: "x\u0000" }))).field).toBe("value");
    expect((await refusal(org.as("admin").variables.create({ org: org.slug, name: "NUL_VAR", value: "a\u0000" }))).field).toBe("value");
    expect((await refusal(org.as("admin").variables.create({ org: org.slug, name: "NUL_DESC", value: "a", description: "d\u0000" }))).field).toBe("description");
    expect(await secretCount()).toBe(before.secrets);
    expect(await auditCount(t.db, org.orgId)).toBe(before.audit);
    // A paired surrogate (an emoji) is ordinary text.
    await createSecret(t.db, org.actor(), { name: "WITH_EMOJI", value: "key-\u{1F511}-value" });
    expect(await secretValue(t.db, org.orgId, "WITH_EMOJI")).toBe("key-\u{1F511}-value");
  });
});

describe(`migration of generated secrets named <component>-<output> (${testDriver})`, () => {
  const migration = fs.readFileSync(path.resolve(import.meta.dirname, "../../../db/migrations/0002_governance.sql"), "utf8");
  const dataMigration = migration.slice(migration.indexOf("-- Generated secrets:")).split("--> statement-breakpoint");

  it("renames an old generated secret to its environment's name, scopes it there, records its component, and rewrites the job outputs and specs that named it", async () => {
    const org3 = await seedSettingsOrg(t.db);
    const component = await draftComponent(t.db, org3.actor(), { environment: "staging", kind: "DatabaseCredentials", name: "orders-db", spec: { database_name: "orders" }, connection: "local-sandbox" });
    const consumer = await draftComponent(t.db, org3.actor(), { environment: "staging", kind: "StaticSite", name: "shop", spec: { site_name: "shop", title: "$secret/orders-db-password" }, connection: "local-sandbox" });
    const jobId = newId("infraJob");
    await t.db.insert(infraJobs).values({
      id: jobId,
      orgId: org3.orgId,
      componentId: component.id,
      operation: "update",
      status: "completed",
      result: "succeeded",
      createdByLabel: "test",
      preflight: { passed: true, checks: [], reason: null },
      outputs: { database: { value: "orders_ab12", sensitive: false }, password: { value: "$secret/orders-db-password", sensitive: true } },
    });
    const secretId = newId("secret");
    await t.db.insert(secrets).values({ id: secretId, orgId: org3.orgId, name: "orders-db-password", description: `Output password of orders-db (job ${jobId})`, valueEncrypted: "sealed" });
    // A secret someone named by hand that merely looks generated stays as it is.
    await t.db.insert(secrets).values({ id: newId("secret"), orgId: org3.orgId, name: "orders-db-token", description: "typed by hand", valueEncrypted: "sealed" });

    for (const statement of dataMigration) await t.db.execute(sql.raw(statement));

    const [row] = await t.db.select().from(secrets).where(eq(secrets.id, secretId));
    expect(row).toMatchObject({ name: "STAGING__ORDERS_DB__PASSWORD", scope: "environment", componentId: component.id, description: `Output password of orders-db in staging (job ${jobId})`, valueEncrypted: "sealed" });
    const [staging] = await t.db.select().from(environments).where(eq(environments.id, (await t.db.select().from(infraComponents).where(eq(infraComponents.id, component.id)))[0].environmentId));
    expect(await t.db.select().from(secretEnvironments).where(eq(secretEnvironments.secretId, secretId))).toEqual([{ secretId, environmentId: staging.id }]);
    expect((await t.db.select().from(secrets).where(eq(secrets.orgId, org3.orgId))).map((s) => s.name).sort()).toEqual(["STAGING__ORDERS_DB__PASSWORD", "orders-db-token"]);
    const [job] = await t.db.select().from(infraJobs).where(eq(infraJobs.id, jobId));
    expect(job.outputs).toEqual({ database: { value: "orders_ab12", sensitive: false }, password: { value: "$secret/STAGING__ORDERS_DB__PASSWORD", sensitive: true } });
    const [shop] = await t.db.select().from(infraComponents).where(eq(infraComponents.id, consumer.id));
    expect(shop.spec).toMatchObject({ site_name: "shop", title: "$secret/STAGING__ORDERS_DB__PASSWORD" });
    // Run again, nothing changes: the migration leaves migrated secrets alone.
    for (const statement of dataMigration) await t.db.execute(sql.raw(statement));
    expect((await t.db.select().from(secrets).where(eq(secrets.id, secretId)))[0].name).toBe("STAGING__ORDERS_DB__PASSWORD");
  });
});
