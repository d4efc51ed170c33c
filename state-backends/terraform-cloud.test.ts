// The `terraform_cloud` kind. Against real HCP Terraform (or Terraform Enterprise) when
// PLANTON_TEST_TFC_TOKEN and PLANTON_TEST_TFC_ORGANIZATION are set (PLANTON_TEST_TFC_HOSTNAME defaults to
// app.terraform.io), else that suite is reported skipped. The rest runs against a FAKE HCP Terraform API
// (a local stand-in, not the service) with the documented workspace, lock and state-version endpoints.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash, randomUUID } from "node:crypto";
import { conformance } from "./test/conformance";
import { startFake, type FakeRequest, type FakeServer } from "./test/remote-fakes";
import { StateBackend, StateLockedError } from "./rules";
import { openTerraformCloudStore, workspaceNameOf } from "./terraform-cloud";

const real = { token: process.env.PLANTON_TEST_TFC_TOKEN, organization: process.env.PLANTON_TEST_TFC_ORGANIZATION, hostname: process.env.PLANTON_TEST_TFC_HOSTNAME ?? "app.terraform.io" };

if (!real.token || !real.organization) console.warn("terraform_cloud: the conformance suite against the real service is skipped, not passed: set PLANTON_TEST_TFC_TOKEN and PLANTON_TEST_TFC_ORGANIZATION (PLANTON_TEST_TFC_HOSTNAME optional) to run it");
describe.skipIf(!real.token || !real.organization)("terraform_cloud against real HCP Terraform (PLANTON_TEST_TFC_TOKEN, PLANTON_TEST_TFC_ORGANIZATION)", () => {
  const prefix = `planton-conformance-${randomUUID().slice(0, 8)}-`;
  conformance("terraform_cloud on HCP Terraform", async () => openTerraformCloudStore({ hostname: real.hostname, token: real.token!, organization: real.organization!, workspacePrefix: prefix }));
});

interface FakeWorkspace {
  id: string;
  name: string;
  description: string;
  executionMode: string;
  lockedBy: string | null;
  lockReason: string | null;
  versions: { serial: number; md5: string; lineage: string; state: Buffer }[];
}

const ORG = "acme";
const TOKENS: Record<string, string> = { "tfc-token-alice": "user-alice", "tfc-token-bob": "user-bob" };
let fake: FakeServer;
const workspaces = new Map<string, FakeWorkspace>();
const jsonApiError = (status: number, title: string, detail?: string) => ({ status, body: { errors: [{ status: String(status), title, ...(detail ? { detail } : {}) }] } });
const wsDoc = (ws: FakeWorkspace) => ({ id: ws.id, type: "workspaces", attributes: { name: ws.name, description: ws.description, locked: !!ws.lockedBy, "execution-mode": ws.executionMode } });

