// The `pulumi_cloud` kind: each state is a stack of the configured project in a Pulumi Cloud
// organization, its name the key with "/" → "-", created when missing (its key kept in a stack tag).
// Reads export the stack's checkpoint (GET …/export). The lock is a Pulumi update lease, the service's
// own lock: creating and starting an update is refused (409) while another update is in progress, and
// the holder's lock info rides on the stack's tags, set by the same start call. While Planton holds that
// lease, Pulumi refuses imports (an import is an update too), so writes go where the Pulumi CLI writes
// during an update: PATCH …/update/<id>/checkpoint with the lease's update token. Unlocking completes the
// update; force-unlock cancels it, as `pulumi cancel` does.
import { randomUUID } from "node:crypto";
import { lockInfoSchema, type LockInfo } from "../lib/state-lock";
import { isPulumiCheckpoint, lockInfoOf, StateLockedError } from "./rules";
import { fixFor, parseAnswer, refusal, RemoteStateError, unreachable, type Fetch } from "./remote-api";
import { STORE_VERSION, storedStateRead, whoAmI } from "./store-common";
import type { LockRequest, StateObjectInfo, StateStore, StoredState } from "./types";

const SERVICE = "Pulumi Cloud";
const CREDENTIALS_HINT = "the pulumi_cloud connection's access_token must be a token of a member (or the organization) that can create and update stacks in the project (Settings → Connections)";
/** Stack tags Planton keeps: the state key, the lock holder, and the checkpoint's own `stack` (its lineage). */
export const KEY_TAG = "planton:state-key";
export const LOCK_TAG = "planton:lock";
export const STACK_TAG = "planton:checkpoint-stack";
/** The STACK_TAG value of a checkpoint that names no stack (a tag value is never empty). */
const NO_STACK = "-";
const TAG_VALUE_MAX = 256;
const LEASE_SECONDS = 300;

export interface PulumiCloudStoreOptions {
  /** https://api.pulumi.com, or a self-hosted Pulumi Cloud's API. */
  apiUrl?: string;
  accessToken: string;
  organization: string;
  project: string;
  fetch?: Fetch;
}

interface Stack {
  orgName?: string;
  projectName?: string;
  stackName: string;
  activeUpdate?: string;
  currentOperation?: { kind?: string; author?: string; started?: number | string } | null;
  tags?: Record<string, string>;
  version?: number;
}

