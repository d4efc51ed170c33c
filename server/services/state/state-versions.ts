// State versions of a component's Planton-managed state: the history every write appends to, a
// resource-level diff between two versions (sensitive values masked), and an admin's rollback.
import { and, desc, eq, inArray } from "drizzle-orm";
import type { Database, Queryable } from "@/db/client";
import { environments, infraComponents, infraJobs, stateBackends, stateObjects, stateVersions } from "@/db/schema";
import { newId } from "@/lib/ids";
import { roleAllows } from "@/lib/roles";
import { SENSITIVE_VALUE } from "@/lib/secrets";
import { stateDigest } from "@/lib/state-delta";
import { atSerial } from "@/state-backends/rules";
import type { Actor } from "../../actor";
import { recordAudit } from "../../audit";
import { conflict, forbidden, notFound, PlantonError } from "../../errors";
import { notifyQueue } from "../jobs/transitions";
import { isSensitiveAttribute, stateContents, type StateInstance } from "./component-state";

type StateRow = typeof stateObjects.$inferSelect;

type ContentWrite = { state: unknown; serial: number; lineage: string; checksum: string; size: number; jobId?: string | null; attemptId?: string | null; actorLabel?: string | null; restoredFrom?: string | null };

/**
 * Writes a component's Planton-managed state in the caller's transaction (the state row locked): the content kept
 * as a version, then the row set to it with its checksum and size. Every write of the content goes through here.
 */
export async function writeStateContent(tx: Queryable, row: StateRow, write: ContentWrite): Promise<void> {
  await appendStateVersion(tx, row, write);
  await tx
    .update(stateObjects)
    .set({ state: write.state, serial: write.serial, lineage: write.lineage, checksum: write.checksum, size: write.size, updatedAt: new Date() })
    .where(eq(stateObjects.id, row.id));
}

/**
 * Appends the content being written as a version, in the write's transaction (the state row locked).
 * A content written before versions were kept is appended first, so the write never loses what it replaces;
 * a write of the same checksum as the stored one adds nothing.
 */
async function appendStateVersion(tx: Queryable, row: StateRow, write: ContentWrite): Promise<void> {
  if (row.checksum === write.checksum) return;
  const [latest] = await tx.select({ checksum: stateVersions.checksum }).from(stateVersions).where(eq(stateVersions.componentId, row.componentId)).orderBy(desc(stateVersions.id)).limit(1);
  if (row.state != null && row.checksum && latest?.checksum !== row.checksum) {
    await tx.insert(stateVersions).values({
      id: newId("stateVersion"),
      orgId: row.orgId,
      componentId: row.componentId,
      serial: row.serial ?? 0,
      lineage: row.lineage ?? "",
      checksum: row.checksum,
      size: row.size ?? stateDigest(row.state).size,
      state: row.state,
    });
  }
  await tx.insert(stateVersions).values({
    id: newId("stateVersion"),
    orgId: row.orgId,
    componentId: row.componentId,
    serial: write.serial,
    lineage: write.lineage,
    checksum: write.checksum,
    size: write.size,
    state: write.state,
    jobId: write.jobId ?? null,
    attemptId: write.attemptId ?? null,
    actorLabel: write.actorLabel ?? null,
    restoredFrom: write.restoredFrom ?? null,
  });
}

async function componentOf(db: Queryable, orgId: string, componentId: string) {
  const [component] = await db
    .select({ id: infraComponents.id, name: infraComponents.name, environment: environments.name })
    .from(infraComponents)
    .innerJoin(environments, eq(environments.id, infraComponents.environmentId))
    .where(and(eq(infraComponents.orgId, orgId), eq(infraComponents.id, componentId)));
  if (!component) throw notFound(`Infra Component ${componentId}`, "Check the id, or find it in the Infra Components list.");
  return component;
}

