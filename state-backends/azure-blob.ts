// The `azure_blob` kind: each state is a block blob in a container, under an optional prefix. The lock
// is OpenTofu's azurerm lock: an infinite lease on the state blob (an empty placeholder blob is created
// when there is no state yet), its lease ID the lock ID, and the lock info as base64 JSON in the blob's
// `terraformlockid` metadata. Writes carry the lease ID, so Azure itself refuses a writer without it.
import { randomUUID } from "node:crypto";
import { BlobServiceClient, RestError, StorageSharedKeyCredential, type BlockBlobClient, type ContainerClient } from "@azure/storage-blob";
import { lockInfoSchema, type LockInfo } from "../lib/state-lock";
import { STORE_VERSION, whoAmI } from "./store-common";
import { lockInfoOf, StateLockedError, storedStateOf } from "./rules";
import type { LockRequest, StateObjectInfo, StateStore, StoredState } from "./types";

/** OpenTofu's metadata key for the lock info (Azure metadata keys are lower case). */
export const LOCK_INFO_METADATA_KEY = "terraformlockid";

export interface AzureBlobStoreOptions {
  container: string;
  /** Keys live under this prefix ("" or e.g. "planton/"); list and every key are relative to it. */
  prefix?: string;
  /** Either a connection string, or the account's blob URL with its name and key. */
  connectionString?: string;
  url?: string;
  accountName?: string;
  accountKey?: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const statusOf = (e: unknown) => (e instanceof RestError ? e.statusCode : undefined);

function encodeLockInfo(info: LockInfo) {
  return Buffer.from(JSON.stringify(info)).toString("base64");
}

function decodeLockInfo(raw: string | undefined): Partial<LockInfo> | null {
  if (!raw) return null;
  try {
    const parsed = lockInfoSchema.partial().safeParse(JSON.parse(Buffer.from(raw, "base64").toString("utf8")));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

const blank: LockInfo = { ID: "", Path: "", Operation: "", Who: "", Version: "", Created: "", Info: "" };

class AzureBlobStateStore implements StateStore {
  readonly kind = "azure_blob" as const;
  readonly container: ContainerClient;
  private readonly prefix: string;

  constructor(private readonly options: AzureBlobStoreOptions) {
    this.prefix = options.prefix ?? "";
    const service = options.connectionString
      ? BlobServiceClient.fromConnectionString(options.connectionString)
      : new BlobServiceClient(options.url ?? "", new StorageSharedKeyCredential(options.accountName ?? "", options.accountKey ?? ""));
    this.container = service.getContainerClient(options.container);
  }

  private blob(key: string): BlockBlobClient {
    return this.container.getBlockBlobClient(`${this.prefix}${key}`);
  }

  private path(key: string) {
    return `${this.options.container}/${this.prefix}${key}`;
  }

  /** The blob's properties, or null when it does not exist. */
  private async properties(key: string) {
    try {
      return await this.blob(key).getProperties();
    } catch (e) {
      if (statusOf(e) === 404) return null;
      throw e;
    }
  }

  async read(key: string): Promise<StoredState | null> {
    try {
      const bytes = await this.blob(key).downloadToBuffer();
      // An empty blob is the placeholder a lock creates before the first state: no state yet.
      return bytes.byteLength ? storedStateOf(new Uint8Array(bytes)) : null;
    } catch (e) {
      if (statusOf(e) === 404) return null;
      throw e;
    }
  }

  async create(key: string, state: StoredState): Promise<boolean> {
    try {
      // If-None-Match: * — the service refuses to replace a blob that exists (409 BlobAlreadyExists).
      await this.blob(key).upload(state.bytes, state.bytes.byteLength, { blobHTTPHeaders: { blobContentType: "application/json" }, conditions: { ifNoneMatch: "*" } });
      return true;
    } catch (e) {
      if (statusOf(e) === 409 || statusOf(e) === 412) return false;
      throw e;
    }
  }

  async write(key: string, state: StoredState): Promise<void> {
    const props = await this.properties(key);
    const metadata = props?.metadata ?? {};
    const leaseId = props?.leaseState === "leased" ? decodeLockInfo(metadata[LOCK_INFO_METADATA_KEY])?.ID : undefined;
    // The metadata goes along so the lock info stays on the blob (an upload replaces metadata).
    await this.blob(key).upload(state.bytes, state.bytes.byteLength, {
      metadata,
      blobHTTPHeaders: { blobContentType: "application/json" },
      conditions: leaseId ? { leaseId } : undefined,
    });
  }

  async lockHolder(key: string): Promise<LockInfo | null> {
    const props = await this.properties(key);
    if (!props || props.leaseState !== "leased") return null;
    const info = decodeLockInfo(props.metadata?.[LOCK_INFO_METADATA_KEY]);
    // Leased but no lock info yet: another locker is between taking the lease and writing its info.
    return { ...blank, Path: this.path(key), Who: "another writer (its lock info is not written yet)", ...info };
  }

  async lock(key: string, request: LockRequest): Promise<LockInfo> {
    const blob = this.blob(key);
    const refuse = async (): Promise<never> => {
      throw new StateLockedError((await this.lockHolder(key)) ?? { ...blank, Path: this.path(key), Who: "another writer (the lease was released meanwhile)" });
    };
    const props = await this.properties(key);
    if (props?.leaseState === "leased") return refuse();
    if (!props) {
      // The placeholder never replaces a blob another writer created meanwhile.
      await blob.upload("", 0, { blobHTTPHeaders: { blobContentType: "application/json" }, conditions: { ifNoneMatch: "*" } }).catch((e) => {
        if (statusOf(e) !== 409 && statusOf(e) !== 412) throw e;
      });
    }
    // Azure lease IDs are GUIDs; the lease ID is the lock ID, as OpenTofu has it.
    const leaseId = request.ID && UUID.test(request.ID) ? request.ID : randomUUID();
    const info = lockInfoOf({ ...request, ID: leaseId }, this.path(key), whoAmI(), STORE_VERSION, randomUUID);
    try {
      await blob.getBlobLeaseClient(leaseId).acquireLease(-1);
    } catch (e) {
      if (statusOf(e) === 409 || statusOf(e) === 412) return refuse();
      throw e;
    }
    const current = (await blob.getProperties({ conditions: { leaseId } })).metadata ?? {};
    await blob.setMetadata({ ...current, [LOCK_INFO_METADATA_KEY]: encodeLockInfo(info) }, { conditions: { leaseId } });
    return info;
  }

  async unlock(key: string, id: string): Promise<void> {
    const holder = await this.lockHolder(key);
    if (!holder || holder.ID !== id) {
      throw new StateLockedError(holder ?? { ...blank, Path: this.path(key), Who: "nobody (the state is not locked)", Info: `no lock to release under ID ${id}` });
    }
    const blob = this.blob(key);
    const { [LOCK_INFO_METADATA_KEY]: _removed, ...rest } = (await blob.getProperties({ conditions: { leaseId: id } })).metadata ?? {};
    await blob.setMetadata(rest, { conditions: { leaseId: id } });
    await blob.getBlobLeaseClient(id).releaseLease();
  }

  async forceUnlock(key: string): Promise<LockInfo | null> {
    const holder = await this.lockHolder(key);
    if (!holder) return null;
    const blob = this.blob(key);
    // Breaking (with no break period) ends the lease whatever its ID; the stale lock info goes with it.
    await blob.getBlobLeaseClient().breakLease(0);
    const { [LOCK_INFO_METADATA_KEY]: _removed, ...rest } = (await blob.getProperties()).metadata ?? {};
    await blob.setMetadata(rest);
    return holder;
  }

  async list(prefix = ""): Promise<StateObjectInfo[]> {
    const found: StateObjectInfo[] = [];
    for await (const item of this.container.listBlobsFlat({ prefix: `${this.prefix}${prefix}` })) {
      const size = item.properties.contentLength ?? 0;
      // Empty blobs are lock placeholders, not states.
      if (size > 0) found.push({ key: item.name.slice(this.prefix.length), size });
    }
    return found;
  }

  async delete(key: string): Promise<void> {
    const props = await this.properties(key);
    if (!props) return;
    // Deleting the state deletes its lock: a leased blob's lease is broken first.
    if (props.leaseState === "leased") await this.blob(key).getBlobLeaseClient().breakLease(0);
    await this.blob(key).deleteIfExists({ deleteSnapshots: "include" });
  }
}

export type AzureBlobStore = StateStore & { readonly container: ContainerClient };

/** A store of kind `azure_blob` on one container of a storage account. */
export function openAzureBlobStore(options: AzureBlobStoreOptions): AzureBlobStore {
  return new AzureBlobStateStore(options);
}
