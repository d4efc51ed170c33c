// The `gcs` kind: each state an object `<prefix><key>` in a Google Cloud Storage bucket, over the GCS
// JSON API with `fetch`. The lock is OpenTofu's gcs backend lock: an object `<prefix><key>.tflock` holding
// the lock info JSON, created only if absent (`ifGenerationMatch=0`), its Path `gs://bucket/object`, and
// its generation the lock ID OpenTofu shows (a lock request's own ID, when it sends one, is kept too);
// unlocking deletes it with `ifGenerationMatch=<generation>`, so only that very lock object goes.
// Credentials: an OAuth2 access token from the service account key's RS256-signed JWT (node:crypto).
import { createSign } from "node:crypto";
import { lockInfoSchema, type LockInfo } from "../lib/state-lock";
import { lockInfoOf, StateLockedError } from "./rules";
import { fixFor, parseAnswer, refusal, RemoteStateError, unreachable, type Fetch } from "./remote-api";
import { STORE_VERSION, storedStateRead, whoAmI } from "./store-common";
import type { LockRequest, StateObjectInfo, StateStore, StoredState } from "./types";

export const LOCK_SUFFIX = ".tflock";
export const GCS_SCOPE = "https://www.googleapis.com/auth/devstorage.read_write";
const DEFAULT_ENDPOINT = "https://storage.googleapis.com";
const DEFAULT_TOKEN_URI = "https://oauth2.googleapis.com/token";
const SERVICE = "Google Cloud Storage";
const CREDENTIALS_HINT = "the gcp connection's service_account_key must be a key of a service account with roles/storage.objectAdmin on the bucket (Settings → Connections)";

export interface GcsStoreOptions {
  bucket: string;
  /** Keys live under this prefix ("" or e.g. "planton/"); list and every key are relative to it. */
  prefix?: string;
  /** The service account key file's JSON, as Google Cloud gives it. */
  serviceAccountKey: string;
  /** Overrides https://storage.googleapis.com (an emulator, or a test's fake). */
  endpoint?: string;
  fetch?: Fetch;
}

export interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  private_key_id?: string;
  token_uri?: string;
}

/** The key JSON, or one sentence saying what is wrong with it (never its content). */
export function parseServiceAccountKey(raw: string): ServiceAccountKey {
  let key: Partial<ServiceAccountKey> & { type?: string };
  try {
    key = JSON.parse(raw);
  } catch {
    throw new RemoteStateError("The GCS backend could not sign in: the gcp connection's service_account_key is not JSON. Paste the whole key file of the service account in Settings → Connections.", 0);
  }
  if (!key || typeof key.client_email !== "string" || typeof key.private_key !== "string" || (key.type && key.type !== "service_account")) {
    throw new RemoteStateError("The GCS backend could not sign in: the gcp connection's service_account_key is not a service account key (it needs type service_account, client_email and private_key). Create a JSON key for the service account and paste it in Settings → Connections.", 0);
  }
  return key as ServiceAccountKey;
}

const b64url = (data: string | Buffer) => Buffer.from(data).toString("base64url");

/** The signed JWT a service account exchanges for an access token (RFC 7523, as Google's OAuth2 server wants it). */
export function serviceAccountJwt(key: ServiceAccountKey, nowSeconds: number, scope = GCS_SCOPE): string {
  const header = { alg: "RS256", typ: "JWT", ...(key.private_key_id ? { kid: key.private_key_id } : {}) };
  const claims = { iss: key.client_email, scope, aud: key.token_uri || DEFAULT_TOKEN_URI, iat: nowSeconds, exp: nowSeconds + 3600 };
  const unsigned = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  let signature: Buffer;
  try {
    signature = createSign("RSA-SHA256").update(unsigned).sign(key.private_key);
  } catch {
    throw new RemoteStateError("The GCS backend could not sign in: the private_key in the gcp connection's service_account_key is not a usable RSA key. Create a new JSON key for the service account and paste it in Settings → Connections.", 0);
  }
  return `${unsigned}.${b64url(signature)}`;
}

interface GcsObject {
  name: string;
  size: string;
  generation: string;
}

class GcsStateStore implements StateStore {
  readonly kind = "gcs" as const;
  private readonly prefix: string;
  private readonly endpoint: string;
  private readonly fetch: Fetch;
  private readonly key: ServiceAccountKey;
  private token: { value: string; expiresAt: number } | null = null;

