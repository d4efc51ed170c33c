// Who takes a state lock when the request does not say: `user@host`, as OpenTofu writes Who.
// Server, runner and engine side only (it reads the OS user).
import os from "node:os";

export function whoAmI(): string {
  let user = process.env.USER ?? "unknown";
  try {
    user = os.userInfo().username;
  } catch {
    // no passwd entry (containers): keep $USER
  }
  return `${user}@${os.hostname()}`;
}
