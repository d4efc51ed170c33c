// The `terraform_cloud` kind (HCP Terraform, Terraform Cloud, Terraform Enterprise): each state is the
// current state version of its own workspace, `<workspace_prefix><key, "/" → "-">`, created (local
// execution: state only) when missing. Reads download the current state version; writes create a new
// state version (serial, md5, lineage, base64 state), which the API accepts only while this token holds
// the workspace lock. The lock is the workspace lock (409 for a second locker); the API takes a lock
// reason but does not answer it back, so the holder's OpenTofu lock info is kept in the workspace's
// description next to the state key, which also maps a workspace back to its key for list.
import { createHash, randomUUID } from "node:crypto";
import { lockInfoSchema, type LockInfo } from "../lib/state-lock";
import { lockInfoOf, StateLockedError } from "./rules";
import { fixFor, parseAnswer, refusal, RemoteStateError, unreachable, type Fetch } from "./remote-api";
import { STORE_VERSION, storedStateRead, whoAmI } from "./store-common";
import type { LockRequest, StateObjectInfo, StateStore, StoredState } from "./types";

const SERVICE = "HCP Terraform";
const CREDENTIALS_HINT = "the terraform_cloud connection's token must be a user or team API token that can manage workspaces and state versions in the organization (Settings → Connections)";
const KEY_LINE = "planton-state-key: ";
const LOCK_LINE = "planton-state-lock: ";
const NAME_MAX = 90;

export interface TerraformCloudStoreOptions {
  /** The host (app.terraform.io, or a Terraform Enterprise host); a full http(s):// URL is taken as the API's origin. */
  hostname: string;
  token: string;
  organization: string;
  /** Workspaces are named <prefix><key with "/" → "-">; default "planton-". */
  workspacePrefix?: string;
  fetch?: Fetch;
}

interface Workspace {
  id: string;
  attributes: { name: string; locked?: boolean; description?: string | null };
}

interface StateVersion {
  attributes: { serial: number; md5?: string; size?: number; lineage?: string | null; "hosted-state-download-url"?: string | null };
}

