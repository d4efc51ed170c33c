// The rules every state write obeys, whatever the kind, defined once (iac-engine.md's state guarantees):
// the serial never moves backwards; an equal serial is accepted only with an equal checksum; the
// lineage never changes; a writer must hold the lock. A second locker gets OpenTofu's "Error acquiring
// the state lock" with the holder's lock info and the fix.
import { sha256Of } from "../lib/artifacts";
import { formatLockError, type LockInfo } from "../lib/state-lock";
import type { LockRequest, StateStore, StoredState } from "./types";

/** The lock on a key is held by someone else. */
export class StateLockedError extends Error {
  constructor(readonly holder: LockInfo) {
    super(formatLockError(holder));
    this.name = "StateLockedError";
  }
}

/** A write the rules refuse: what was refused, why, and the fix; nothing was written. */
export class StateWriteRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StateWriteRefused";
  }
}

/** A Pulumi checkpoint (`{version: 3, checkpoint: {stack, latest: {manifest: {time}, resources}}}`), as Pulumi's backends keep a stack. */
export interface PulumiCheckpoint {
  version: 3;
  checkpoint: { stack?: unknown; latest?: ({ manifest?: { time?: unknown }; resources?: unknown } & Record<string, unknown>) | null };
}

export function isPulumiCheckpoint(parsed: unknown): parsed is PulumiCheckpoint {
  const p = parsed as { version?: unknown; checkpoint?: unknown } | null;
  return !!p && p.version === 3 && typeof p.checkpoint === "object" && p.checkpoint !== null && !Array.isArray(p.checkpoint);
}

/**
 * A Pulumi checkpoint has no serial or lineage of its own. Its serial is the time of its deployment
 * (`latest.manifest.time`, which every Pulumi update stamps anew) in milliseconds, 0 before the first
 * deployment; its lineage is the stack it belongs to (`checkpoint.stack`), "pulumi" when it names none.
 */
export function pulumiIdentity(parsed: PulumiCheckpoint): { serial: number; lineage: string } {
  const { stack, latest } = parsed.checkpoint;
  const time = typeof latest?.manifest?.time === "string" ? latest.manifest.time : "";
  // Pulumi writes nanoseconds (RFC 3339 Nano); milliseconds are what Date keeps.
  const ms = time ? Date.parse(time.replace(/(\.\d{3})\d+/, "$1")) : 0;
  return { serial: Number.isFinite(ms) && ms > 0 ? ms : 0, lineage: typeof stack === "string" && stack ? stack : "pulumi" };
}

export const NO_STATE_IDENTITY =
  "Nothing was written: the state has no whole-number serial and non-empty lineage. Write an OpenTofu v4 state (or a Pulumi checkpoint, version 3).";

/** The identity a parsed state carries — OpenTofu v4's serial and lineage, or a Pulumi checkpoint's (pulumiIdentity) — or null when it has none. */
export function stateIdentity(parsed: unknown): { serial: number; lineage: string } | null {
  if (isPulumiCheckpoint(parsed)) return pulumiIdentity(parsed);
  const p = (parsed ?? {}) as { serial?: unknown; lineage?: unknown };
  if (typeof p.serial !== "number" || !Number.isInteger(p.serial) || p.serial < 0 || typeof p.lineage !== "string" || !p.lineage) return null;
  return { serial: p.serial, lineage: p.lineage };
}

/** The same state at another serial: OpenTofu's `serial` field, or a Pulumi checkpoint's deployment time (its serial, in milliseconds). */
export function atSerial(parsed: object, serial: number): object {
  if (!isPulumiCheckpoint(parsed)) return { ...parsed, serial };
  const latest = parsed.checkpoint.latest ?? {};
  return { ...parsed, checkpoint: { ...parsed.checkpoint, latest: { ...latest, manifest: { ...(latest.manifest ?? {}), time: new Date(serial).toISOString() } } } };
}

/** A state as bytes with its identity, from the bytes alone (OpenTofu v4 JSON carries serial and lineage; a Pulumi checkpoint, see pulumiIdentity). */
export function storedStateOf(bytes: Uint8Array): StoredState {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(bytes).toString("utf8"));
  } catch {
    throw new StateWriteRefused("Nothing was written: the state is not JSON. Write an OpenTofu v4 state (a JSON object with serial and lineage).");
  }
  return storedStateOfParsed(parsed, bytes);
}

