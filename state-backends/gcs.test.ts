// The `gcs` kind. Against real Google Cloud Storage when PLANTON_TEST_GCS_BUCKET and
// PLANTON_TEST_GCS_CREDENTIALS (a service account key JSON, or the path of its file) are set, else that
// suite is reported skipped. The rest runs against a FAKE GCS JSON API and OAuth2 token endpoint (a
// local stand-in, not the service) that keeps objects with generations and honours ifGenerationMatch.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fs from "node:fs";
import { createVerify, generateKeyPairSync, randomUUID } from "node:crypto";
import { conformance } from "./test/conformance";
import { startFake, type FakeRequest, type FakeServer } from "./test/remote-fakes";
import { StateBackend, StateLockedError } from "./rules";
import { GCS_SCOPE, LOCK_SUFFIX, openGcsStore, parseServiceAccountKey, serviceAccountJwt } from "./gcs";

const realBucket = process.env.PLANTON_TEST_GCS_BUCKET;
const realCredentials = process.env.PLANTON_TEST_GCS_CREDENTIALS;
const keyJson = (raw: string) => (raw.trim().startsWith("{") ? raw : fs.readFileSync(raw, "utf8"));

if (!realBucket || !realCredentials) console.warn("gcs: the conformance suite against the real service is skipped, not passed: set PLANTON_TEST_GCS_BUCKET and PLANTON_TEST_GCS_CREDENTIALS to run it");
describe.skipIf(!realBucket || !realCredentials)("gcs against real Google Cloud Storage (PLANTON_TEST_GCS_BUCKET, PLANTON_TEST_GCS_CREDENTIALS)", () => {
  conformance("gcs on Google Cloud Storage", async () =>
    openGcsStore({ bucket: realBucket!, prefix: `planton-conformance/${randomUUID()}/`, serviceAccountKey: keyJson(realCredentials!) }),
  );
});

const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const BUCKET = "planton-state";
let fake: FakeServer;
let key: string;
const objects = new Map<string, { bytes: Buffer; generation: string }>();
let generation = 1_700_000_000_000_000;
const issued = new Set<string>();

const gcsError = (status: number, message: string) => ({ status, body: { error: { code: status, message, errors: [{ message, reason: "x" }] } } });

function verifyJwt(assertion: string) {
  const [h, c, s] = assertion.split(".");
  const ok = createVerify("RSA-SHA256").update(`${h}.${c}`).verify(publicKey, Buffer.from(s, "base64url"));
  return ok ? (JSON.parse(Buffer.from(c, "base64url").toString()) as Record<string, unknown>) : null;
}