/** The workspace a key lives in: `/` becomes `-`, the `.tfstate` file name goes, other characters HCP refuses become `_`. */
export function workspaceNameOf(prefix: string, key: string): string {
  const base = key.replace(/(^|\/)terraform\.tfstate$/, "").replace(/\.tfstate$/, "").replace(/\//g, "-").replace(/[^A-Za-z0-9_-]/g, "_");
  const name = `${prefix}${base}`;
  // HCP caps names at 90 characters: a long key keeps its start and a hash of the whole key.
  return name.length <= NAME_MAX ? name : `${name.slice(0, NAME_MAX - 9)}-${createHash("sha256").update(key).digest("hex").slice(0, 8)}`;
}

/** The description that maps a workspace to its key and, while locked, carries the holder's lock info. */
export function workspaceDescription(key: string, lock: LockInfo | null): string {
  return [`State of ${key}, kept by Planton console. Do not rename this workspace.`, `${KEY_LINE}${key}`, ...(lock ? [`${LOCK_LINE}${Buffer.from(JSON.stringify(lock)).toString("base64")}`] : [])].join("\n");
}

function keyOf(ws: Workspace): string | null {
  const line = (ws.attributes.description ?? "").split("\n").find((l) => l.startsWith(KEY_LINE));
  return line ? line.slice(KEY_LINE.length) : null;
}

function lockOf(ws: Workspace): Partial<LockInfo> | null {
  const line = (ws.attributes.description ?? "").split("\n").find((l) => l.startsWith(LOCK_LINE));
  if (!line) return null;
  try {
    const parsed = lockInfoSchema.partial().safeParse(JSON.parse(Buffer.from(line.slice(LOCK_LINE.length), "base64").toString("utf8")));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

const blank: LockInfo = { ID: "", Path: "", Operation: "", Who: "", Version: "", Created: "", Info: "" };

class TerraformCloudStateStore implements StateStore {
  readonly kind = "terraform_cloud" as const;
  private readonly origin: string;
  private readonly prefix: string;
  private readonly fetch: Fetch;

  constructor(private readonly options: TerraformCloudStoreOptions) {
    const host = options.hostname || "app.terraform.io";
    this.origin = (/^https?:\/\//.test(host) ? host : `https://${host}`).replace(/\/+$/, "");
    this.prefix = options.workspacePrefix ?? "planton-";
    this.fetch = options.fetch ?? fetch;
  }

  private orgPath(rest = "") {
    return `/api/v2/organizations/${encodeURIComponent(this.options.organization)}${rest}`;
  }

  /** One API call; answers the parsed JSON:API document (null for 204 and the allowed statuses), or throws one sentence. */
  private async call(method: string, path: string, action: string, body?: unknown, allow: number[] = []): Promise<{ status: number; json: any }> {
    const url = path.startsWith("http") ? path : `${this.origin}${path}`;
    let res: Response;
    try {
      res = await this.fetch(url, {
        method,
        headers: { authorization: `Bearer ${this.options.token}`, "content-type": "application/vnd.api+json", accept: "application/vnd.api+json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      throw unreachable(SERVICE, url, e);
    }
    const text = await res.text();
    if (allow.includes(res.status)) return { status: res.status, json: null };
    if (!res.ok) {
      if (res.status === 404) throw refusal(SERVICE, action, 404, text, `Check that organization ${this.options.organization} exists on ${new URL(this.origin).host} and the token can see it (${CREDENTIALS_HINT}).`);
      throw refusal(SERVICE, action, res.status, text, fixFor(res.status, CREDENTIALS_HINT));
    }
    return { status: res.status, json: parseAnswer(SERVICE, action, text) };
  }

  /** The key's workspace, or null; a workspace of that name that holds another key is refused (a name clash). */
  private async workspace(key: string): Promise<Workspace | null> {
    const name = workspaceNameOf(this.prefix, key);
    const { json } = await this.call("GET", this.orgPath(`/workspaces/${encodeURIComponent(name)}`), `read workspace ${name}`, undefined, [404]);
    if (!json) return null;
    const ws = json.data as Workspace;
    const holds = keyOf(ws);
    if (holds !== key) {
      throw new RemoteStateError(
        `Nothing was done to ${key}: its HCP Terraform workspace ${name} ${holds ? `already keeps the state of ${holds}` : "exists and was not created by Planton"}. Set another workspace_prefix on the backend (Settings → State Backends), or rename that workspace.`,
        409,
      );
    }
    return ws;
  }

  private async workspaceOrCreate(key: string): Promise<Workspace> {
    const found = await this.workspace(key);
    if (found) return found;
    const name = workspaceNameOf(this.prefix, key);
    const attributes = { name, description: workspaceDescription(key, null), "execution-mode": "local" };
    const created = await this.call("POST", this.orgPath("/workspaces"), `create workspace ${name}`, { data: { type: "workspaces", attributes } }, [422]);
    // 422: another writer created it meanwhile (the name is taken); use theirs.
    if (created.status === 422) return (await this.workspace(key)) ?? Promise.reject(new RemoteStateError(`HCP Terraform refused to create workspace ${name} and it does not exist. Check the name rules and the token's permissions.`, 422));
    return created.json.data as Workspace;
  }

  private async currentStateVersion(ws: Workspace): Promise<StateVersion | null> {
    const { json } = await this.call("GET", `/api/v2/workspaces/${ws.id}/current-state-version`, `read the current state version of workspace ${ws.attributes.name}`, undefined, [404]);
    return json ? (json.data as StateVersion) : null;
  }

  async read(key: string): Promise<StoredState | null> {
    const ws = await this.workspace(key);
    if (!ws) return null;
    const version = await this.currentStateVersion(ws);
    const url = version?.attributes["hosted-state-download-url"];
    if (!version || !url) return null;
    let res: Response;
    try {
      // The token goes to the API's own host only; a download URL elsewhere (HCP's archivist) is pre-signed.
      const sameOrigin = new URL(url).origin === this.origin;
      res = await this.fetch(url, { headers: sameOrigin ? { authorization: `Bearer ${this.options.token}` } : {} });
    } catch (e) {
      throw unreachable(SERVICE, url, e);
    }
    if (!res.ok) throw refusal(SERVICE, `download the state of workspace ${ws.attributes.name}`, res.status, await res.text(), fixFor(res.status, CREDENTIALS_HINT));
    return storedStateRead(key, new Uint8Array(await res.arrayBuffer()));
  }

  async write(key: string, state: StoredState): Promise<void> {
    const ws = await this.workspaceOrCreate(key);
    const md5 = createHash("md5").update(state.bytes).digest("hex");
    const current = await this.currentStateVersion(ws);
    // The same state again: HCP keeps one version per serial, and this one is stored already.
    if (current && current.attributes.serial === state.serial && current.attributes.md5 === md5) return;
    const attributes = { serial: state.serial, md5, lineage: state.lineage, state: Buffer.from(state.bytes).toString("base64") };
    await this.call("POST", `/api/v2/workspaces/${ws.id}/state-versions`, `write a state version (serial ${state.serial}) to workspace ${ws.attributes.name}`, { data: { type: "state-versions", attributes } });
  }

  private holderOf(ws: Workspace): LockInfo | null {
    if (!ws.attributes.locked) return null;
    const info = lockOf(ws);
    // Locked without Planton's lock info: a person, a run, or a locker between its lock and its note.
    return { ...blank, Path: `${this.options.organization}/${ws.attributes.name}`, Who: "someone outside Planton, or a run in HCP Terraform (the workspace is locked without Planton lock info)", ...info };
  }

  async lockHolder(key: string): Promise<LockInfo | null> {
    const ws = await this.workspace(key);
    return ws ? this.holderOf(ws) : null;
  }

  private async describe(ws: Workspace, key: string, lock: LockInfo | null) {
    await this.call("PATCH", `/api/v2/workspaces/${ws.id}`, `update the description of workspace ${ws.attributes.name}`, { data: { type: "workspaces", attributes: { description: workspaceDescription(key, lock) } } });
  }

  async lock(key: string, request: LockRequest): Promise<LockInfo> {
    const ws = await this.workspaceOrCreate(key);
    const info = lockInfoOf(request, `${this.options.organization}/${ws.attributes.name}`, whoAmI(), STORE_VERSION, randomUUID);
    const reason = `Planton: ${info.Operation} by ${info.Who} (lock ${info.ID})`;
    const locked = await this.call("POST", `/api/v2/workspaces/${ws.id}/actions/lock`, `lock workspace ${ws.attributes.name}`, { reason }, [409]);
    if (locked.status === 409) {
      const current = await this.workspace(key);
      throw new StateLockedError((current && this.holderOf(current)) ?? { ...blank, Path: ws.attributes.name, Who: "another writer (the workspace was unlocked meanwhile)" });
    }
    try {
      await this.describe(ws, key, info);
    } catch (e) {
      await this.call("POST", `/api/v2/workspaces/${ws.id}/actions/unlock`, `unlock workspace ${ws.attributes.name}`, undefined, [409]).catch(() => {});
      throw e;
    }
    return info;
  }

  async unlock(key: string, id: string): Promise<void> {
    const ws = await this.workspace(key);
    const holder = ws ? this.holderOf(ws) : null;
    if (!ws || !holder || holder.ID !== id) {
      throw new StateLockedError(holder ?? { ...blank, Path: workspaceNameOf(this.prefix, key), Who: "nobody (the state is not locked)", Info: `no lock to release under ID ${id}` });
    }
    // The note goes first: cleared after the unlock, it could wipe the next holder's.
    await this.describe(ws, key, null);
    const res = await this.call("POST", `/api/v2/workspaces/${ws.id}/actions/unlock`, `unlock workspace ${ws.attributes.name}`, undefined, [409]);
    if (res.status === 409) {
      await this.describe(ws, key, holder);
      throw new RemoteStateError(`HCP Terraform refused to unlock workspace ${ws.attributes.name}: it is locked by another user or team than this token's. Force-unlock it from the component's state page (an admin action), or unlock it in HCP Terraform.`, 409);
    }
  }

  async forceUnlock(key: string): Promise<LockInfo | null> {
    const ws = await this.workspace(key);
    const holder = ws ? this.holderOf(ws) : null;
    if (!ws || !holder) return null;
    await this.describe(ws, key, null);
    await this.call("POST", `/api/v2/workspaces/${ws.id}/actions/force-unlock`, `force-unlock workspace ${ws.attributes.name}`, undefined, [409]);
    return holder;
  }

  async list(prefix = ""): Promise<StateObjectInfo[]> {
    const search = workspaceNameOf(this.prefix, prefix).replace(/-[0-9a-f]{8}$/, "");
    const found: StateObjectInfo[] = [];
    for (let page: number | null = 1; page; ) {
      const query = `?search%5Bname%5D=${encodeURIComponent(search)}&page%5Bnumber%5D=${page}&page%5Bsize%5D=100`;
      const { json } = await this.call("GET", this.orgPath(`/workspaces${query}`), `list the workspaces of organization ${this.options.organization}`);
      for (const ws of (json.data ?? []) as Workspace[]) {
        const key = keyOf(ws);
        if (key === null || !key.startsWith(prefix) || !ws.attributes.name.startsWith(this.prefix)) continue;
        const version = await this.currentStateVersion(ws);
        if (version) found.push({ key, size: version.attributes.size ?? 0 });
      }
      page = json.meta?.pagination?.["next-page"] ?? null;
    }
    return found;
  }

  async delete(key: string): Promise<void> {
    const ws = await this.workspace(key);
    if (!ws) return;
    // Deleting the state deletes its lock: a locked workspace is force-unlocked first.
    if (ws.attributes.locked) await this.call("POST", `/api/v2/workspaces/${ws.id}/actions/force-unlock`, `force-unlock workspace ${ws.attributes.name}`, undefined, [409]);
    await this.call("DELETE", this.orgPath(`/workspaces/${encodeURIComponent(ws.attributes.name)}`), `delete workspace ${ws.attributes.name}`, undefined, [404]);
  }
}

/** A store of kind `terraform_cloud` on one organization. */
export function openTerraformCloudStore(options: TerraformCloudStoreOptions): StateStore {
  return new TerraformCloudStateStore(options);
}
