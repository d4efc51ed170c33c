import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { count, eq } from "drizzle-orm";
import { secrets, variables } from "@/db/schema";
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
    expect(event.summary).toBe("Created secret DB_PASSWORD");
    expect(JSON.stringify(event)).not.toContain(VALUE);
  });

  it("no query procedure returns a secret's value in clear, to admins or anyone else", async () => {
    await org.as("admin").variables.create({ org: org.slug, name: "REGION", value: "eu-west-1" });
    const listed = await org.as("admin").secrets.list({ org: org.slug });
    expect(listed.map((s) => s.name)).toEqual(["DB_PASSWORD"]);
    expect(Object.keys(listed[0]).sort()).toEqual(["createdAt", "description", "id", "name", "updatedAt"]);

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
