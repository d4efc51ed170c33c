import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { count, eq } from "drizzle-orm";
import { connectionAuthorizations, connections, runners } from "@/db/schema";
import { newId } from "@/lib/ids";
import { createTestDatabase, testDriver, type TestDatabase } from "../../../test/database";
import { auditCount, auditOf, refusal, seedSettingsOrg, type SettingsOrg } from "../../../test/settings";
import { decryptSecret, sha256Hex } from "../../crypto";
import { draftComponent } from "../../../test/components";
import { createConnection, deleteConnection, listConnections, setConnectionAuthorizations, updateConnection } from "./connections";

let t: TestDatabase;
let org: SettingsOrg;
const SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

beforeAll(async () => {
  t = await createTestDatabase();
  org = await seedSettingsOrg(t.db);
});
afterAll(() => t.close());

const connectionCount = async () => (await t.db.select({ n: count() }).from(connections).where(eq(connections.orgId, org.orgId)))[0].n;
const authCount = async () => (await t.db.select({ n: count() }).from(connectionAuthorizations))[0].n;

describe(`connections (${testDriver})`, () => {
  it("an admin creates a stored AWS connection; its credentials are encrypted, never listed, and decrypt back", async () => {
    const admin = org.as("admin");
    await admin.connections.create({
      org: org.slug,
      name: "aws-prod",
      provider: "aws",
      config: { region: "eu-west-1" },
      credentials: { access_key_id: "AKIAEXAMPLE", secret_access_key: SECRET_KEY },
    });
    const list = await admin.connections.list({ org: org.slug });
    const aws = list.find((c) => c.name === "aws-prod")!;
    expect(aws).toMatchObject({ provider: "aws", mode: "stored", config: { region: "eu-west-1" }, hasCredentials: true, runnerId: null });
    expect(JSON.stringify(list)).not.toContain(SECRET_KEY);
    expect(JSON.stringify(list)).not.toContain("AKIAEXAMPLE");

    const [row] = await t.db.select().from(connections).where(eq(connections.id, aws.id));
    expect(row.credentialsEncrypted).not.toContain(SECRET_KEY);
    expect(JSON.parse(decryptSecret(row.credentialsEncrypted!))).toEqual({ access_key_id: "AKIAEXAMPLE", secret_access_key: SECRET_KEY });

    const [event] = await auditOf(t.db, org.orgId, "connection.create");
    expect(event.summary).toBe("Created aws connection aws-prod");
    expect(event.actorLabel).toBe(org.users.admin.email);
    expect(JSON.stringify(event)).not.toContain(SECRET_KEY);
  });

  it("an engineer may list connections but not create one", async () => {
    const r = await refusal(org.as("engineer").connections.create({ org: org.slug, name: "sneaky", provider: "local", config: { root: "/tmp/x" } }));
    expect(r.code).toBe("FORBIDDEN");
    expect(r.message).toContain("this needs the admin role");
    expect((await org.as("viewer").connections.list({ org: org.slug })).length).toBeGreaterThan(0);
  });

  it("refuses bad input beside the field it concerns, and writes nothing", async () => {
    const admin = org.as("admin");
    const before = { rows: await connectionCount(), audit: await auditCount(t.db, org.orgId) };
    const base = { org: org.slug, provider: "aws", config: { region: "us-east-1" }, credentials: { access_key_id: "a", secret_access_key: "b" } };

    const dup = await refusal(admin.connections.create({ ...base, name: "aws-prod" }));
    expect(dup).toMatchObject({ code: "CONFLICT", field: "name" });
    expect(dup.message).toBe("A connection named aws-prod already exists. Nothing was saved. Choose another name, or edit the existing one.");

    const provider = await refusal(admin.connections.create({ ...base, name: "x-1", provider: "oracle" }));
    expect(provider).toMatchObject({ code: "BAD_REQUEST", field: "provider" });
    expect(provider.message).toContain("Unknown provider oracle. Nothing was saved. Pick one of local, aws, gcp, azure, postgres, r2, azure_storage, terraform_cloud, pulumi_cloud.");

    const config = await refusal(admin.connections.create({ ...base, name: "x-2", config: {} }));
    expect(config).toMatchObject({ code: "BAD_REQUEST", field: "config.region" });
    expect(config.message).toContain("region is required");

    const cred = await refusal(admin.connections.create({ ...base, name: "x-3", credentials: { access_key_id: "a" } }));
    expect(cred).toMatchObject({ code: "BAD_REQUEST", field: "credentials.secret_access_key" });
    expect(cred.message).toContain("secret_access_key is required");

    const name = await refusal(admin.connections.create({ ...base, name: "Bad Name" }));
    expect(name).toMatchObject({ code: "BAD_REQUEST", field: "name" });

    // An address with a user name or password in it: settings are shown to every member, so the token stays out of them.
    for (const [provider, field, value, words] of [
      ["pulumi_cloud", "api_url", "https://me:pul-token-in-url@api.pulumi.com", "an http:// or https:// URL"],
      ["terraform_cloud", "hostname", "tfe-admin:tfc-token-in-url@tfe.example.com", "a host name or an http(s):// URL"],
    ] as const) {
      const secretInUrl = await refusal(admin.connections.create({ org: org.slug, name: `in-url-${provider.replace("_", "-")}`, provider, config: { [field]: value }, credentials: provider === "pulumi_cloud" ? { access_token: "t" } : { token: "t" } }));
      expect(secretInUrl).toMatchObject({ code: "BAD_REQUEST", field: `config.${field}` });
      expect(secretInUrl.message).toBe(`The ${provider} connection's settings are incomplete: ${field} must be ${words} with no user name or password in it (credentials go in the connection's secret fields). Nothing was saved.`);
    }

    expect(await connectionCount()).toBe(before.rows);
    expect(await auditCount(t.db, org.orgId)).toBe(before.audit);
  });

  it("runner mode stores no credentials and needs a self-hosted runner of the organization", async () => {
    const refused = await refusal(
      createConnection(t.db, org.actor(), { name: "aws-ambient", provider: "aws", config: { region: "us-east-1" }, mode: "runner" }),
    );
    expect(refused).toMatchObject({ code: "BAD_REQUEST", field: "runnerId" });
    expect(refused.message).toContain("needs a self-hosted runner");

    const foreign = await refusal(
      createConnection(t.db, org.actor(), { name: "aws-ambient", provider: "aws", config: { region: "us-east-1" }, mode: "runner", runnerId: "rnr_nope" }),
    );
    expect(foreign.field).toBe("runnerId");

    const runnerId = newId("runner");
    await t.db.insert(runners).values({ id: runnerId, orgId: org.orgId, scopeKey: org.orgId, name: "vpc-runner", kind: "self_hosted", tokenHash: sha256Hex(runnerId) });
    const choices = await org.as("viewer").connections.runners({ org: org.slug });
    expect(choices.runners.map((r) => r.name)).toEqual(["vpc-runner"]);
    expect(choices.organizationDefault).toBe("a Planton-hosted runner");

    const { id } = await createConnection(t.db, org.actor(), {
      name: "aws-ambient",
      provider: "aws",
      config: { region: "us-east-1" },
      mode: "runner",
      runnerId,
      credentials: { access_key_id: "ignored", secret_access_key: "ignored" },
    });
    const [row] = await t.db.select().from(connections).where(eq(connections.id, id));
    expect(row.credentialsEncrypted).toBeNull();
    const listed = (await listConnections(t.db, org.orgId)).find((c) => c.id === id)!;
    expect(listed).toMatchObject({ mode: "runner", runner: "vpc-runner", hasCredentials: false });
  });

  it("editing keeps stored credentials unless new ones are sent, and the audit says replaced without the value", async () => {
    const [aws] = (await listConnections(t.db, org.orgId)).filter((c) => c.name === "aws-prod");
    const [before] = await t.db.select().from(connections).where(eq(connections.id, aws.id));
    await updateConnection(t.db, org.actor(), { id: aws.id, name: "aws-prod", provider: "aws", description: "Production account", config: { region: "eu-west-1" } });
    const [kept] = await t.db.select().from(connections).where(eq(connections.id, aws.id));
    expect(kept.credentialsEncrypted).toBe(before.credentialsEncrypted);
    expect(kept.description).toBe("Production account");

    await org.as("admin").connections.update({
      org: org.slug,
      id: aws.id,
      name: "aws-prod",
      provider: "aws",
      description: "Production account",
      config: { region: "eu-west-1" },
      credentials: { access_key_id: "AKIANEW", secret_access_key: "rotated-secret-value" },
    });
    const [after] = await t.db.select().from(connections).where(eq(connections.id, aws.id));
    expect(JSON.parse(decryptSecret(after.credentialsEncrypted!)).secret_access_key).toBe("rotated-secret-value");
    const events = await auditOf(t.db, org.orgId, "connection.update");
    expect(events).toHaveLength(2);
    expect(events.map((e) => e.changes)).toContainEqual({ credentials: "replaced" });
    expect(JSON.stringify(events)).not.toContain("rotated-secret-value");

    const dup = await refusal(updateConnection(t.db, org.actor(), { id: aws.id, name: "local-sandbox", provider: "aws", config: { region: "eu-west-1" } }));
    expect(dup).toMatchObject({ code: "CONFLICT", field: "name" });
  });

  it("authorizes a connection for chosen environments or the whole organization, and refuses an unknown environment", async () => {
    const [aws] = (await listConnections(t.db, org.orgId)).filter((c) => c.name === "aws-prod");
    await org.as("admin").connections.authorize({ org: org.slug, id: aws.id, organization: false, environments: ["staging", "prod"] });
    let listed = (await listConnections(t.db, org.orgId)).find((c) => c.id === aws.id)!;
    expect(listed.authorizations.map((a) => a.environment).sort()).toEqual(["prod", "staging"]);
    const [event] = await auditOf(t.db, org.orgId, "connection.authorize");
    expect(event.summary).toBe("Connection aws-prod: authorized environment staging, environment prod");

    const before = { auths: await authCount(), audit: await auditCount(t.db, org.orgId) };
    const unknown = await refusal(setConnectionAuthorizations(t.db, org.actor(), { id: aws.id, organization: false, environments: ["prod", "qa"] }));
    expect(unknown).toMatchObject({ code: "NOT_FOUND", field: "environments" });
    expect(unknown.message).toBe("Environment qa was not found, so connection aws-prod was not authorized. Pick from dev, staging, prod, or create it in Settings → Environments.");
    expect(await authCount()).toBe(before.auths);
    expect(await auditCount(t.db, org.orgId)).toBe(before.audit);

    await setConnectionAuthorizations(t.db, org.actor(), { id: aws.id, organization: false, environments: ["prod"] });
    listed = (await listConnections(t.db, org.orgId)).find((c) => c.id === aws.id)!;
    expect(listed.authorizations.map((a) => a.environment)).toEqual(["prod"]);

    await setConnectionAuthorizations(t.db, org.actor(), { id: aws.id, organization: true });
    listed = (await listConnections(t.db, org.orgId)).find((c) => c.id === aws.id)!;
    expect(listed.authorizations).toEqual([{ id: expect.any(String), scope: "organization", environment: null }]);
    const last = (await auditOf(t.db, org.orgId, "connection.authorize")).at(-1)!;
    expect(last.summary).toBe("Connection aws-prod: authorized the organization; removed environment prod");
  });

  it("adds and removes authorizations by connection name (planton connection auth), one audit event each, refusing a wrong provider or one that does not exist", async () => {
    const admin = org.as("admin");
    const list = async () => (await org.as("viewer").connections.listAuthorizations({ org: org.slug, connection: "aws-prod" })).connections[0].authorizations;
    expect(await list()).toEqual([{ scope: "organization", environment: null }]);

    const added = await admin.connections.addAuthorization({ org: org.slug, connection: "aws-prod", provider: "aws", scope: "environment", environments: ["staging"] });
    expect(added).toEqual({ connection: "aws-prod", provider: "aws", added: ["environment staging"], removed: [], authorizations: [{ scope: "organization", environment: null }, { scope: "environment", environment: "staging" }] });
    expect((await auditOf(t.db, org.orgId, "connection.authorize")).at(-1)!.summary).toBe("Connection aws-prod: authorized environment staging");
    const before = { auths: await authCount(), audit: await auditCount(t.db, org.orgId) };
    expect((await admin.connections.addAuthorization({ org: org.slug, connection: "aws-prod", provider: "aws", scope: "environment", environments: ["staging"] })).added).toEqual([]);

    const wrong = await refusal(admin.connections.addAuthorization({ org: org.slug, connection: "aws-prod", provider: "gcp", scope: "organization" }));
    expect(wrong).toMatchObject({ code: "BAD_REQUEST", field: "provider" });
    expect(wrong.message).toBe("Connection aws-prod was not authorized: connection aws-prod is an aws connection, not gcp. Pass --provider aws, or name a gcp connection (planton connection auth list shows each connection's provider).");
    expect((await refusal(admin.connections.addAuthorization({ org: org.slug, connection: "aws-prod", provider: "aws", scope: "environment" }))).message).toBe(
      "Connection aws-prod was not authorized: scope environment needs the environments, e.g. --environments staging,prod (or use --scope organization).",
    );
    const unknownEnv = await refusal(admin.connections.removeAuthorization({ org: org.slug, connection: "aws-prod", scope: "environment", environments: "staging,qa" }));
    expect(unknownEnv.message).toBe("Environment qa was not found, so nothing was removed from connection aws-prod. Pick from dev, staging, prod, or create it in Settings → Environments.");
    const notThere = await refusal(admin.connections.removeAuthorization({ org: org.slug, connection: "aws-prod", scope: "environment", environments: "staging,prod" }));
    expect(notThere).toMatchObject({ code: "NOT_FOUND" });
    expect(notThere.message).toBe(
      "Nothing was removed from connection aws-prod: it is not authorized for environment prod (it is authorized for the organization, environment staging). See planton connection auth list --connection aws-prod.",
    );
    expect((await refusal(org.as("engineer").connections.addAuthorization({ org: org.slug, connection: "aws-prod", provider: "aws", scope: "organization" }))).code).toBe("FORBIDDEN");
    expect(await authCount()).toBe(before.auths);
    expect(await auditCount(t.db, org.orgId)).toBe(before.audit);

    const removed = await admin.connections.removeAuthorization({ org: org.slug, connection: "aws-prod", provider: "aws", scope: "organization" });
    expect([removed.removed, removed.authorizations]).toEqual([["the organization"], [{ scope: "environment", environment: "staging" }]]);
    expect((await auditOf(t.db, org.orgId, "connection.authorize")).at(-1)!.summary).toBe("Connection aws-prod: removed the organization");
    expect(await auditCount(t.db, org.orgId)).toBe(before.audit + 1);
  });

  it("refuses to delete a connection that components deploy through, naming them, and deletes an unused one", async () => {
    await draftComponent(t.db, org.actor("engineer"), { environment: "dev", kind: "StaticSite", name: "docs-site", spec: { site_name: "docs" }, connection: "local-sandbox" });
    const before = await auditCount(t.db, org.orgId);
    const r = await refusal(org.as("admin").connections.delete({ org: org.slug, id: org.connectionId }));
    expect(r.code).toBe("PRECONDITION_FAILED");
    expect(r.message).toBe("Connection local-sandbox was not deleted: component docs-site (dev) deploys through it. Point it at another connection or delete it first.");
    expect(await connectionCount()).toBeGreaterThan(0);
    expect(await auditCount(t.db, org.orgId)).toBe(before);
    const listed = (await listConnections(t.db, org.orgId)).find((c) => c.id === org.connectionId)!;
    expect(listed.components).toEqual([{ name: "docs-site", environment: "dev" }]);

    const [ambient] = (await listConnections(t.db, org.orgId)).filter((c) => c.name === "aws-ambient");
    await deleteConnection(t.db, org.actor(), ambient.id);
    expect((await listConnections(t.db, org.orgId)).some((c) => c.id === ambient.id)).toBe(false);
    expect((await auditOf(t.db, org.orgId, "connection.delete"))[0].summary).toBe("Deleted aws connection aws-ambient");
  });
  it("a connection saved with credentials in its address before that was refused is listed and recorded with *** in their place", async () => {
    for (const [provider, field, value, shown] of [
      ["pulumi_cloud", "api_url", "https://me:legacy-pul-token@api.pulumi.com", "https://***@api.pulumi.com"],
      ["terraform_cloud", "hostname", "tfe-admin:legacy-tfc-token@tfe.example.com", "***@tfe.example.com"],
    ] as const) {
      const id = newId("connection");
      const name = `legacy-${provider.replace("_", "-")}`;
      await t.db.insert(connections).values({ id, orgId: org.orgId, name, provider, config: { [field]: value }, mode: "stored" });
      const listed = (await org.as("viewer").connections.list({ org: org.slug })).find((c) => c.id === id)!;
      expect(listed.config[field]).toBe(shown);
      // Fixed by an admin: the change is recorded from *** to the new address.
      await org.as("admin").connections.update({ org: org.slug, id, name, provider, config: { [field]: value.replace(/^(https:\/\/)?[^@]*@/, "$1") }, credentials: provider === "pulumi_cloud" ? { access_token: "t" } : { token: "t" } });
      const recorded = JSON.stringify((await auditOf(t.db, org.orgId, "connection.update")).filter((e) => e.targetId === id));
      expect(recorded).toContain(shown);
      expect(recorded).not.toMatch(/legacy-(pul|tfc)-token/);
    }
    expect(JSON.stringify(await org.as("viewer").connections.list({ org: org.slug }))).not.toMatch(/legacy-(pul|tfc)-token/);
  });
});
