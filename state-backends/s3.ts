// The `s3` kind (and `r2`, Cloudflare's S3-compatible service: the same code with an endpoint). States
// are objects under an optional prefix; the lock is OpenTofu's `use_lockfile`: `<key>.tflock` holding
// the lock info JSON, created by a conditional write (If-None-Match: *) so only one writer can create it.
import { createHash, randomUUID } from "node:crypto";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from "@aws-sdk/client-s3";
import { sha256Of } from "../lib/artifacts";
import { lockInfoSchema, type LockInfo } from "../lib/state-lock";
import { STORE_VERSION, whoAmI } from "./store-common";
import { lockInfoOf, StateLockedError, storedStateOf } from "./rules";
import type { LockRequest, StateObjectInfo, StateStore, StoredState } from "./types";

export const LOCK_SUFFIX = ".tflock";
/** The probe enforcesConditionalWrites() writes and deletes: at the top of the prefix, never a component's key (<environment>/<component>/…). */
const CONDITIONAL_WRITE_PROBE = ".planton-conditional-write-probe-";

export interface S3StoreOptions {
  bucket: string;
  /** Keys live under this prefix ("" or e.g. "planton/"); list and every key are relative to it. */
  prefix?: string;
  region?: string;
  /** A custom endpoint (R2, MinIO, s3rver): requests then go path-style. */
  endpoint?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

export interface R2StoreOptions extends Omit<S3StoreOptions, "endpoint" | "region"> {
  /** The Cloudflare account ID: the endpoint is https://<accountId>.r2.cloudflarestorage.com. */
  accountId: string;
  /** Overrides the endpoint (a jurisdiction's, or a test server). */
  endpoint?: string;
}


/** How many objects' digests a store remembers of what it wrote (the oldest forgotten first): a move reads a chunk's copies back within moments. */
const WRITTEN_KEPT = 4096;

const status = (e: unknown) => (e as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
const isMissing = (e: unknown) => status(e) === 404 || (e as { name?: string })?.name === "NoSuchKey";

class S3StateStore implements StateStore {
  readonly client: S3Client;
  private readonly prefix: string;
  private conditionalWrites?: Promise<boolean>;
  /** The MD5 and SHA-256 of the bytes this store last wrote under an object key: checksum() confirms them by the ETag alone. */
  private readonly written = new Map<string, { md5: string; sha256: string }>();

  constructor(
    readonly kind: "s3" | "r2",
    private readonly options: S3StoreOptions,
  ) {
    this.prefix = options.prefix ?? "";
    const config: S3ClientConfig = {
      region: options.region ?? "us-east-1",
      credentials: options.credentials,
      // Each command class's middleware chain is built once per client, not on every request (nothing here adds
      // middleware after the first request): about a fifth less of this process's CPU per request.
      cacheMiddleware: true,
      // S3-compatible servers (R2, MinIO, s3rver) differ on the SDK's default extra checksums: send them only where required.
      ...(options.endpoint
        ? { endpoint: options.endpoint, forcePathStyle: true, requestChecksumCalculation: "WHEN_REQUIRED", responseChecksumValidation: "WHEN_REQUIRED" }
        : {}),
    };
    this.client = new S3Client(config);
  }

  private objectKey(key: string) {
    return `${this.prefix}${key}`;
  }

  /** The object's metadata (its ETag among them), or null when there is none. */
  private head(objectKey: string) {
    return this.client.send(new HeadObjectCommand({ Bucket: this.options.bucket, Key: objectKey })).catch((e) => (isMissing(e) ? null : Promise.reject(e)));
  }

  private async getBytes(objectKey: string): Promise<Uint8Array | null> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: objectKey }));
      return out.Body ? await out.Body.transformToByteArray() : new Uint8Array();
    } catch (e) {
      if (isMissing(e)) return null;
      throw e;
    }
  }

  async read(key: string): Promise<StoredState | null> {
    const bytes = await this.getBytes(this.objectKey(key));
    return bytes ? storedStateOf(bytes) : null;
  }

  /**
   * The SHA-256 of the bytes under `key`. Where this store wrote them, a HEAD answers it: the object's ETag is the MD5 the
   * server computed over the bytes it holds (a single PUT's, without KMS encryption), and equal to the MD5 of the bytes
   * written it means those bytes are there — the move's read-back without downloading every copy again (AWS's own way to
   * check an upload). Any other ETag (the object changed since, or its ETag is not an MD5) and any object it did not
   * write: the bytes are read and hashed.
   */
  async checksum(key: string): Promise<string | null> {
    const objectKey = this.objectKey(key);
    const mine = this.written.get(objectKey);
    if (mine) {
      const head = await this.head(objectKey);
      if (!head) return null;
      if (head.ETag?.replaceAll('"', "").toLowerCase() === mine.md5) return mine.sha256;
    }
    const bytes = await this.getBytes(objectKey);
    return bytes ? sha256Of(bytes).hex : null;
  }

  private async put(key: string, state: StoredState, ifNoneMatch?: "*"): Promise<void> {
    const objectKey = this.objectKey(key);
    this.written.delete(objectKey);
    await this.client.send(
      new PutObjectCommand({ Bucket: this.options.bucket, Key: objectKey, Body: state.bytes, ContentType: "application/json", IfNoneMatch: ifNoneMatch }),
    );
    // Both hashed here, from the bytes sent (not the state's own checksum field, which a caller could have set apart from them).
    this.written.set(objectKey, { md5: createHash("md5").update(state.bytes).digest("hex"), sha256: sha256Of(state.bytes).hex });
    if (this.written.size > WRITTEN_KEPT) this.written.delete(this.written.keys().next().value!);
  }

  async write(key: string, state: StoredState): Promise<void> {
    await this.put(key, state);
  }

  /**
   * Whether the server refuses a second PUT with If-None-Match: * on one key, as S3 and R2 do (s3rver does not): asked
   * once per store, by writing a probe object twice and deleting it.
   */
  enforcesConditionalWrites(): Promise<boolean> {
    this.conditionalWrites ??= (async () => {
      const Key = `${this.prefix}${CONDITIONAL_WRITE_PROBE}${randomUUID()}`;
      const put = () => this.client.send(new PutObjectCommand({ Bucket: this.options.bucket, Key, Body: "{}", ContentType: "application/json", IfNoneMatch: "*" }));
      try {
        await put();
        return await put().then(
          () => false,
          (e) => (status(e) === 412 || status(e) === 409 ? true : Promise.reject(e)),
        );
      } finally {
        await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key })).catch(() => {});
      }
    })().catch((e) => {
      this.conditionalWrites = undefined; // asked again next time
      throw e;
    });
    return this.conditionalWrites;
  }

  async create(key: string, state: StoredState): Promise<boolean> {
    // Where the server ignores If-None-Match (s3rver), a state already there is refused by looking first (a HEAD);
    // where it honours it (S3, R2), the conditional write alone refuses it, and also one created since any check.
    if (!(await this.enforcesConditionalWrites())) {
      if (await this.head(this.objectKey(key))) return false;
    }
    try {
      await this.put(key, state, "*");
      return true;
    } catch (e) {
      if (status(e) === 412 || status(e) === 409) return false;
      throw e;
    }
  }

  async lockHolder(key: string): Promise<LockInfo | null> {
    const bytes = await this.getBytes(this.objectKey(key) + LOCK_SUFFIX);
    if (!bytes) return null;
    let json: unknown = {};
    try {
      json = JSON.parse(Buffer.from(bytes).toString("utf8"));
    } catch {
      // A lock file that is not JSON is still a lock: it is reported with empty fields.
    }
    const parsed = lockInfoSchema.partial().safeParse(json);
    const info = parsed.success ? parsed.data : {};
    return { ID: "", Path: "", Operation: "", Who: "", Version: "", Created: "", Info: "", ...info };
  }

  async lock(key: string, request: LockRequest): Promise<LockInfo> {
    const lockKey = this.objectKey(key) + LOCK_SUFFIX;
    // A lock file already there is refused without a write (and on servers that ignore If-None-Match,
    // such as s3rver, this is what keeps a later locker out; only the conditional write closes the race).
    const existing = await this.lockHolder(key);
    if (existing) throw new StateLockedError(existing);
    const info = lockInfoOf(request, `${this.options.bucket}/${this.objectKey(key)}`, whoAmI(), STORE_VERSION, randomUUID);
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.options.bucket,
          Key: lockKey,
          Body: JSON.stringify(info),
          ContentType: "application/json",
          IfNoneMatch: "*",
        }),
      );
    } catch (e) {
      // 412: another writer created the lock file first; 409: a conditional write on it is in flight.
      if (status(e) === 412 || status(e) === 409) {
        const holder = await this.lockHolder(key);
        throw new StateLockedError(holder ?? { ...info, ID: "", Who: "another writer", Info: "the lock file was created by another writer and removed before it could be read" });
      }
      throw e;
    }
    return info;
  }

  async unlock(key: string, id: string): Promise<void> {
    const holder = await this.lockHolder(key);
    if (!holder || holder.ID !== id) {
      throw new StateLockedError(holder ?? { ID: "", Path: this.objectKey(key), Operation: "", Who: "nobody (the state is not locked)", Version: "", Created: "", Info: `no lock to release under ID ${id}` });
    }
    await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: this.objectKey(key) + LOCK_SUFFIX }));
  }

  async forceUnlock(key: string): Promise<LockInfo | null> {
    const holder = await this.lockHolder(key);
    if (holder) await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: this.objectKey(key) + LOCK_SUFFIX }));
    return holder;
  }

  async list(prefix = ""): Promise<StateObjectInfo[]> {
    const found: StateObjectInfo[] = [];
    let token: string | undefined;
    do {
      const out = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.options.bucket, Prefix: this.objectKey(prefix), ContinuationToken: token }),
      );
      for (const o of out.Contents ?? []) {
        if (!o.Key || o.Key.endsWith(LOCK_SUFFIX)) continue;
        found.push({ key: o.Key.slice(this.prefix.length), size: o.Size ?? 0 });
      }
      token = out.IsTruncated ? out.NextContinuationToken : undefined;
    } while (token);
    return found;
  }

  async delete(key: string): Promise<void> {
    // S3 answers success for a missing key, so deleting nothing is not an error.
    this.written.delete(this.objectKey(key));
    await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: this.objectKey(key) }));
    await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: this.objectKey(key) + LOCK_SUFFIX }));
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}

export type S3Store = StateStore & { readonly client: S3Client; enforcesConditionalWrites(): Promise<boolean>; close(): Promise<void> };

/** A store of kind `s3` (AWS, or any S3-compatible server at `endpoint`). */
export function openS3Store(options: S3StoreOptions): S3Store {
  return new S3StateStore("s3", options);
}

/** A store of kind `r2`: Cloudflare R2 is S3 with an account endpoint and region "auto". */
export function openR2Store({ accountId, endpoint, ...options }: R2StoreOptions): S3Store {
  return new S3StateStore("r2", { ...options, region: "auto", endpoint: endpoint ?? `https://${accountId}.r2.cloudflarestorage.com` });
}