/** A component's state versions, newest first; the content itself is not included. */
export async function listStateVersions(db: Queryable, actor: Actor, input: { componentId: string }) {
  await componentOf(db, actor.orgId, input.componentId);
  const [current] = await db.select({ checksum: stateObjects.checksum }).from(stateObjects).where(eq(stateObjects.componentId, input.componentId));
  const rows = await db
    .select({
      id: stateVersions.id,
      serial: stateVersions.serial,
      lineage: stateVersions.lineage,
      checksum: stateVersions.checksum,
      size: stateVersions.size,
      jobId: stateVersions.jobId,
      attemptId: stateVersions.attemptId,
      actorLabel: stateVersions.actorLabel,
      restoredFrom: stateVersions.restoredFrom,
      createdAt: stateVersions.createdAt,
    })
    .from(stateVersions)
    .where(and(eq(stateVersions.orgId, actor.orgId), eq(stateVersions.componentId, input.componentId)))
    .orderBy(desc(stateVersions.id));
  const currentId = rows.find((r) => r.checksum === current?.checksum)?.id ?? null;
  return rows.map((r) => ({ ...r, current: r.id === currentId }));
}

async function versionOf(db: Queryable, actor: Actor, componentId: string, id: string) {
  const [v] = await db
    .select()
    .from(stateVersions)
    .where(and(eq(stateVersions.orgId, actor.orgId), eq(stateVersions.componentId, componentId), eq(stateVersions.id, id)));
  if (!v) throw notFound(`State version ${id} of Infra Component ${componentId}`, "Pick a version from the component's State tab (Versions).");
  return v;
}

/** Each resource instance of a state by address (module.x.type.name[key], as OpenTofu names them; a Pulumi resource's URN). */
function instancesByAddress(doc: unknown): Map<string, StateInstance> {
  const out = new Map<string, StateInstance>();
  for (const r of stateContents(doc).resources) {
    for (const i of r.instances) out.set(i.index_key === undefined ? r.address : `${r.address}[${JSON.stringify(i.index_key)}]`, i);
  }
  return out;
}

const shown = (i: StateInstance, name: string) => (isSensitiveAttribute(i, name) ? SENSITIVE_VALUE : (i.attributes?.[name] ?? null));

export interface AttributeChange {
  name: string;
  sensitive: boolean;
  from: unknown;
  to: unknown;
}

/** Resources added, removed and changed from one version to another; a sensitive attribute's values are never included. */
export async function diffStateVersions(db: Queryable, actor: Actor, input: { componentId: string; fromId: string; toId: string }) {
  await componentOf(db, actor.orgId, input.componentId);
  const from = await versionOf(db, actor, input.componentId, input.fromId);
  const to = await versionOf(db, actor, input.componentId, input.toId);
  const a = instancesByAddress(from.state);
  const b = instancesByAddress(to.state);
  const added = [...b.keys()].filter((k) => !a.has(k)).sort();
  const removed = [...a.keys()].filter((k) => !b.has(k)).sort();
  const changed: { address: string; attributes: AttributeChange[] }[] = [];
  for (const [address, before] of a) {
    const after = b.get(address);
    if (!after) continue;
    const names = new Set([...Object.keys(before.attributes ?? {}), ...Object.keys(after.attributes ?? {})]);
    const attributes: AttributeChange[] = [];
    for (const name of [...names].sort()) {
      if (JSON.stringify(before.attributes?.[name]) === JSON.stringify(after.attributes?.[name])) continue;
      // Marked sensitive on either side: both values are masked.
      const sensitive = isSensitiveAttribute(before, name) || isSensitiveAttribute(after, name);
      attributes.push({ name, sensitive, from: sensitive ? SENSITIVE_VALUE : shown(before, name), to: sensitive ? SENSITIVE_VALUE : shown(after, name) });
    }
    if (attributes.length) changed.push({ address, attributes });
  }
  changed.sort((x, y) => x.address.localeCompare(y.address));
  const summary = (v: typeof from) => ({ id: v.id, serial: v.serial, lineage: v.lineage, checksum: v.checksum, createdAt: v.createdAt });
  return { from: summary(from), to: summary(to), added, removed, changed };
}

const ROLLBACK_ROLE = "admin";
/** A job of the component holds its state while it runs, or while paused mid-run for an approval. */
const midRun = (j: { status: string; startedAt: Date | null }) => j.status === "running" || (j.status === "awaiting_approval" && j.startedAt != null);

/**
 * Rolls a component's state back to one of its versions: writes that content as a new version at the
 * current serial + 1 (the serial never moves back), recorded. One transaction holds the state row and the
 * component's queued jobs `for update`, so no claim interleaves: those jobs wait until it commits.
 */