/** The FAKE: GCS JSON API media upload/download, list, delete with generation preconditions, and the token endpoint. */
function fakeGcs(req: FakeRequest) {
  if (req.path === "/token") {
    const form = new URLSearchParams(req.body.toString());
    const claims = form.get("grant_type") === "urn:ietf:params:oauth:grant-type:jwt-bearer" ? verifyJwt(form.get("assertion") ?? "") : null;
    if (!claims || claims.aud !== `${fake.url}/token` || claims.scope !== GCS_SCOPE) return { status: 400, body: { error: "invalid_grant", error_description: "Invalid JWT Signature." } };
    const token = `ya29.fake-${issued.size}`;
    issued.add(token);
    return { status: 200, body: { access_token: token, expires_in: 3599, token_type: "Bearer" } };
  }
  if (!issued.has(String(req.headers.authorization).replace(/^Bearer /, ""))) return gcsError(401, "Invalid Credentials");
  const upload = req.path.match(/^\/upload\/storage\/v1\/b\/([^/]+)\/o$/);
  const object = req.path.match(/^\/storage\/v1\/b\/([^/]+)\/o\/(.+)$/);
  const list = req.path.match(/^\/storage\/v1\/b\/([^/]+)\/o$/);
  const bucket = decodeURIComponent((upload ?? object ?? list)?.[1] ?? "");
  if (bucket !== BUCKET) return gcsError(404, "The specified bucket does not exist.");
  const precondition = req.query.get("ifGenerationMatch");
  if (upload && req.method === "POST") {
    const name = req.query.get("name") ?? "";
    const existing = objects.get(name);
    if (precondition !== null && (existing?.generation ?? "0") !== precondition) return gcsError(412, "At least one of the pre-conditions you specified did not hold.");
    const stored = { bytes: req.body, generation: String(++generation) };
    objects.set(name, stored);
    return { status: 200, body: { kind: "storage#object", name, bucket, generation: stored.generation, size: String(req.body.length) } };
  }
  if (object) {
    const name = decodeURIComponent(object[2]);
    const found = objects.get(name);
    if (!found) return gcsError(404, `No such object: ${bucket}/${name}`);
    if (req.method === "DELETE") {
      if (precondition !== null && found.generation !== precondition) return gcsError(412, "At least one of the pre-conditions you specified did not hold.");
      objects.delete(name);
      return { status: 204 };
    }
    if (req.query.get("alt") === "media") return { status: 200, headers: { "x-goog-generation": found.generation }, body: found.bytes };
    return { status: 200, body: { name, bucket, generation: found.generation, size: String(found.bytes.length) } };
  }
  if (list && req.method === "GET") {
    const prefix = req.query.get("prefix") ?? "";
    const names = [...objects.keys()].filter((n) => n.startsWith(prefix)).sort();
    // One object a page, so paging is exercised.
    const start = Number(req.query.get("pageToken") ?? 0);
    const page = names.slice(start, start + 1);
    return { status: 200, body: { kind: "storage#objects", items: page.map((name) => ({ name, size: String(objects.get(name)!.bytes.length), generation: objects.get(name)!.generation })), ...(start + 1 < names.length ? { nextPageToken: String(start + 1) } : {}) } };
  }
  return gcsError(400, `fake GCS does not answer ${req.method} ${req.path}`);
}

beforeAll(async () => {
  fake = await startFake(fakeGcs);
  key = JSON.stringify({
    type: "service_account",
    project_id: "planton-test",
    private_key_id: "kid-1",
    private_key: privateKey.export({ type: "pkcs8", format: "pem" }),
    client_email: "state@planton-test.iam.gserviceaccount.com",
    token_uri: `${fake.url}/token`,
  });
});
afterAll(async () => {
  await fake?.stop();
});

const open = (prefix = "planton/") => openGcsStore({ bucket: BUCKET, prefix, serviceAccountKey: key, endpoint: fake.url });
const state = (serial: number, lineage: string) => new TextEncoder().encode(JSON.stringify({ version: 4, serial, lineage, resources: [] }));

