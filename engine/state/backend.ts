import { formatLockError, type LockInfo } from "../../lib/state-lock";
import { EngineError } from "../errors";

export { formatLockError };
export type { LockInfo, StateBackend } from "../types";

export class StateLockedError extends EngineError {
  readonly holder: LockInfo;
  constructor(holder: LockInfo) {
    super(formatLockError(holder));
    this.name = "StateLockedError";
    this.holder = holder;
  }
}

export { whoAmI } from "../../lib/who-am-i";