export async function rollbackStateVersion(db: Database, actor: Actor, input: { componentId: string; versionId: string }) {
  if (!roleAllows(actor.role, ROLLBACK_ROLE)) {
    throw forbidden(`Nothing was rolled back: rolling back a state needs the ${ROLLBACK_ROLE} role, and you are ${actor.role === "engineer" ? "an" : "a"} ${actor.role}. Ask an admin to roll it back, or to change your role in Settings → Members.`);
  }
  return db.transaction(async (tx) => {
    const component = await componentOf(tx, actor.orgId, input.componentId);
    // Jobs first, then the state row: the order every runner state call locks in, so none deadlocks with this.
    // Locks the component's live jobs: a claim skips them (SKIP LOCKED), and one being claimed now is waited for.
    const jobs = await tx
      .select({ id: infraJobs.id, status: infraJobs.status, startedAt: infraJobs.startedAt })
      .from(infraJobs)
      .where(and(eq(infraJobs.componentId, component.id), inArray(infraJobs.status, ["queued", "running", "awaiting_approval"])))
      .orderBy(infraJobs.createdAt, infraJobs.id)
      .for("update");
    const [row] = await tx.select().from(stateObjects).where(eq(stateObjects.componentId, component.id)).for("update");
    if (!row || row.state == null) {
      throw new PlantonError("PRECONDITION_FAILED", `Nothing was rolled back: Infra Component ${component.name} has no Planton-managed state yet. Run a job of it first.`);
    }
    const running = jobs.find(midRun);
    if (running) {
      throw conflict(`Nothing was rolled back: Infra Job ${running.id} of ${component.name} is running and holds its state. Wait for it to finish, or cancel it (planton infra job cancel ${running.id}), then roll back again.`);
    }
    if (row.lockInfo) {
      const held = `Nothing was rolled back: the state of ${component.name} is locked (lock ID ${row.lockInfo.ID})`;
      throw conflict(
        row.lockedByJob
          ? `${held} by Infra Job ${row.lockedByJob} for ${row.lockInfo.Operation}. Wait for it to finish (it releases the lock), or cancel it (planton infra job cancel ${row.lockedByJob}), then roll back again.`
          : `${held} by ${row.lockInfo.Who} for ${row.lockInfo.Operation}. Ask ${row.lockInfo.Who} to finish and unlock it (tofu force-unlock ${row.lockInfo.ID}), then roll back again.`,
      );
    }
    if (row.movedToBackendId) {
      const [to] = await tx.select({ name: stateBackends.name }).from(stateBackends).where(eq(stateBackends.id, row.movedToBackendId));
      throw conflict(
        `Nothing was rolled back: the state of ${component.name} was moved to ${to?.name ?? "another backend"}, and lives there now; the versions kept on Planton-managed storage are for the move's rollback. ` +
          `Roll the move back first (Settings → State Backends, the move's result), then roll back to this version.`,
      );
    }
    const target = await versionOf(tx, actor, component.id, input.versionId);
    if (row.lineage && target.lineage !== row.lineage) {
      throw conflict(`Nothing was rolled back: version ${target.id} has lineage ${target.lineage}, and the current state's is ${row.lineage}; they are different states. Pick a version of lineage ${row.lineage}.`);
    }
    const serial = (row.serial ?? 0) + 1;
    const state = atSerial(target.state as object, serial);
    const { checksum, size } = stateDigest(state);
    await writeStateContent(tx, row, { state, serial, lineage: target.lineage, checksum, size, actorLabel: actor.label, restoredFrom: target.id });
    await recordAudit(tx, actor, {
      action: "state.rollback",
      targetId: component.id,
      targetName: component.name,
      environment: component.environment,
      summary: `Rolled back the state of ${component.name} to version ${target.id} (serial ${target.serial}), written as serial ${serial}`,
      changes: { versionId: target.id, fromSerial: row.serial, toSerial: serial, restoredSerial: target.serial, checksum },
    });
    // The component's queued jobs were held by this transaction; runners may claim them once it commits.
    if (jobs.length) await notifyQueue(tx, actor.orgId);
    return { componentId: component.id, serial, checksum, restoredFrom: target.id, restoredSerial: target.serial };
  });
}
