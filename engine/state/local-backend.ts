import { randomUUID } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { LockInfo, StateBackend, StateV4 } from "../types";
import { EngineError } from "../errors";
import { assertStateV4 } from "./state";
import { StateLockedError, whoAmI } from "./backend";
import { ENGINE_VERSION } from "../version";

/**
 * State in a file (terraform.tfstate layout), locked by an exclusively created
 * `<file>.lock.info` holding OpenTofu's lock info.
 */
export class LocalStateBackend implements StateBackend {
  readonly lockPath: string;

  constructor(readonly statePath: string) {
    this.lockPath = `${statePath}.lock.info`;
  }

  async lock(req: Partial<LockInfo> & { Operation: string }): Promise<LockInfo> {
    const info: LockInfo = {
      ID: req.ID ?? randomUUID(),
      Path: req.Path ?? this.statePath,
      Operation: req.Operation,
      Who: req.Who ?? whoAmI(),
      Version: req.Version ?? ENGINE_VERSION,
      Created: req.Created ?? new Date().toISOString(),
      Info: req.Info ?? "",
    };
    await mkdir(path.dirname(this.lockPath), { recursive: true });
    try {
      await writeFile(this.lockPath, JSON.stringify(info), { flag: "wx" });
      return info;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    const holder = JSON.parse(await readFile(this.lockPath, "utf8")) as LockInfo;
    throw new StateLockedError(holder);
  }

  async unlock(id: string): Promise<void> {
    let holder: LockInfo;
    try {
      holder = JSON.parse(await readFile(this.lockPath, "utf8")) as LockInfo;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") throw new EngineError(`Error releasing the state lock: the state at ${this.statePath} is not locked`);
      throw e;
    }
    if (holder.ID !== id) {
      throw new EngineError(`Error releasing the state lock: lock ID "${id}" does not match the existing lock ID "${holder.ID}" (held by ${holder.Who} for ${holder.Operation})`);
    }
    await rm(this.lockPath, { force: true });
  }

  async get(): Promise<StateV4 | null> {
    let text: string;
    try {
      text = await readFile(this.statePath, "utf8");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw e;
    }
    const parsed: unknown = JSON.parse(text);
    assertStateV4(parsed);
    return parsed;
  }

  async put(state: StateV4): Promise<void> {
    assertStateV4(state);
    await mkdir(path.dirname(this.statePath), { recursive: true });
    const tmp = `${this.statePath}.${process.pid}.${randomUUID()}.tmp`;
    // State holds sensitive values: readable by its owner only, written to a fresh name (no link followed).
    await writeFile(tmp, JSON.stringify(state, null, 2) + "\n", { mode: 0o600, flag: "wx" });
    await rename(tmp, this.statePath);
  }
}