describe("gcs against a fake GCS JSON API (a stand-in, not the service)", () => {
  conformance("gcs on a fake GCS JSON API", async () => open());

  it("signs in with an RS256 JWT of the service account (iss, scope, aud, iat, exp; kid in the header)", () => {
    const jwt = serviceAccountJwt(parseServiceAccountKey(key), 1_800_000_000);
    const [header] = jwt.split(".");
    expect(JSON.parse(Buffer.from(header, "base64url").toString())).toEqual({ alg: "RS256", typ: "JWT", kid: "kid-1" });
    expect(verifyJwt(jwt)).toEqual({
      iss: "state@planton-test.iam.gserviceaccount.com",
      scope: "https://www.googleapis.com/auth/devstorage.read_write",
      aud: `${fake.url}/token`,
      iat: 1_800_000_000,
      exp: 1_800_003_600,
    });
  });

  it("keeps the state at <prefix><key>, the lock at <prefix><key>.tflock created with ifGenerationMatch=0, its generation the lock ID", async () => {
    const store = open();
    const b = new StateBackend(store);
    const k = `env/${randomUUID()}/terraform.tfstate`;
    const before = fake.requests.length;
    const lock = await b.lock(k, { Operation: "OperationTypeApply", Who: "alice@ci", Info: "job 42" });
    const lockObject = objects.get(`planton/${k}${LOCK_SUFFIX}`)!;
    expect(lock.ID).toBe(lockObject.generation);
    expect(JSON.parse(lockObject.bytes.toString())).toMatchObject({ Operation: "OperationTypeApply", Who: "alice@ci", Info: "job 42", Path: `gs://${BUCKET}/planton/${k}${LOCK_SUFFIX}` });
    const create = fake.requests.slice(before).find((r) => r.path.startsWith("/upload/"))!;
    expect([create.method, create.query.get("uploadType"), create.query.get("name"), create.query.get("ifGenerationMatch")]).toEqual(["POST", "media", `planton/${k}${LOCK_SUFFIX}`, "0"]);
    expect(create.headers.authorization).toMatch(/^Bearer ya29\.fake-/);
    await b.write(k, state(3, "L"), lock.ID);
    expect(JSON.parse(objects.get(`planton/${k}`)!.bytes.toString())).toMatchObject({ serial: 3, lineage: "L" });
    expect(await b.list("env/")).toContainEqual({ key: k, size: state(3, "L").byteLength });
    // Unlocking deletes that generation of the lock object only.
    const unlockAt = fake.requests.length;
    await b.unlock(k, lock.ID);
    const del = fake.requests.slice(unlockAt).find((r) => r.method === "DELETE")!;
    expect(del.query.get("ifGenerationMatch")).toBe(lockObject.generation);
    expect(objects.has(`planton/${k}${LOCK_SUFFIX}`)).toBe(false);
  });

  it("a lock request's own ID is kept, and a lock OpenTofu wrote is released by its generation", async () => {
    const b = new StateBackend(open());
    const k = `${randomUUID()}.tfstate`;
    const mine = await b.lock(k, { ID: "runner-chosen-id", Operation: "OperationTypeApply" });
    expect(mine.ID).toBe("runner-chosen-id");
    expect((await b.store.lockHolder(k))?.ID).toBe("runner-chosen-id");
    await b.unlock(k, "runner-chosen-id");
    // OpenTofu writes its lock JSON and then answers the generation as the ID.
    objects.set(`planton/${k}${LOCK_SUFFIX}`, { bytes: Buffer.from(JSON.stringify({ Operation: "OperationTypePlan", Who: "tofu@laptop" })), generation: "42" });
    const holder = await b.store.lockHolder(k);
    expect(holder).toMatchObject({ ID: "42", Who: "tofu@laptop" });
    await expect(b.unlock(k, "41")).rejects.toBeInstanceOf(StateLockedError);
    await b.unlock(k, "42");
  });

  it("a refusal is one sentence naming the service, the object, the service's reason and the fix", async () => {
    const store = openGcsStore({ bucket: "no-such-bucket", serviceAccountKey: key, endpoint: fake.url });
    await expect(store.read("a.tfstate")).resolves.toBeNull(); // a missing object reads as none, even so
    const err = await store.write("a.tfstate", { bytes: state(1, "L"), serial: 1, lineage: "L", checksum: "" }).catch((e) => e);
    expect(err.message).toBe(
      "Google Cloud Storage refused to write gs://no-such-bucket/a.tfstate (HTTP 404: The specified bucket does not exist). Check that bucket no-such-bucket exists (gcloud storage buckets create gs://no-such-bucket).",
    );
  });

  it("a key that is not a service account key is refused in one sentence without its content", () => {
    expect(() => openGcsStore({ bucket: BUCKET, serviceAccountKey: "secret-not-json", endpoint: fake.url })).toThrow(/service_account_key is not JSON\. Paste the whole key file/);
    const wrong = JSON.stringify({ type: "authorized_user", client_secret: "s3cr3t" });
    const err = (() => {
      try {
        openGcsStore({ bucket: BUCKET, serviceAccountKey: wrong, endpoint: fake.url });
      } catch (e) {
        return e as Error;
      }
    })();
    expect(err?.message).toMatch(/is not a service account key/);
    expect(err?.message).not.toContain("s3cr3t");
  });

  it("a key the token endpoint rejects says so and names the service account", async () => {
    const other = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs8", format: "pem" });
    const store = openGcsStore({ bucket: BUCKET, serviceAccountKey: JSON.stringify({ ...JSON.parse(key), private_key: other }), endpoint: fake.url });
    await expect(store.read("x.tfstate")).rejects.toThrow(
      "Google's OAuth2 server refused to give service account state@planton-test.iam.gserviceaccount.com an access token (HTTP 400: Invalid JWT Signature). Check that the key in the gcp connection is current and its service account enabled (Settings → Connections).",
    );
  });
});
