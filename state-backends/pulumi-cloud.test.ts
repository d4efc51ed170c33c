// The `pulumi_cloud` kind. Against real Pulumi Cloud when PLANTON_TEST_PULUMI_ACCESS_TOKEN and
// PLANTON_TEST_PULUMI_ORGANIZATION are set (PLANTON_TEST_PULUMI_API_URL defaults to https://api.pulumi.com),
// else that suite is reported skipped. The rest runs against a FAKE Pulumi Cloud API (a local stand-in,
// not the service) with the stack, export, tag and update-lease endpoints the kind calls.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { conformance, pulumiCheckpoint } from "./test/conformance";
import { startFake, type FakeRequest, type FakeServer } from "./test/remote-fakes";
import { StateBackend, StateLockedError, storedStateOf } from "./rules";
import { KEY_TAG, LOCK_TAG, openPulumiCloudStore, stackNameOf } from "./pulumi-cloud";

const real = { token: process.env.PLANTON_TEST_PULUMI_ACCESS_TOKEN, organization: process.env.PLANTON_TEST_PULUMI_ORGANIZATION, apiUrl: process.env.PLANTON_TEST_PULUMI_API_URL };

if (!real.token || !real.organization) console.warn("pulumi_cloud: the conformance suite against the real service is skipped, not passed: set PLANTON_TEST_PULUMI_ACCESS_TOKEN and PLANTON_TEST_PULUMI_ORGANIZATION (PLANTON_TEST_PULUMI_API_URL optional) to run it");
describe.skipIf(!real.token || !real.organization)("pulumi_cloud against real Pulumi Cloud (PLANTON_TEST_PULUMI_ACCESS_TOKEN, PLANTON_TEST_PULUMI_ORGANIZATION)", () => {
  conformance("pulumi_cloud on Pulumi Cloud", async () => openPulumiCloudStore({ apiUrl: real.apiUrl, accessToken: real.token!, organization: real.organization!, project: "planton-conformance" }), {
    state: pulumiCheckpoint,
  });
});

interface FakeStack {
  tags: Record<string, string>;
  deployment: unknown;
  version: number;
  current: { update: string; token: string | null } | null;
  updates: { id: string; status: string }[];
}

const ORG = "acme";
const PROJECT = "planton";
const ACCESS = "pul-fake-token";
let fake: FakeServer;
const stacks = new Map<string, FakeStack>();
const pulumiError = (code: number, message: string) => ({ status: code, body: { code, message } });

