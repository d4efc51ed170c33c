// Who takes a lock when the request does not say: the lock info fields a kind fills in itself.
import os from "node:os";

/** Version written to lock info when the request names none (the runner and engine send their own). */
export const STORE_VERSION = "planton-state-backends/1";

/** `user@host`, as OpenTofu writes Who. */
export function whoAmI(): string {
  let user = "unknown";
  try {
    user = os.userInfo().username;
  } catch {
    // no passwd entry (containers): keep "unknown"
  }
  return `${user}@${os.hostname()}`;
}
