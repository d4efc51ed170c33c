import os from "node:os";
import type { LockInfo } from "../types";
import { EngineError } from "../errors";

export type { LockInfo, StateBackend } from "../types";

/** OpenTofu's "Error acquiring the state lock" text, with the holder's lock info and what to do. */
export function formatLockError(info: LockInfo, reason = "state is locked"): string {
  return [
    "Error acquiring the state lock",
    "",
    `Error message: ${reason}`,
    "Lock Info:",
    `  ID:        ${info.ID}`,
    `  Path:      ${info.Path}`,
    `  Operation: ${info.Operation}`,
    `  Who:       ${info.Who}`,
    `  Version:   ${info.Version}`,
    `  Created:   ${info.Created}`,
    `  Info:      ${info.Info}`,
    "",
    "Planton acquires a state lock to protect the state from being written by multiple users at the " +
      "same time. Wait for the other job to finish, or if the holder was lost, release the lock " +
      `(lock ID ${info.ID}) from the component's state page, then run the job again.`,
  ].join("\n");
}

export class StateLockedError extends EngineError {
  readonly holder: LockInfo;
  constructor(holder: LockInfo) {
    super(formatLockError(holder));
    this.name = "StateLockedError";
    this.holder = holder;
  }
}

export function whoAmI(): string {
  let user = "unknown";
  try {
    user = os.userInfo().username;
  } catch {
    // no passwd entry (containers): keep "unknown"
  }
  return `${user}@${os.hostname()}`;
}