/**
 * The same answer as storedStateOf(bytes) when `parsed` is what the bytes parse to (a document already parsed
 * elsewhere, e.g. Postgres's jsonb, whose canonical JSON the bytes are): the identity is read from it, not parsed again.
 */
export function storedStateOfParsed(parsed: unknown, bytes: Uint8Array): StoredState {
  const identity = stateIdentity(parsed);
  if (!identity) throw new StateWriteRefused(NO_STATE_IDENTITY);
  return { bytes, ...identity, checksum: sha256Of(bytes).hex };
}

/**
 * The SHA-256 of what is stored under `key` (a read's `checksum`), or null when nothing is: through the store's own
 * `checksum` where it has one (the bytes are hashed, not parsed as a state), else through `read`.
 */
export async function storedChecksum(store: StateStore, key: string): Promise<string | null> {
  return store.checksum ? store.checksum(key) : ((await store.read(key))?.checksum ?? null);
}

/** What the write rules compare: a state's serial, lineage and checksum. */
export type StateIdentity = Pick<StoredState, "serial" | "lineage" | "checksum">;

/** Why `next` may not replace `current`, or null when it may. */
export function writeRefusal(key: string, current: StateIdentity | null, next: StateIdentity): string | null {
  if (!current) return null;
  if (next.lineage !== current.lineage) {
    return `Nothing was written to ${key}: the state's lineage ${next.lineage} is not the stored state's ${current.lineage}, so it is another state, not a newer version of this one. Pull the stored state and apply again, or write it under another key.`;
  }
  if (next.serial < current.serial) {
    return `Nothing was written to ${key}: its serial ${next.serial} is older than the stored state's ${current.serial}. Pull the stored state (a newer run wrote it) and apply again.`;
  }
  if (next.serial === current.serial && next.checksum !== current.checksum) {
    return `Nothing was written to ${key}: it has the stored state's serial ${current.serial} but different content. A changed state needs a higher serial; pull the stored state and apply again.`;
  }
  return null;
}

/** A backend: a kind's store with the rules applied. */
export class StateBackend {
  constructor(readonly store: StateStore) {}

  read(key: string): Promise<StoredState | null> {
    return this.store.read(key);
  }

  /** Writes under the lock `lockId` holds, after the rules. Answers what is stored now. */
  async write(key: string, bytes: Uint8Array, lockId: string): Promise<StoredState> {
    const holder = await this.store.lockHolder(key);
    if (!holder || holder.ID !== lockId) {
      throw new StateWriteRefused(
        holder
          ? `Nothing was written to ${key}: the state is locked by ${holder.Who} (lock ${holder.ID}), not by this writer's lock ${lockId}.\n\n${formatLockError(holder)}`
          : `Nothing was written to ${key}: the writer does not hold its lock. Lock the state first, then write.`,
      );
    }
    const next = storedStateOf(bytes);
    const refusal = writeRefusal(key, await this.store.read(key), next);
    if (refusal) throw new StateWriteRefused(refusal);
    await this.store.write(key, next);
    return next;
  }

  lock(key: string, request: LockRequest): Promise<LockInfo> {
    return this.store.lock(key, request);
  }

  unlock(key: string, id: string): Promise<void> {
    return this.store.unlock(key, id);
  }

  forceUnlock(key: string): Promise<LockInfo | null> {
    return this.store.forceUnlock(key);
  }

  list(prefix?: string) {
    return this.store.list(prefix);
  }

  delete(key: string): Promise<void> {
    return this.store.delete(key);
  }

  checksum(key: string): Promise<string | null> {
    return storedChecksum(this.store, key);
  }
}

/** Fills a lock request into OpenTofu's full lock info. */
export function lockInfoOf(request: LockRequest, path: string, who: string, version: string, newId: () => string): LockInfo {
  return {
    ID: request.ID || newId(),
    Path: request.Path || path,
    Operation: request.Operation,
    Who: request.Who || who,
    Version: request.Version || version,
    Created: request.Created || new Date().toISOString(),
    Info: request.Info ?? "",
  };
}
