// Who a lock names when the request does not say (OpenTofu's "user@host"), and the Version it records.
import os from "node:os";

export const LOCK_VERSION = "planton";

export function lockWho(): string {
  let user = process.env.USER ?? "unknown";
  try {
    user = os.userInfo().username;
  } catch {
    // A container user with no passwd entry: keep $USER.
  }
  return `${user}@${os.hostname()}`;
}
