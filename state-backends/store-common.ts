// What every kind's store does the same way: who takes a lock when the request does not say (lib/who-am-i.ts),
// and how stored bytes become a StoredState on read.
import { storedStateOf } from "./rules";
import type { StoredState } from "./types";

/** Version written to lock info when the request names none (the runner and engine send their own). */
export const STORE_VERSION = "planton-state-backends/1";

export { whoAmI } from "../lib/who-am-i";

/** The stored bytes under `key` as a state; bytes that are not one are reported as such, not as a refused write. */
export function storedStateRead(key: string, bytes: Uint8Array): StoredState {
  try {
    return storedStateOf(bytes);
  } catch {
    throw new Error(`The state under ${key} was not read: what is stored there is not an OpenTofu state (JSON with a serial and a lineage). Roll back to an earlier state version, or delete it and apply again.`);
  }
}