  constructor(private readonly options: GcsStoreOptions) {
    this.prefix = options.prefix ?? "";
    this.endpoint = (options.endpoint || DEFAULT_ENDPOINT).replace(/\/+$/, "");
    this.fetch = options.fetch ?? fetch;
    this.key = parseServiceAccountKey(options.serviceAccountKey);
  }

  private objectName(key: string) {
    return `${this.prefix}${key}`;
  }

  private url(name: string) {
    return `gs://${this.options.bucket}/${name}`;
  }

  private async accessToken(): Promise<string> {
    const now = Date.now();
    if (this.token && this.token.expiresAt - 60_000 > now) return this.token.value;
    const tokenUri = this.key.token_uri || DEFAULT_TOKEN_URI;
    const body = new URLSearchParams({ grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion: serviceAccountJwt(this.key, Math.floor(now / 1000)) });
    let res: Response;
    try {
      res = await this.fetch(tokenUri, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body });
    } catch (e) {
      throw unreachable("Google's OAuth2 server", tokenUri, e);
    }
    const text = await res.text();
    if (!res.ok) throw refusal("Google's OAuth2 server", `give service account ${this.key.client_email} an access token`, res.status, text, `Check that the key in the gcp connection is current and its service account enabled (Settings → Connections).`);
    const answer = (parseAnswer("Google's OAuth2 server", "give an access token", text) ?? {}) as { access_token?: string; expires_in?: number };
    if (!answer.access_token) throw new RemoteStateError("Google's OAuth2 server answered without an access token. Try again; if it persists, create a new key for the service account.", res.status);
    this.token = { value: answer.access_token, expiresAt: now + (answer.expires_in ?? 3600) * 1000 };
    return this.token.value;
  }

  /** One call to the JSON API; answers the response, or throws one sentence (404 is answered, for the caller to read as "none"). */
  private async call(method: string, url: string, action: string, init: { body?: Uint8Array | string; contentType?: string } = {}, allow: number[] = [404]): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${await this.accessToken()}` };
    if (init.contentType) headers["content-type"] = init.contentType;
    let res: Response;
    try {
      res = await this.fetch(url, { method, headers, body: typeof init.body === "string" || init.body === undefined ? init.body : Buffer.from(init.body) });
    } catch (e) {
      throw unreachable(SERVICE, url, e);
    }
    if (res.ok || allow.includes(res.status)) return res;
    const text = await res.text();
    if (res.status === 404) throw refusal(SERVICE, action, 404, text, `Check that bucket ${this.options.bucket} exists (gcloud storage buckets create gs://${this.options.bucket}).`);
    throw refusal(SERVICE, action, res.status, text, fixFor(res.status, CREDENTIALS_HINT));
  }

  private objectUrl(name: string, query = "") {
    return `${this.endpoint}/storage/v1/b/${encodeURIComponent(this.options.bucket)}/o/${encodeURIComponent(name)}${query}`;
  }

  private uploadUrl(name: string, query = "") {
    return `${this.endpoint}/upload/storage/v1/b/${encodeURIComponent(this.options.bucket)}/o?uploadType=media&name=${encodeURIComponent(name)}${query}`;
  }

  /** An object's bytes and generation, or null when there is none. */
  private async download(name: string): Promise<{ bytes: Uint8Array; generation: string } | null> {
    const res = await this.call("GET", this.objectUrl(name, "?alt=media"), `read ${this.url(name)}`);
    if (res.status === 404) return null;
    const bytes = new Uint8Array(await res.arrayBuffer());
    let generation = res.headers.get("x-goog-generation") ?? "";
    if (!generation) {
      const meta = await this.call("GET", this.objectUrl(name), `read ${this.url(name)}`);
      if (meta.status === 404) return null;
      generation = (parseAnswer(SERVICE, `read ${this.url(name)}`, await meta.text()) as GcsObject).generation;
    }
    return { bytes, generation };
  }

  async read(key: string): Promise<StoredState | null> {
    const found = await this.download(this.objectName(key));
    return found ? storedStateRead(key, found.bytes) : null;
  }

  async write(key: string, state: StoredState): Promise<void> {
    const name = this.objectName(key);
    await this.call("POST", this.uploadUrl(name), `write ${this.url(name)}`, { body: state.bytes, contentType: "application/json" }, []);
  }

  /** The lock object's holder with its generation, or null. */
  private async holderOf(key: string): Promise<{ info: LockInfo; generation: string } | null> {
    const name = this.objectName(key) + LOCK_SUFFIX;
    const found = await this.download(name);
    if (!found) return null;
    let json: unknown = {};
    try {
      json = JSON.parse(Buffer.from(found.bytes).toString("utf8"));
    } catch {
      // A lock object that is not JSON is still a lock: it is reported with empty fields.
    }
    const parsed = lockInfoSchema.partial().safeParse(json);
    const info = parsed.success ? parsed.data : {};
    // OpenTofu's gcs lock ID is the lock object's generation; a lock that carried its own ID keeps it.
    return { info: { ID: "", Path: this.url(name), Operation: "", Who: "", Version: "", Created: "", Info: "", ...info, ...(info.ID ? {} : { ID: found.generation }) }, generation: found.generation };
  }

  async lockHolder(key: string): Promise<LockInfo | null> {
    return (await this.holderOf(key))?.info ?? null;
  }

  async lock(key: string, request: LockRequest): Promise<LockInfo> {
    const name = this.objectName(key) + LOCK_SUFFIX;
    const info = lockInfoOf({ ...request, Path: this.url(name) }, this.url(name), whoAmI(), STORE_VERSION, () => "");
    const res = await this.call("POST", this.uploadUrl(name, "&ifGenerationMatch=0"), `create the lock ${this.url(name)}`, { body: JSON.stringify(info), contentType: "application/json" }, [412]);
    if (res.status === 412) {
      const holder = await this.lockHolder(key);
      throw new StateLockedError(holder ?? { ...info, ID: "", Who: "another writer", Info: "the lock object was created by another writer and removed before it could be read" });
    }
    const created = parseAnswer(SERVICE, `create the lock ${this.url(name)}`, await res.text()) as GcsObject;
    return { ...info, ID: info.ID || created.generation };
  }

  private notHeld(key: string, id: string): StateLockedError {
    return new StateLockedError({ ID: "", Path: this.url(this.objectName(key) + LOCK_SUFFIX), Operation: "", Who: "nobody (the state is not locked)", Version: "", Created: "", Info: `no lock to release under ID ${id}` });
  }

  async unlock(key: string, id: string): Promise<void> {
    const held = await this.holderOf(key);
    if (!held) throw this.notHeld(key, id);
    if (held.info.ID !== id && held.generation !== id) throw new StateLockedError(held.info);
    const name = this.objectName(key) + LOCK_SUFFIX;
    const res = await this.call("DELETE", this.objectUrl(name, `?ifGenerationMatch=${held.generation}`), `release the lock ${this.url(name)}`, {}, [404, 412]);
    if (res.status === 404) throw this.notHeld(key, id);
    if (res.status === 412) throw new StateLockedError((await this.lockHolder(key)) ?? held.info);
  }

  async forceUnlock(key: string): Promise<LockInfo | null> {
    const held = await this.holderOf(key);
    if (!held) return null;
    const name = this.objectName(key) + LOCK_SUFFIX;
    // Only the lock read here is removed: a lock taken since (another generation) stays.
    await this.call("DELETE", this.objectUrl(name, `?ifGenerationMatch=${held.generation}`), `remove the lock ${this.url(name)}`, {}, [404, 412]);
    return held.info;
  }

  async list(prefix = ""): Promise<StateObjectInfo[]> {
    const found: StateObjectInfo[] = [];
    let pageToken = "";
    do {
      const query = `?prefix=${encodeURIComponent(this.objectName(prefix))}${pageToken ? `&pageToken=${encodeURIComponent(pageToken)}` : ""}`;
      const url = `${this.endpoint}/storage/v1/b/${encodeURIComponent(this.options.bucket)}/o${query}`;
      const res = await this.call("GET", url, `list gs://${this.options.bucket}/${this.objectName(prefix)}`, {}, []);
      const page = (parseAnswer(SERVICE, `list gs://${this.options.bucket}`, await res.text()) ?? {}) as { items?: GcsObject[]; nextPageToken?: string };
      for (const o of page.items ?? []) {
        if (o.name.endsWith(LOCK_SUFFIX)) continue;
        found.push({ key: o.name.slice(this.prefix.length), size: Number(o.size) || 0 });
      }
      pageToken = page.nextPageToken ?? "";
    } while (pageToken);
    return found;
  }

  async delete(key: string): Promise<void> {
    const name = this.objectName(key);
    await this.call("DELETE", this.objectUrl(name), `delete ${this.url(name)}`);
    await this.call("DELETE", this.objectUrl(name + LOCK_SUFFIX), `delete ${this.url(name + LOCK_SUFFIX)}`);
  }
}

/** A store of kind `gcs` on one bucket. Throws one sentence when the key is not a service account key. */
export function openGcsStore(options: GcsStoreOptions): StateStore {
  return new GcsStateStore(options);
}