/** The FAKE: HCP Terraform's workspaces, workspace lock actions, state versions and their download. */
function fakeTfc(req: FakeRequest) {
  const user = TOKENS[String(req.headers.authorization).replace(/^Bearer /, "")];
  if (!user) return jsonApiError(401, "unauthorized");
  const body = req.body.length ? JSON.parse(req.body.toString()) : null;
  const byId = (id: string) => [...workspaces.values()].find((w) => w.id === id);
  let m: RegExpMatchArray | null;
  if ((m = req.path.match(/^\/api\/v2\/organizations\/([^/]+)\/workspaces(?:\/([^/]+))?$/))) {
    if (decodeURIComponent(m[1]) !== ORG) return jsonApiError(404, "not found");
    const name = m[2] && decodeURIComponent(m[2]);
    if (req.method === "GET" && name) return workspaces.has(name) ? { status: 200, body: { data: wsDoc(workspaces.get(name)!) } } : jsonApiError(404, "not found");
    if (req.method === "GET") {
      const search = req.query.get("search[name]") ?? "";
      const size = Number(req.query.get("page[size]") ?? 20);
      const page = Number(req.query.get("page[number]") ?? 1);
      // One workspace a page, so paging is exercised.
      const all = [...workspaces.values()].filter((w) => w.name.includes(search));
      const per = Math.min(size, 1);
      return { status: 200, body: { data: all.slice((page - 1) * per, page * per).map(wsDoc), meta: { pagination: { "current-page": page, "next-page": page * per < all.length ? page + 1 : null } } } };
    }
    if (req.method === "POST") {
      const attrs = body.data.attributes;
      if (!/^[A-Za-z0-9_-]{1,90}$/.test(attrs.name)) return jsonApiError(422, "invalid attribute", "Name can only include letters, numbers, -, and _.");
      if (workspaces.has(attrs.name)) return jsonApiError(422, "invalid attribute", "Name has already been taken");
      const ws: FakeWorkspace = { id: `ws-${randomUUID().slice(0, 16)}`, name: attrs.name, description: attrs.description ?? "", executionMode: attrs["execution-mode"] ?? "remote", lockedBy: null, lockReason: null, versions: [] };
      workspaces.set(ws.name, ws);
      return { status: 201, body: { data: wsDoc(ws) } };
    }
    if (req.method === "DELETE" && name) {
      if (!workspaces.delete(name)) return jsonApiError(404, "not found");
      return { status: 204 };
    }
  }
  if ((m = req.path.match(/^\/api\/v2\/workspaces\/([^/]+)(\/.*)?$/))) {
    const ws = byId(m[1]);
    if (!ws) return jsonApiError(404, "not found");
    const rest = m[2] ?? "";
    if (req.method === "PATCH" && !rest) {
      ws.description = body.data.attributes.description ?? ws.description;
      return { status: 200, body: { data: wsDoc(ws) } };
    }
    if (rest === "/actions/lock") {
      if (ws.lockedBy) return jsonApiError(409, "conflict", "Unable to lock workspace. The workspace is already locked.");
      ws.lockedBy = user;
      ws.lockReason = body?.reason ?? null;
      return { status: 200, body: { data: wsDoc(ws) } };
    }
    if (rest === "/actions/unlock") {
      if (!ws.lockedBy) return jsonApiError(409, "conflict", "Unable to unlock workspace. The workspace is not locked.");
      if (ws.lockedBy !== user) return jsonApiError(409, "conflict", "Unable to unlock workspace. The workspace is locked by another user.");
      ws.lockedBy = null;
      return { status: 200, body: { data: wsDoc(ws) } };
    }
    if (rest === "/actions/force-unlock") {
      if (!ws.lockedBy) return jsonApiError(409, "conflict", "Unable to unlock workspace. The workspace is not locked.");
      ws.lockedBy = null;
      return { status: 200, body: { data: wsDoc(ws) } };
    }
    const svDoc = (i: number) => {
      const v = ws.versions[i];
      // Workspaces named *-archivist-* answer a download URL on another host, as HCP's archivist is.
      const host = ws.name.includes("-archivist-") ? archivist.url : fake.url;
      return { id: `sv-${ws.id}-${i}`, type: "state-versions", attributes: { serial: v.serial, md5: v.md5, lineage: v.lineage, size: v.state.length, status: "finalized", "hosted-state-download-url": `${host}/fake-archivist/${ws.id}/${i}` } };
    };
    if (rest === "/current-state-version" && req.method === "GET") return ws.versions.length ? { status: 200, body: { data: svDoc(ws.versions.length - 1) } } : jsonApiError(404, "not found");
    if (rest === "/state-versions" && req.method === "POST") {
      if (ws.lockedBy !== user) return jsonApiError(409, "conflict", "The workspace must be locked by the user creating a state version.");
      const a = body.data.attributes;
      const state = Buffer.from(a.state, "base64");
      if (createHash("md5").update(state).digest("hex") !== a.md5) return jsonApiError(422, "invalid attribute", "MD5 does not match the state.");
      if (ws.versions.some((v) => v.serial === a.serial)) return jsonApiError(422, "invalid attribute", "Serial has already been taken");
      ws.versions.push({ serial: a.serial, md5: a.md5, lineage: a.lineage, state });
      return { status: 201, body: { data: svDoc(ws.versions.length - 1) } };
    }
  }
  if ((m = req.path.match(/^\/fake-archivist\/([^/]+)\/(\d+)$/))) {
    const v = byId(m[1])?.versions[Number(m[2])];
    return v ? { status: 200, body: v.state } : jsonApiError(404, "not found");
  }
  return jsonApiError(404, "not found", `fake HCP Terraform does not answer ${req.method} ${req.path}`);
}

let archivist: FakeServer;
beforeAll(async () => {
  fake = await startFake(fakeTfc);
  // The FAKE archivist: pre-signed download URLs, answered without any token.
  archivist = await startFake((req) => {
    const m = req.path.match(/^\/fake-archivist\/([^/]+)\/(\d+)$/);
    const v = m && [...workspaces.values()].find((w) => w.id === m[1])?.versions[Number(m[2])];
    return v ? { status: 200, body: v.state } : jsonApiError(404, "not found");
  });
});
afterAll(async () => {
  await fake?.stop();
  await archivist?.stop();
});

const open = (token = "tfc-token-alice", organization = ORG) => openTerraformCloudStore({ hostname: fake.url, token, organization, workspacePrefix: "planton-" });
const state = (serial: number, lineage: string) => new TextEncoder().encode(JSON.stringify({ version: 4, serial, lineage, resources: [] }));

