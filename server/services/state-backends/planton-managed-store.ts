// Planton-managed state as a StateStore: one state_objects row per component (its OpenTofu v4 JSON
// and lock), with every content kept in state_versions. Jobs reach it through the runner API
// (server/services/runners/state.ts); moves, rollbacks and force-unlock through this store.
import { randomUUID } from "node:crypto";
import { and, eq, isNotNull, isNull, like, sql } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { stateObjects } from "@/db/schema";
import { canonicalJson } from "@/lib/canonical-json";
import { newId } from "@/lib/ids";
import type { LockInfo } from "@/lib/state-lock";
import { lockInfoOf, StateLockedError, storedStateOfParsed } from "@/state-backends/rules";
import { STORE_VERSION, whoAmI } from "@/state-backends/store-common";
import type { LockRequest, StateObjectInfo, StateStore, StoredState } from "@/state-backends/types";
import { stateDigest } from "@/lib/state-delta";
import { writeStateContent } from "../state/state-versions";

const KEY = /^planton-managed\/([^/]+)\/([^/]+)\/terraform\.tfstate$/;

/** The key of a component's Planton-managed state. */
export function plantonManagedKey(orgId: string, componentId: string): string {
  return `planton-managed/${orgId}/${componentId}/terraform.tfstate`;
}

const utf8 = new TextEncoder();

/** The bytes a Planton-managed state is read as: its canonical JSON, whose SHA-256 is the checksum the row keeps. */
export function plantonStateBytes(state: unknown): Uint8Array {
  return utf8.encode(canonicalJson(state));
}

/**
 * A Planton-managed state's size in bytes as a read answers it: kept on its row with each write; a row not written
 * since (migration 0024) is estimated from its document's jsonb text (evaluated only then).
 */
export const plantonStateSize = sql<number>`coalesce(${stateObjects.size}, octet_length(${stateObjects.state}::text))`;

/** A Planton-managed state (the row's jsonb, as the driver parsed it) as the store reads it: its canonical JSON's bytes, identity read from the document itself. */
export function plantonStoredState(state: unknown): StoredState {
  return storedStateOfParsed(state, plantonStateBytes(state));
}

export class PlantonManagedStore implements StateStore {
  readonly kind = "planton_managed" as const;

  constructor(
    private readonly db: Queryable,
    private readonly orgId: string,
    /** Who writes through this store (kept on the versions it appends). */
    private readonly actorLabel: string | null = null,
  ) {}

  private componentOf(key: string): string {
    const m = KEY.exec(key);
    if (!m || m[1] !== this.orgId) throw new Error(`Nothing was done under ${key}: Planton-managed keys are planton-managed/<organization>/<component>/terraform.tfstate, in this organization.`);
    return m[2];
  }

  private where(key: string) {
    return and(eq(stateObjects.orgId, this.orgId), eq(stateObjects.key, key));
  }

  private async row(key: string) {
    const [row] = await this.db.select().from(stateObjects).where(this.where(key));
    return row ?? null;
  }

  /** The row for `key`, created empty when the component has none yet. */
  private async ensureRow(key: string, backendId: string | null) {
    const componentId = this.componentOf(key);
    const existing = await this.row(key);
    if (existing) return existing;
    await this.db
      .insert(stateObjects)
      .values({ id: newId("stateObject"), orgId: this.orgId, componentId, backendId: backendId ?? "", key })
      .onConflictDoNothing();
    return (await this.row(key))!;
  }

  async read(key: string): Promise<StoredState | null> {
    this.componentOf(key);
    const row = await this.row(key);
    if (!row || row.state == null) return null;
    return plantonStoredState(row.state);
  }

  async write(key: string, state: StoredState): Promise<void> {
    const row = await this.ensureRow(key, null);
    const doc = JSON.parse(Buffer.from(state.bytes).toString("utf8")) as unknown;
    const { checksum, size } = stateDigest(doc);
    await writeStateContent(this.db, row, { state: doc, serial: state.serial, lineage: state.lineage, checksum, size, actorLabel: this.actorLabel });
  }

  async lock(key: string, request: LockRequest): Promise<LockInfo> {
    await this.ensureRow(key, null);
    const info = lockInfoOf(request, key, whoAmI(), STORE_VERSION, randomUUID);
    // One conditional update takes the lock: two lockers cannot both see it free.
    const [taken] = await this.db
      .update(stateObjects)
      .set({ lockInfo: info, lockedByJob: null, updatedAt: new Date() })
      .where(and(this.where(key), isNull(stateObjects.lockInfo)))
      .returning({ id: stateObjects.id });
    if (taken) return info;
    const holder = await this.lockHolder(key);
    if (holder) throw new StateLockedError(holder);
    return this.lock(key, request);
  }

  async unlock(key: string, id: string): Promise<void> {
    const [released] = await this.db
      .update(stateObjects)
      .set({ lockInfo: null, lockedByJob: null, updatedAt: new Date() })
      .where(and(this.where(key), sql`${stateObjects.lockInfo}->>'ID' = ${id}`))
      .returning({ id: stateObjects.id });
    if (released) return;
    const holder = await this.lockHolder(key);
    if (holder) throw new StateLockedError(holder);
    throw new Error(`Nothing was unlocked: ${key} is not locked.`);
  }

  async lockHolder(key: string): Promise<LockInfo | null> {
    return (await this.row(key))?.lockInfo ?? null;
  }

  async forceUnlock(key: string): Promise<LockInfo | null> {
    const holder = await this.lockHolder(key);
    if (!holder) return null;
    await this.db.update(stateObjects).set({ lockInfo: null, lockedByJob: null, updatedAt: new Date() }).where(this.where(key));
    return holder;
  }

  async list(prefix = ""): Promise<StateObjectInfo[]> {
    const rows = await this.db
      .select({ key: stateObjects.key, size: plantonStateSize })
      .from(stateObjects)
      .where(and(eq(stateObjects.orgId, this.orgId), isNotNull(stateObjects.state), like(stateObjects.key, `${prefix.replace(/[\\%_]/g, "\\$&")}%`)));
    return rows.map((r) => ({ key: r.key, size: Number(r.size) }));
  }

  async delete(key: string): Promise<void> {
    this.componentOf(key);
    await this.db.delete(stateObjects).where(this.where(key));
  }
}
