// openStore for the remote kinds: a backend row and its connection (made by the connections service,
// credentials encrypted) open a store that calls the configured host with the connection's credentials.
// The host is a FAKE (a stand-in recording requests, not GCS, HCP Terraform or Pulumi Cloud); the
// kinds' own behaviour is proven in state-backends/*.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPairSync } from "node:crypto";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { seedTestOrg, type TestOrg } from "../../../test/fixtures";
import { startFake, type FakeServer } from "../../../state-backends/test/remote-fakes";
import { createConnection } from "../settings/connections";
import { openStore } from "./open-store";

let t: TestDatabase;
let org: TestOrg;
let fake: FakeServer;
beforeAll(async () => {
  t = await createTestDatabase();
  org = await seedTestOrg(t.db);
  // Answers a token to the OAuth2 call and "not found" to everything else: every read is of nothing.
  fake = await startFake((req) => (req.path === "/token" ? { status: 200, body: { access_token: "ya29.fake", expires_in: 3600 } } : { status: 404, body: { error: { code: 404, message: "Not Found" } } }));
});
afterAll(async () => {
  await fake?.stop();
  await t?.close();
});

const connection = (provider: string, name: string, config: Record<string, string>, credentials: Record<string, string>) =>
  createConnection(t.db, org.actor("admin"), { name, provider, mode: "stored", config, credentials } as Parameters<typeof createConnection>[2]);

describe("openStore for the remote kinds (against a fake host, a stand-in recording requests)", () => {
  it("gcs: the bucket, prefix and endpoint from the backend; the service account key from the gcp connection", async () => {
    const privateKey = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs8", format: "pem" }) as string;
    const key = JSON.stringify({ type: "service_account", client_email: "sa@p.iam.gserviceaccount.com", private_key: privateKey, token_uri: `${fake.url}/token` });
    const conn = await connection("gcp", "gcp-state", { project: "p" }, { service_account_key: key });
    const store = await openStore(t.db, { name: "gcs-state", kind: "gcs", orgId: org.orgId, connectionId: conn.id, config: { bucket: "planton-state", key_prefix: "planton/", endpoint: fake.url } });
    const before = fake.requests.length;
    expect(store.kind).toBe("gcs");
    expect(await store.read("dev/web/terraform.tfstate")).toBeNull();
    const [token, get] = fake.requests.slice(before);
    expect(new URLSearchParams(token.body.toString()).get("grant_type")).toBe("urn:ietf:params:oauth:grant-type:jwt-bearer");
    expect([get.method, get.path, get.query.get("alt"), get.headers.authorization]).toEqual(["GET", "/storage/v1/b/planton-state/o/planton%2Fdev%2Fweb%2Fterraform.tfstate", "media", "Bearer ya29.fake"]);
  });

  it("gcs: a connection whose key is not a service account key is refused in one sentence, without the key", async () => {
    const conn = await connection("gcp", "gcp-broken", { project: "p" }, { service_account_key: "not-a-key-secret" });
    const err = await openStore(t.db, { name: "gcs-broken", kind: "gcs", orgId: org.orgId, connectionId: conn.id, config: { bucket: "b" } }).catch((e) => e);
    expect(err.message).toBe(
      "State backend gcs-broken could not be opened. The GCS backend could not sign in: the gcp connection's service_account_key is not JSON. Paste the whole key file of the service account in Settings → Connections.",
    );
    expect(err.message).not.toContain("not-a-key-secret");
  });

  it("terraform_cloud: the organization and workspace prefix from the backend; hostname and token from the connection", async () => {
    const conn = await connection("terraform_cloud", "tfc", { hostname: fake.url }, { token: "tfc-secret-token" });
    const store = await openStore(t.db, { name: "tfc-state", kind: "terraform_cloud", orgId: org.orgId, connectionId: conn.id, config: { organization: "acme", workspace_prefix: "pl-" } });
    const before = fake.requests.length;
    expect(await store.read("dev/web/terraform.tfstate")).toBeNull();
    const [get] = fake.requests.slice(before);
    expect([get.method, get.path, get.headers.authorization]).toEqual(["GET", "/api/v2/organizations/acme/workspaces/pl-dev-web", "Bearer tfc-secret-token"]);
  });

  it("pulumi_cloud: the organization and project from the backend; api_url and access token from the connection", async () => {
    const conn = await connection("pulumi_cloud", "pulumi", { api_url: fake.url }, { access_token: "pul-secret" });
    const store = await openStore(t.db, { name: "pulumi-state", kind: "pulumi_cloud", orgId: org.orgId, connectionId: conn.id, config: { organization: "acme", project: "infra" } });
    const before = fake.requests.length;
    expect(await store.read("dev/web/terraform.tfstate")).toBeNull();
    const [get] = fake.requests.slice(before);
    expect([get.method, get.path, get.headers.authorization, get.headers.accept]).toEqual(["GET", "/api/stacks/acme/infra/dev-web", "token pul-secret", "application/vnd.pulumi+8"]);
  });
});
