// OpenTofu's state lock as every side speaks it: the lock info, field for field, and the
// "Error acquiring the state lock" text a second locker gets, with the holder and what to do.

import { z } from "zod";

const field = z.string().max(1000);

/** OpenTofu's lock info, field for field (what a lock request may send, every field optional). */
export const lockInfoSchema = z.object({ ID: field, Path: field, Operation: field, Who: field, Version: field, Created: field, Info: field });
export type LockInfo = z.infer<typeof lockInfoSchema>;
export const lockRequest = lockInfoSchema.partial();

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