/** The stack a key lives in: "/" becomes "-", the `.tfstate` / `.json` file name goes, other characters Pulumi refuses become "_". */
export function stackNameOf(key: string): string {
  const name = key.replace(/(^|\/)terraform\.tfstate$/, "").replace(/\.(tfstate|json)$/, "").replace(/\//g, "-").replace(/[^A-Za-z0-9_.-]/g, "_");
  return name.slice(0, 100) || "state";
}

/** The lock info as a tag value, in short fields (Pulumi caps tag values at 256 characters; Info gives way first, Path is the stack's). */
export function lockTagValue(info: LockInfo & { update: string }): string {
  const short = (i: string) => ({ i: info.ID, o: info.Operation, w: info.Who, v: info.Version, c: info.Created, u: info.update, n: i });
  const over = JSON.stringify(short(info.Info)).length - TAG_VALUE_MAX;
  return JSON.stringify(short(over > 0 ? info.Info.slice(0, Math.max(0, info.Info.length - over)) : info.Info));
}

function lockTagOf(stack: Stack, path: string): (LockInfo & { update: string }) | null {
  const raw = stack.tags?.[LOCK_TAG];
  if (!raw) return null;
  try {
    const t = JSON.parse(raw) as Record<string, unknown>;
    const text = (v: unknown) => (typeof v === "string" ? v : "");
    const info = { ID: text(t.i), Path: path, Operation: text(t.o), Who: text(t.w), Version: text(t.v), Created: text(t.c), Info: text(t.n) };
    return lockInfoSchema.safeParse(info).success ? { ...info, update: text(t.u) } : null;
  } catch {
    return null;
  }
}

const blank: LockInfo = { ID: "", Path: "", Operation: "", Who: "", Version: "", Created: "", Info: "" };

interface Lease {
  id: string;
  update: string;
  token: string;
}

class PulumiCloudStateStore implements StateStore {
  readonly kind = "pulumi_cloud" as const;
  private readonly api: string;
  private readonly fetch: Fetch;
  /** The update leases this store holds, by key: the update token never leaves this process. */
  private readonly leases = new Map<string, Lease>();

  constructor(private readonly options: PulumiCloudStoreOptions) {
    this.api = (options.apiUrl || "https://api.pulumi.com").replace(/\/+$/, "");
    this.fetch = options.fetch ?? fetch;
  }

  private stackPath(key: string, rest = "") {
    const { organization, project } = this.options;
    return `/api/stacks/${encodeURIComponent(organization)}/${encodeURIComponent(project)}/${encodeURIComponent(stackNameOf(key))}${rest}`;
  }

  private where(key: string) {
    return `${this.options.organization}/${this.options.project}/${stackNameOf(key)}`;
  }

  private async call(method: string, path: string, action: string, body?: unknown, allow: number[] = [], updateToken?: string): Promise<{ status: number; json: any }> {
    const url = `${this.api}${path}`;
    let res: Response;
    try {
      res = await this.fetch(url, {
        method,
        headers: {
          authorization: updateToken ? `update-token ${updateToken}` : `token ${this.options.accessToken}`,
          accept: "application/vnd.pulumi+8",
          "content-type": "application/json",
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      throw unreachable(SERVICE, url, e);
    }
    const text = await res.text();
    if (allow.includes(res.status)) return { status: res.status, json: null };
    if (!res.ok) {
      if (res.status === 404) throw refusal(SERVICE, action, 404, text, `Check that organization ${this.options.organization} exists and the token is a member of it (${CREDENTIALS_HINT}).`);
      throw refusal(SERVICE, action, res.status, text, fixFor(res.status, CREDENTIALS_HINT));
    }
    return { status: res.status, json: parseAnswer(SERVICE, action, text) };
  }

  /** The key's stack, or null; a stack of that name holding another key (or made outside Planton) is refused. */
  private async stack(key: string): Promise<Stack | null> {
    const { json } = await this.call("GET", this.stackPath(key), `read stack ${this.where(key)}`, undefined, [404]);
    if (!json) return null;
    const stack = json as Stack;
    const holds = stack.tags?.[KEY_TAG];
    if (holds !== key) {
      throw new RemoteStateError(
        `Nothing was done to ${key}: its Pulumi Cloud stack ${this.where(key)} ${holds ? `already keeps the state of ${holds}` : "exists and was not created by Planton"}. Set another project on the backend (Settings → State Backends), or rename that stack.`,
        409,
      );
    }
    return stack;
  }

  private async stackOrCreate(key: string): Promise<Stack> {
    const found = await this.stack(key);
    if (found) return found;
    const { organization, project } = this.options;
    // 409: another writer created it meanwhile; theirs is read below like ours.
    await this.call("POST", `/api/stacks/${encodeURIComponent(organization)}/${encodeURIComponent(project)}`, `create stack ${this.where(key)}`, { stackName: stackNameOf(key), tags: { [KEY_TAG]: key } }, [409]);
    const stack = await this.stack(key);
    if (!stack) throw new RemoteStateError(`Pulumi Cloud did not create stack ${this.where(key)} and it does not exist. Check the token's permissions in the organization.`, 409);
    return stack;
  }

  async read(key: string): Promise<StoredState | null> {
    const stack = await this.stack(key);
    // A stack Planton created but never wrote (only locked) has no state yet.
    if (!stack || stack.tags?.[STACK_TAG] === undefined) return null;
    const { json } = await this.call("GET", this.stackPath(key, "/export"), `export the checkpoint of stack ${this.where(key)}`);
    const exported = json as { version?: number; deployment?: unknown };
    // Pulumi exports the deployment; the state is the checkpoint Pulumi's backends keep around it.
    const checkpointStack = stack.tags[STACK_TAG];
    const checkpoint = { version: 3, checkpoint: { ...(checkpointStack !== NO_STACK ? { stack: checkpointStack } : {}), latest: exported.deployment ?? null } };
    return storedStateRead(key, new TextEncoder().encode(JSON.stringify(checkpoint)));
  }

  async write(key: string, state: StoredState): Promise<void> {
    const lease = this.leases.get(key);
    if (!lease) {
      throw new RemoteStateError(`Nothing was written to ${key}: Pulumi Cloud takes a checkpoint only under the update lease of the lock, and this process does not hold it. Lock the state from this process, then write.`, 409);
    }
    const parsed = JSON.parse(Buffer.from(state.bytes).toString("utf8")) as unknown;
    if (!isPulumiCheckpoint(parsed)) {
      throw new RemoteStateError(`Nothing was written to ${key}: a Pulumi Cloud backend keeps Pulumi checkpoints ({"version": 3, "checkpoint": …}), and this state is not one. Keep OpenTofu states in another kind of backend.`, 422);
    }
    const stackField = typeof parsed.checkpoint.stack === "string" && parsed.checkpoint.stack ? parsed.checkpoint.stack : NO_STACK;
    if (stackField.length > TAG_VALUE_MAX) throw new RemoteStateError(`Nothing was written to ${key}: its checkpoint's stack name is longer than the ${TAG_VALUE_MAX} characters a Pulumi Cloud tag keeps. Rename the stack.`, 422);
    const updatePath = this.stackPath(key, `/update/${encodeURIComponent(lease.update)}`);
    // A long job outlives a lease: each write renews it first.
    const renewed = await this.call("POST", `${updatePath}/renew_lease`, `renew the update lease on stack ${this.where(key)}`, { token: lease.token, duration: LEASE_SECONDS }, [], lease.token);
    if (renewed.json?.token) lease.token = renewed.json.token;
    await this.call("PATCH", `${updatePath}/checkpoint`, `save the checkpoint of stack ${this.where(key)}`, { isInvalid: false, version: 3, deployment: parsed.checkpoint.latest ?? null }, [], lease.token);
    const stack = await this.stack(key);
    if (stack?.tags?.[STACK_TAG] !== stackField) await this.setTags(key, { ...stack?.tags, [STACK_TAG]: stackField });
  }

  private async setTags(key: string, tags: Record<string, string>) {
    await this.call("PATCH", this.stackPath(key, "/tags"), `update the tags of stack ${this.where(key)}`, tags);
  }

  private holderOf(key: string, stack: Stack): (LockInfo & { update: string }) | null {
    const tagged = lockTagOf(stack, this.where(key));
    if (tagged) return tagged;
    // An update Planton did not start (a `pulumi up` against the stack) holds it too.
    if (stack.currentOperation) {
      return { ...blank, Path: this.where(key), Operation: stack.currentOperation.kind ?? "", Who: stack.currentOperation.author || "a Pulumi update outside Planton", update: stack.activeUpdate ?? "" };
    }
    return null;
  }

  async lockHolder(key: string): Promise<LockInfo | null> {
    const stack = await this.stack(key);
    const holder = stack ? this.holderOf(key, stack) : null;
    if (!holder) return null;
    const { update: _update, ...info } = holder;
    return info;
  }

  async lock(key: string, request: LockRequest): Promise<LockInfo> {
    const stack = await this.stackOrCreate(key);
    const refuse = async (): Promise<never> => {
      const current = await this.stack(key);
      const holder = current ? this.holderOf(key, current) : null;
      const { update: _update, ...info } = holder ?? { ...blank, Path: this.where(key), Who: "another Pulumi update (it finished meanwhile)", update: "" };
      throw new StateLockedError(info);
    };
    if (this.holderOf(key, stack)) return refuse();
    const info = lockInfoOf(request, this.where(key), whoAmI(), STORE_VERSION, randomUUID);
    // The service wants a program's description to create an update; Planton runs none in it, it only holds the lease.
    const program = {
      name: this.options.project,
      runtime: "nodejs",
      main: "",
      description: "Planton console holds this stack's state lock",
      config: {},
      options: { dryRun: false, parallel: 1, color: "never", showConfig: false, showReplacementSteps: false, showSames: false },
      metadata: { message: `Planton state lock ${info.ID}: ${info.Operation} by ${info.Who}`, environment: { "planton.lock.id": info.ID } },
    };
    const created = await this.call("POST", this.stackPath(key, "/update"), `start an update on stack ${this.where(key)}`, program, [409]);
    if (created.status === 409) return refuse();
    const update = String(created.json.updateID);
    const tags = { ...stack.tags, [LOCK_TAG]: lockTagValue({ ...info, update }) };
    const started = await this.call("POST", this.stackPath(key, `/update/${encodeURIComponent(update)}`), `start an update on stack ${this.where(key)}`, { tags }, [409]);
    if (started.status === 409) {
      // Another update started first; the one created here never ran and is cancelled so it lingers nowhere.
      await this.call("POST", this.stackPath(key, `/update/${encodeURIComponent(update)}/cancel`), `cancel the update on stack ${this.where(key)}`, undefined, [404, 409]).catch(() => {});
      return refuse();
    }
    this.leases.set(key, { id: info.ID, update, token: String(started.json.token) });
    return info;
  }

  /** Removes Planton's lock tag, keeping the others. */
  private async clearLockTag(key: string) {
    const stack = await this.stack(key);
    if (!stack?.tags?.[LOCK_TAG]) return;
    const { [LOCK_TAG]: _removed, ...rest } = stack.tags;
    await this.setTags(key, rest);
  }

  async unlock(key: string, id: string): Promise<void> {
    const stack = await this.stack(key);
    const holder = stack ? this.holderOf(key, stack) : null;
    if (!holder || holder.ID !== id) {
      const { update: _update, ...info } = holder ?? { ...blank, Path: this.where(key), Who: "nobody (the state is not locked)", Info: `no lock to release under ID ${id}`, update: "" };
      throw new StateLockedError(info);
    }
    // The tag goes first: cleared after the update ends, it could wipe the next holder's.
    await this.clearLockTag(key);
    const lease = this.leases.get(key);
    const updatePath = this.stackPath(key, `/update/${encodeURIComponent(holder.update)}`);
    if (lease && lease.update === holder.update) {
      await this.call("POST", `${updatePath}/complete`, `complete the update on stack ${this.where(key)}`, { status: "succeeded" }, [], lease.token);
    } else {
      // Held under this ID by another process of Planton: its token died with it, so the update is cancelled.
      await this.call("POST", `${updatePath}/cancel`, `cancel the update on stack ${this.where(key)}`, undefined, [404, 409]);
    }
    this.leases.delete(key);
  }

  async forceUnlock(key: string): Promise<LockInfo | null> {
    const stack = await this.stack(key);
    const holder = stack ? this.holderOf(key, stack) : null;
    if (!stack || !holder) return null;
    await this.clearLockTag(key);
    const update = holder.update || stack.activeUpdate;
    if (update) await this.call("POST", this.stackPath(key, `/update/${encodeURIComponent(update)}/cancel`), `cancel the update on stack ${this.where(key)}`, undefined, [404, 409]);
    this.leases.delete(key);
    const { update: _update, ...info } = holder;
    return info;
  }

  async list(prefix = ""): Promise<StateObjectInfo[]> {
    const found: StateObjectInfo[] = [];
    let token = "";
    do {
      const query = new URLSearchParams({ organization: this.options.organization, project: this.options.project, tagName: KEY_TAG, ...(token ? { continuationToken: token } : {}) });
      const { json } = await this.call("GET", `/api/user/stacks?${query}`, `list the stacks of ${this.options.organization}/${this.options.project}`);
      for (const summary of (json.stacks ?? []) as Stack[]) {
        const { json: stack } = await this.call("GET", `/api/stacks/${encodeURIComponent(this.options.organization)}/${encodeURIComponent(this.options.project)}/${encodeURIComponent(summary.stackName)}`, `read stack ${summary.stackName}`, undefined, [404]);
        const key = (stack as Stack | null)?.tags?.[KEY_TAG];
        if (!key || !key.startsWith(prefix) || stackNameOf(key) !== summary.stackName) continue;
        const state = await this.read(key);
        if (state) found.push({ key, size: state.bytes.byteLength });
      }
      token = json.continuationToken ?? "";
    } while (token);
    return found;
  }

  async delete(key: string): Promise<void> {
    const stack = await this.stack(key);
    if (!stack) return;
    // Deleting the state deletes its lock: an update in progress is cancelled first.
    const holder = this.holderOf(key, stack);
    const update = holder?.update || (holder ? stack.activeUpdate : "");
    if (update) await this.call("POST", this.stackPath(key, `/update/${encodeURIComponent(update)}/cancel`), `cancel the update on stack ${this.where(key)}`, undefined, [404, 409]);
    this.leases.delete(key);
    await this.call("DELETE", `${this.stackPath(key)}?force=true`, `delete stack ${this.where(key)}`, undefined, [404]);
  }
}

/** A store of kind `pulumi_cloud` on one project of an organization. */
export function openPulumiCloudStore(options: PulumiCloudStoreOptions): StateStore {
  return new PulumiCloudStateStore(options);
}
