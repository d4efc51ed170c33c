// A state backend: where an Infra Component's state lives, one interface with one file per kind
// (issue 10). The server (Planton-managed state, the move off it, the access test) and runners (a
// self-hosted runner's own backend) use the same kinds. Imports nothing of the project but lib/.
import type { LockInfo } from "../lib/state-lock";
import type { StateBackendKind as BackendKind } from "../lib/state-backend-kinds";

export type { LockInfo };

/** One stored state: OpenTofu v4 JSON (or Pulumi's checkpoint) as bytes, with its identity. */
export interface StoredState {
  bytes: Uint8Array;
  serial: number;
  lineage: string;
  /** SHA-256 hex of `bytes`. */
  checksum: string;
}

export interface StateObjectInfo {
  key: string;
  size: number;
}

/** What a lock request may say; the backend fills in the rest (ID, Who, Version, Created, Path). */
export type LockRequest = Partial<LockInfo> & { Operation: string };

/**
 * The raw store of one kind. Implementations keep bytes under keys and a lock per key; the rules
 * every write obeys (serial, lineage, checksum) are applied once, above them, by `StateBackend`
 * (rules.ts), so no kind can disagree.
 */
export interface StateStore {
  readonly kind: BackendKind;
  /** The state under `key`, or null when there is none. */
  read(key: string): Promise<StoredState | null>;
  /**
   * The SHA-256 hex of the bytes under `key` (what `read` answers as `checksum`), or null when there are none, without
   * reading them as a state. Optional: without it, `read` answers it (rules.ts `storedChecksum`). The move's read-back uses it.
   */
  checksum?(key: string): Promise<string | null>;
  /** Replaces the state under `key` (the rules were checked already, under the lock). */
  write(key: string, state: StoredState): Promise<void>;
  /**
   * Writes the state under `key` only when there is none, atomically where the service can (a conditional
   * create); answers false, writing nothing, when one is there. Optional: a store without it is written under its lock.
   */
  create?(key: string, state: StoredState): Promise<boolean>;
  /** Takes the lock on `key`, or throws StateLockedError (rules.ts) naming the holder. */
  lock(key: string, request: LockRequest): Promise<LockInfo>;
  /** Releases the lock with this ID; releasing a lock held under another ID throws StateLockedError, and one that is not held throws an Error saying so. */
  unlock(key: string, id: string): Promise<void>;
  /** The current holder of the lock on `key`, or null. */
  lockHolder(key: string): Promise<LockInfo | null>;
  /** Releases the lock whatever its ID (an admin's force-unlock); answers the holder it removed, or null. */
  forceUnlock(key: string): Promise<LockInfo | null>;
  /** Every state key under `prefix`, with its size. */
  list(prefix?: string): Promise<StateObjectInfo[]>;
  /** Deletes the state (and any lock) under `key`; deleting nothing is not an error. */
  delete(key: string): Promise<void>;
  /** Closes connections the store holds. */
  close?(): Promise<void>;
}

export { STATE_BACKEND_KIND_NAMES as BACKEND_KINDS, type StateBackendKind as BackendKind } from "../lib/state-backend-kinds";