describe("terraform_cloud against a fake HCP Terraform API (a stand-in, not the service)", () => {
  conformance("terraform_cloud on a fake HCP Terraform API", async () => open());

  it("names a key's workspace <prefix><key with / → ->, without the terraform.tfstate file name; long keys keep a hash", () => {
    expect(workspaceNameOf("planton-", "prod/web/terraform.tfstate")).toBe("planton-prod-web");
    expect(workspaceNameOf("planton-", "prod/web.v2.tfstate")).toBe("planton-prod-web_v2");
    const long = workspaceNameOf("planton-", `${"x".repeat(120)}/terraform.tfstate`);
    expect(long).toHaveLength(90);
    expect(long).toMatch(/^planton-x+-[0-9a-f]{8}$/);
  });

  it("creates the workspace (local execution) on first lock, writes state versions with serial, md5, lineage and base64 state, and reads the current one", async () => {
    const b = new StateBackend(open());
    const key = `env-${randomUUID().slice(0, 8)}/web/terraform.tfstate`;
    const lock = await b.lock(key, { Operation: "OperationTypeApply", Who: "alice@ci", Info: "job 7" });
    const ws = workspaces.get(workspaceNameOf("planton-", key))!;
    expect(ws.executionMode).toBe("local");
    expect(ws.lockReason).toBe(`Planton: OperationTypeApply by alice@ci (lock ${lock.ID})`);
    const before = fake.requests.length;
    await b.write(key, state(4, "L"), lock.ID);
    const post = fake.requests.slice(before).find((r) => r.method === "POST" && r.path.endsWith("/state-versions"))!;
    expect(post.headers["content-type"]).toBe("application/vnd.api+json");
    const attrs = JSON.parse(post.body.toString()).data.attributes;
    expect(attrs).toEqual({ serial: 4, md5: createHash("md5").update(state(4, "L")).digest("hex"), lineage: "L", state: Buffer.from(state(4, "L")).toString("base64") });
    // The same state again is stored already: no second state version of serial 4.
    await b.write(key, state(4, "L"), lock.ID);
    expect(ws.versions).toHaveLength(1);
    expect((await b.read(key))?.serial).toBe(4);
    await b.unlock(key, lock.ID);
    expect(ws.lockedBy).toBeNull();
    expect(ws.description).not.toContain("planton-state-lock");
    expect(await b.list(`env-`)).toContainEqual({ key, size: state(4, "L").byteLength });
  });

  it("a download URL on another host (HCP's archivist) is fetched without the token", async () => {
    const b = new StateBackend(open());
    const key = `x-archivist-${randomUUID().slice(0, 8)}.tfstate`;
    const lock = await b.lock(key, { Operation: "OperationTypeApply" });
    await b.write(key, state(2, "A"), lock.ID);
    expect((await b.read(key))?.serial).toBe(2);
    const download = archivist.requests.at(-1)!;
    expect(download.path).toMatch(/^\/fake-archivist\//);
    expect(download.headers.authorization).toBeUndefined();
    await b.unlock(key, lock.ID);
  });

  it("a second locker gets the holder's lock info kept on the workspace, even under another token", async () => {
    const key = `${randomUUID()}.tfstate`;
    const held = await open("tfc-token-alice").lock(key, { Operation: "OperationTypeApply", Who: "alice@ci" });
    const refused = await open("tfc-token-bob").lock(key, { Operation: "OperationTypePlan" }).catch((e) => e);
    expect(refused).toBeInstanceOf(StateLockedError);
    expect(refused.holder).toMatchObject({ ID: held.ID, Who: "alice@ci", Operation: "OperationTypeApply" });
    // Bob's token cannot unlock Alice's workspace lock; the refusal says what to do.
    await expect(open("tfc-token-bob").unlock(key, held.ID)).rejects.toThrow(/locked by another user or team than this token's\. Force-unlock it from the component's state page/);
    expect((await open("tfc-token-bob").forceUnlock(key))?.ID).toBe(held.ID);
    expect(await open("tfc-token-alice").lockHolder(key)).toBeNull();
  });

  it("a workspace of that name keeping another key, or made outside Planton, is refused, not overwritten", async () => {
    const key = `clash/${randomUUID().slice(0, 8)}`;
    const name = workspaceNameOf("planton-", key);
    workspaces.set(name, { id: `ws-${randomUUID().slice(0, 16)}`, name, description: "made by hand", executionMode: "remote", lockedBy: null, lockReason: null, versions: [] });
    await expect(open().read(key)).rejects.toThrow(`Nothing was done to ${key}: its HCP Terraform workspace ${name} exists and was not created by Planton. Set another workspace_prefix on the backend (Settings → State Backends), or rename that workspace.`);
  });

  it("refusals are one sentence with the service's reason and the fix", async () => {
    await expect(open("not-a-token").read("a.tfstate")).rejects.toThrow(
      "HCP Terraform refused to read workspace planton-a (HTTP 401: unauthorized). Check the credentials: the terraform_cloud connection's token must be a user or team API token that can manage workspaces and state versions in the organization (Settings → Connections).",
    );
    await expect(open("tfc-token-alice", "no-such-org").read("a.tfstate")).resolves.toBeNull();
    await expect(open("tfc-token-alice", "no-such-org").lock("a.tfstate", { Operation: "OperationTypeApply" })).rejects.toThrow(/^HCP Terraform refused to create workspace planton-a \(HTTP 404: not found\)\. Check that organization no-such-org exists/);
  });
});