/** The FAKE: Pulumi Cloud's stacks, tags, export and update leases (create, start, renew, checkpoint, complete, cancel). */
function fakePulumi(req: FakeRequest) {
  const auth = String(req.headers.authorization ?? "");
  const body = req.body.length ? JSON.parse(req.body.toString()) : null;
  if (req.headers.accept !== "application/vnd.pulumi+8") return pulumiError(400, "missing Accept: application/vnd.pulumi+8");
  if (req.path === "/api/user/stacks" && req.method === "GET") {
    if (auth !== `token ${ACCESS}`) return pulumiError(401, "Unauthorized: No credentials provided or are invalid.");
    const names = [...stacks.keys()].filter((n) => !req.query.get("tagName") || req.query.get("tagName")! in stacks.get(n)!.tags).sort();
    const at = Number(req.query.get("continuationToken") ?? 0);
    return { status: 200, body: { stacks: names.slice(at, at + 1).map((stackName) => ({ orgName: ORG, projectName: PROJECT, stackName })), ...(at + 1 < names.length ? { continuationToken: String(at + 1) } : {}) } };
  }
  const m = req.path.match(/^\/api\/stacks\/([^/]+)\/([^/]+)(?:\/([^/]+))?(\/.*)?$/);
  if (!m) return pulumiError(404, "Not Found");
  const [org, project, name, rest = ""] = [decodeURIComponent(m[1]), decodeURIComponent(m[2]), m[3] && decodeURIComponent(m[3]), m[4]];
  const lease = rest.match(/^\/update\/([^/]+)\/(renew_lease|checkpoint|complete)$/);
  const stack = name ? stacks.get(name) : undefined;
  if (lease) {
    if (!stack?.current || stack.current.update !== lease[1] || auth !== `update-token ${stack.current.token}`) return pulumiError(401, "Unauthorized: the update token is invalid or expired.");
    if (lease[2] === "renew_lease") {
      stack.current.token = `lease-${randomUUID()}`;
      return { status: 200, body: { token: stack.current.token } };
    }
    if (lease[2] === "checkpoint") {
      stack.deployment = body.deployment;
      return { status: 204 };
    }
    stack.updates.find((u) => u.id === lease[1])!.status = body.status;
    stack.current = null;
    return { status: 204 };
  }
  if (auth !== `token ${ACCESS}`) return pulumiError(401, "Unauthorized: No credentials provided or are invalid.");
  if (org !== ORG) return pulumiError(404, `Not Found: Organization '${org}' not found`);
  if (project !== PROJECT) return pulumiError(404, "Not Found: Project not found");
  if (!name && req.method === "POST") {
    if (stacks.has(body.stackName)) return pulumiError(409, `Conflict: Stack '${body.stackName}' already exists`);
    stacks.set(body.stackName, { tags: body.tags ?? {}, deployment: null, version: 0, current: null, updates: [] });
    return { status: 200, body: {} };
  }
  if (!stack) return pulumiError(404, `Not Found: Stack '${ORG}/${PROJECT}/${name}' not found`);
  if (!rest && req.method === "GET") {
    const running = stack.current?.token ? stack.current : null;
    return {
      status: 200,
      body: { orgName: ORG, projectName: PROJECT, stackName: name, activeUpdate: stack.updates.at(-1)?.id ?? "", ...(running ? { currentOperation: { kind: "update", author: "fake-user", started: 1 } } : {}), tags: stack.tags, version: stack.version },
    };
  }
  if (!rest && req.method === "DELETE") {
    stacks.delete(name!);
    return { status: 204 };
  }
  if (rest === "/tags" && req.method === "PATCH") {
    stack.tags = body;
    return { status: 204 };
  }
  if (rest === "/export" && req.method === "GET") return { status: 200, body: { version: 3, deployment: stack.deployment ?? { manifest: { time: "0001-01-01T00:00:00Z", magic: "", version: "" } } } };
  if (rest === "/update" && req.method === "POST") {
    if (stack.current) return pulumiError(409, "Conflict: Another update is currently in progress.");
    if (!body?.name || !body?.runtime || !body?.metadata) return pulumiError(400, "Bad Request: an update needs the program's name, runtime and metadata");
    const id = randomUUID();
    stack.current = { update: id, token: null };
    stack.updates.push({ id, status: "not started" });
    return { status: 200, body: { updateID: id } };
  }
  const update = rest.match(/^\/update\/([^/]+)(\/cancel)?$/);
  if (update && req.method === "POST") {
    if (update[2]) {
      if (!stack.current || stack.current.update !== update[1]) return pulumiError(409, "Conflict: The update is not in progress.");
      stack.updates.find((u) => u.id === update[1])!.status = "cancelled";
      stack.current = null;
      return { status: 204 };
    }
    if (!stack.current || stack.current.update !== update[1] || stack.current.token) return pulumiError(409, "Conflict: Another update is currently in progress.");
    stack.current.token = `lease-${randomUUID()}`;
    stack.tags = body?.tags ?? stack.tags;
    stack.version++;
    stack.updates.find((u) => u.id === update[1])!.status = "in-progress";
    return { status: 200, body: { version: stack.version, token: stack.current.token, tokenExpiration: 300 } };
  }
  return pulumiError(404, `Not Found: fake Pulumi Cloud does not answer ${req.method} ${req.path}`);
}

beforeAll(async () => {
  fake = await startFake(fakePulumi);
});
afterAll(async () => {
  await fake?.stop();
});

const open = (accessToken = ACCESS, organization = ORG) => openPulumiCloudStore({ apiUrl: fake.url, accessToken, organization, project: PROJECT });

describe("a Pulumi checkpoint's identity (rules.ts storedStateOf)", () => {
  it("serial is the deployment's time in milliseconds (nanoseconds cut), lineage the checkpoint's stack", () => {
    const bytes = new TextEncoder().encode(JSON.stringify({ version: 3, checkpoint: { stack: "organization/web/dev", latest: { manifest: { time: "2026-12-01T14:00:00.123456789+01:00" }, resources: [] } } }));
    expect(storedStateOf(bytes)).toMatchObject({ serial: Date.parse("2026-12-01T13:00:00.123Z"), lineage: "organization/web/dev" });
    const fresh = new TextEncoder().encode(JSON.stringify({ version: 3, checkpoint: { latest: null } }));
    expect(storedStateOf(fresh)).toMatchObject({ serial: 0, lineage: "pulumi" });
  });

  it("an OpenTofu state keeps its own serial and lineage, and a JSON without either is still refused", () => {
    expect(storedStateOf(new TextEncoder().encode(JSON.stringify({ version: 4, serial: 7, lineage: "L" })))).toMatchObject({ serial: 7, lineage: "L" });
    expect(() => storedStateOf(new TextEncoder().encode(JSON.stringify({ version: 3, checkpoint: "no" })))).toThrow(/no whole-number serial and non-empty lineage/);
  });
});

describe("pulumi_cloud against a fake Pulumi Cloud API (a stand-in, not the service)", () => {
  conformance("pulumi_cloud on a fake Pulumi Cloud API", async () => open(), { state: pulumiCheckpoint });

  it("names a key's stack with / → -, keeps the key in a stack tag, locks by an update lease with the lock info in a tag", async () => {
    expect(stackNameOf("prod/web/terraform.tfstate")).toBe("prod-web");
    const b = new StateBackend(open());
    const key = `env-${randomUUID().slice(0, 8)}/web/terraform.tfstate`;
    const lock = await b.lock(key, { Operation: "OperationTypeUpdate", Who: "alice@ci", Info: "job 9" });
    const stack = stacks.get(stackNameOf(key))!;
    expect(stack.tags[KEY_TAG]).toBe(key);
    expect(JSON.parse(stack.tags[LOCK_TAG])).toMatchObject({ i: lock.ID, w: "alice@ci", n: "job 9", u: stack.current!.update });
    expect(stack.tags[LOCK_TAG].length).toBeLessThanOrEqual(256);
    expect(await b.store.lockHolder(key)).toEqual(lock);
    const before = fake.requests.length;
    await b.write(key, pulumiCheckpoint(5_000, "organization/web/dev"), lock.ID);
    const patch = fake.requests.slice(before).find((r) => r.method === "PATCH" && r.path.endsWith("/checkpoint"))!;
    expect(patch.headers.authorization).toMatch(/^update-token lease-/);
    expect(JSON.parse(patch.body.toString())).toMatchObject({ version: 3, deployment: { manifest: { time: new Date(5_000).toISOString() } } });
    expect(await b.read(key)).toMatchObject({ serial: 5_000, lineage: "organization/web/dev" });
    await b.unlock(key, lock.ID);
    expect(stack.current).toBeNull();
    expect(stack.updates.at(-1)?.status).toBe("succeeded");
    expect(stack.tags[LOCK_TAG]).toBeUndefined();
  });

  it("a second locker gets the holder's lock info; another process's write is refused; force-unlock cancels the update", async () => {
    const key = `${randomUUID()}.json`;
    const holder = open();
    const held = await holder.lock(key, { Operation: "OperationTypeUpdate", Who: "alice@ci" });
    const other = open();
    const refused = await other.lock(key, { Operation: "OperationTypeUpdate" }).catch((e) => e);
    expect(refused).toBeInstanceOf(StateLockedError);
    expect(refused.holder).toMatchObject({ ID: held.ID, Who: "alice@ci" });
    await expect(other.write(key, storedStateOf(pulumiCheckpoint(1, "s")))).rejects.toThrow(/this process does not hold it\. Lock the state from this process, then write/);
    expect((await other.forceUnlock(key))?.ID).toBe(held.ID);
    expect(stacks.get(stackNameOf(key))!.updates.at(-1)?.status).toBe("cancelled");
    expect(await holder.lockHolder(key)).toBeNull();
  });

  it("an OpenTofu state is refused in one sentence, nothing written", async () => {
    const b = new StateBackend(open());
    const key = `${randomUUID()}.json`;
    const lock = await b.lock(key, { Operation: "OperationTypeUpdate" });
    await expect(b.write(key, new TextEncoder().encode(JSON.stringify({ version: 4, serial: 1, lineage: "L" })), lock.ID)).rejects.toThrow(
      `Nothing was written to ${key}: a Pulumi Cloud backend keeps Pulumi checkpoints ({"version": 3, "checkpoint": …}), and this state is not one. Keep OpenTofu states in another kind of backend.`,
    );
    expect(await b.read(key)).toBeNull();
    await b.unlock(key, lock.ID);
  });

  it("refusals are one sentence with the service's reason and the fix", async () => {
    await expect(open("wrong-token").read("a.json")).rejects.toThrow(
      "Pulumi Cloud refused to read stack acme/planton/a (HTTP 401: Unauthorized: No credentials provided or are invalid). Check the credentials: the pulumi_cloud connection's access_token must be a token of a member (or the organization) that can create and update stacks in the project (Settings → Connections).",
    );
    await expect(open(ACCESS, "nope").lock("a.json", { Operation: "OperationTypeUpdate" })).rejects.toThrow(/^Pulumi Cloud refused to create stack nope\/planton\/a \(HTTP 404: Not Found: Organization 'nope' not found\)\. Check that organization nope exists/);
  });
});
