// Moving states between backends: every state off Planton-managed storage (move_off_planton), or one
// component's state to another backend (migrate_backend). Each item walks pending → held → locked →
// copied → switched → done, each step committed before the next and safe to run again, so a move
// killed anywhere and resumed finishes with every state moved exactly once (an item whose only lock is
// its Planton-managed source's goes copied → done: switched and unlocked in one commit). Items run
// concurrently in chunks; a chunk's step is one commit for all its items (the throughput of bench/state-move.ts).
import { createHash } from "node:crypto";
import { and, asc, desc, eq, inArray, isNotNull, isNull, sql, type AnyColumn, type SQL } from "drizzle-orm";
import PQueue from "p-queue";
import { z } from "zod";
import { keyInSpace, MOVE_RUN_LOCK_SPACE } from "@/db/advisory-locks";
import { handleOf, rowsOf, type Database, type DatabaseHandle, type Queryable, type SessionLock } from "@/db/client";
import { environments, infraComponents, infraJobs, stateBackendDefaults, stateBackends, stateMoveItems, stateMoves, stateObjects } from "@/db/schema";
import { dryRunBody, firstOf, migrateBackendBody, moveOffBody, viewLimit, type moveItemSchema } from "@/lib/api/state-schemas";
import { MOVE_ITEMS_SHOWN, MOVE_STEPS_IN_FLIGHT, MOVE_STEPS_UNFINISHED, type MOVE_STEPS } from "@/lib/state-moves";
import { newId } from "@/lib/ids";
import { PROVISIONERS, STATE_BACKEND_KINDS, defaultStateKey, isStateBackendKind, PLANTON_MANAGED_KIND, type Provisioner } from "@/lib/state-backend-kinds";
import { StateLockedError, storedChecksum, writeRefusal } from "@/state-backends/rules";
import { STORE_VERSION } from "@/state-backends/store-common";
import type { StateStore, StoredState } from "@/state-backends/types";
import type { Actor } from "../../actor";
import { holdWhileArmed } from "@/engine/providers/test-gate";
import { recordAudit } from "../../audit";
import { badRequest, conflict, isUniqueViolation, notFound, PlantonError } from "../../errors";
import { subscribeChannel } from "../jobs/events";
import { JOB_QUEUED_CHANNEL, notifyQueue } from "../jobs/transitions";
import { accessErrorSentence, runAccessTest, type AccessCheck } from "./access-test";
import { openStore, type BackendRow } from "./open-store";
import { unmovedPlantonStates } from "./planton-managed-usage";
import { provisionersOf } from "./served";
import { plantonManagedKey, PlantonManagedStore, plantonStoredState } from "./planton-managed-store";

/** NOTIFY channel of move progress: payload `<orgId>:<moveId>`, sent with every committed step. */
export const STATE_MOVES_CHANNEL = "state_moves";
/** The lock operation a move's locks carry (shown to a job that finds the state locked). */
export const MOVE_LOCK_OPERATION = "OperationTypeStateMove";

type Step = (typeof MOVE_STEPS)[number];

/** The lock ID a move item's locks carry: a GUID derived from the item id (Azure lease IDs must be GUIDs), the same on every run. */
export function moveLockId(itemId: string): string {
  const h = createHash("sha256").update(itemId).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
type ItemRow = typeof stateMoveItems.$inferSelect;
type MoveRow = typeof stateMoves.$inferSelect;
type Scope = "move_off_planton" | "migrate_backend";

// ── Planning (dry run and start share it) ───────────────────────────────────────────────────────

interface Planned {
  componentId: string;
  component: string;
  environment: string;
  provisioner: Provisioner;
  from: BackendRow;
  to: BackendRow;
  fromKey: string;
  toKey: string;
  size: number;
  serial: number | null;
  checksum: string | null;
}

interface Plan {
  scope: Scope;
  items: Planned[];
  destinations: Record<string, BackendRow>;
}

async function backendByName(db: Queryable, orgId: string, name: string): Promise<BackendRow> {
  const [row] = await db.select().from(stateBackends).where(and(eq(stateBackends.orgId, orgId), eq(stateBackends.name, name)));
  if (!row) throw notFound(`Nothing was moved: the state backend ${name}`, "Create it first (planton infra state-backend create, or Settings → State Backends), or pick one from planton infra state-backend list.");
  return row;
}

async function plantonManagedBackend(db: Queryable, orgId: string): Promise<BackendRow> {
  const [row] = await db.select().from(stateBackends).where(and(eq(stateBackends.orgId, orgId), eq(stateBackends.kind, PLANTON_MANAGED_KIND)));
  if (!row) throw new PlantonError("PRECONDITION_FAILED", "Nothing was moved: this organization has no Planton-managed backend, so no state is kept there.");
  return row;
}

const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);

/** Refuses a destination for `provisioner`, with the fix; `source` is the backend the states are on now. */
async function checkDestination(db: Queryable, to: BackendRow, provisioner: Provisioner, source: BackendRow | null, tested: Map<string, AccessCheck>) {
  if (to.kind === PLANTON_MANAGED_KIND) {
    throw badRequest(`Nothing was moved: ${to.name} is the Planton-managed backend, where these states already are. Choose a backend of your own (planton infra state-backend list), or create one in Settings → State Backends.`, "to");
  }
  if (source && source.id === to.id) throw badRequest(`Nothing was moved: the state is already on ${to.name}. Choose another backend.`, "to");
  if (!isStateBackendKind(to.kind)) throw badRequest(`Nothing was moved: backend ${to.name} has the kind ${to.kind}, which this server does not know. Choose another backend.`, "to");
  const def = STATE_BACKEND_KINDS[to.kind];
  if (!(def.provisioners as readonly string[]).includes(provisioner)) {
    const fit = Object.entries(STATE_BACKEND_KINDS).filter(([k, d]) => k !== PLANTON_MANAGED_KIND && (d.provisioners as readonly string[]).includes(provisioner)).map(([, d]) => d.title);
    throw badRequest(`Nothing was moved: backend ${to.name} (${def.title}) keeps ${def.provisioners.join(", ")} state, not ${provisioner}. Choose a backend that keeps ${provisioner} state (${fit.join(", ")}).`, "to");
  }
  let access = tested.get(to.id);
  if (!access) tested.set(to.id, (access = await runAccessTest(db, to)));
  if (!access.ok) throw new PlantonError("PRECONDITION_FAILED", `Nothing was moved: ${lowerFirst(access.error!.replace(/\.$/, ""))}. Fix its connection or configuration in Settings → State Backends, then try again.`);
}

/** The `to` of a move-off: backend name per provisioner; "*" stands for the one provisioner in use. */
async function planMoveOff(db: Queryable, actor: Actor, raw: z.input<typeof moveOffBody>, exact: boolean): Promise<Plan> {
  const input = moveOffBody.parse(raw);
  const states = await unmovedPlantonStates(db, actor.orgId, exact);
  const source = await plantonManagedBackend(db, actor.orgId);
  const unresolved = states.find((s) => !s.provisioner);
  if (unresolved) {
    throw new PlantonError(
      "PRECONDITION_FAILED",
      `Nothing was moved: no IaC module is registered for ${unresolved.component}'s kind ${unresolved.kind}, so which provisioner its state belongs to is unknown. Register a module for ${unresolved.kind}, then try again.`,
    );
  }
  const inUse = [...new Set(states.map((s) => s.provisioner!))].sort();
  const to: Record<string, string> = { ...input.to };
  if ("*" in to) {
    if (inUse.length > 1) {
      throw badRequest(`Nothing was moved: states on Planton-managed storage belong to ${inUse.length} provisioners (${inUse.join(", ")}). Name a destination for each: ${inUse.map((p) => `--to ${p}=<backend>`).join(" ")}.`, "to");
    }
    const star = to["*"];
    delete to["*"];
    if (inUse[0] && !to[inUse[0]]) to[inUse[0]] = star;
  }
  for (const p of Object.keys(to)) {
    if (!(PROVISIONERS as readonly string[]).includes(p)) throw badRequest(`Nothing was moved: ${p} is not a provisioner. Use one of ${PROVISIONERS.join(", ")}.`, "to");
    if (!inUse.includes(p as Provisioner)) throw badRequest(`Nothing was moved: no state on Planton-managed storage belongs to the ${p} provisioner${inUse.length ? ` (in use: ${inUse.join(", ")})` : ""}. Leave out --to ${p}=….`, "to");
  }
  const missing = inUse.find((p) => !to[p]);
  if (missing) {
    const count = states.filter((s) => s.provisioner === missing).length;
    throw badRequest(`Nothing was moved: ${count} state${count === 1 ? "" : "s"} on Planton-managed storage belong to the ${missing} provisioner, and no destination was given for it. Add --to ${missing}=<backend>.`, "to");
  }
  const destinations: Record<string, BackendRow> = {};
  const tested = new Map<string, AccessCheck>();
  for (const p of inUse) {
    destinations[p] = await backendByName(db, actor.orgId, to[p]);
    await checkDestination(db, destinations[p], p, source, tested);
  }
  return {
    scope: "move_off_planton",
    destinations,
    items: states.map((s) => ({
      componentId: s.componentId,
      component: s.component,
      environment: s.environment,
      provisioner: s.provisioner!,
      from: source,
      to: destinations[s.provisioner!],
      fromKey: s.key,
      toKey: defaultStateKey(s.environment, s.component),
      size: s.size,
      serial: s.serial,
      checksum: s.checksum,
    })),
  };
}

export const migrateBackendInput = migrateBackendBody.extend({ componentId: z.string().min(1) });

/** The backend a component's state is on now, as preflight resolves it (its own, its provisioner's default, Planton-managed). */
async function currentBackend(db: Queryable, orgId: string, stateBackendId: string | null, provisioner: Provisioner | null): Promise<BackendRow> {
  if (stateBackendId) {
    const [row] = await db.select().from(stateBackends).where(and(eq(stateBackends.id, stateBackendId), eq(stateBackends.orgId, orgId)));
    if (row) return row;
  }
  if (provisioner) {
    const [row] = await db
      .select({ b: stateBackends })
      .from(stateBackendDefaults)
      .innerJoin(stateBackends, eq(stateBackends.id, stateBackendDefaults.backendId))
      .where(and(eq(stateBackendDefaults.orgId, orgId), eq(stateBackendDefaults.provisioner, provisioner)));
    if (row) return row.b;
  }
  return plantonManagedBackend(db, orgId);
}

async function planMigrate(db: Queryable, actor: Actor, raw: z.input<typeof migrateBackendInput>): Promise<Plan> {
  const input = migrateBackendInput.parse(raw);
  const [c] = await db
    .select({ comp: infraComponents, environment: environments.name })
    .from(infraComponents)
    .innerJoin(environments, eq(environments.id, infraComponents.environmentId))
    .where(and(eq(infraComponents.id, input.componentId), eq(infraComponents.orgId, actor.orgId)));
  if (!c) throw notFound(`Nothing was moved: Infra Component ${input.componentId}`, "Check the id on the component's page in the console.");
  const provisioner = (await provisionersOf(db, actor.orgId, [c.comp])).get(c.comp.id) ?? null;
  if (!provisioner) throw new PlantonError("PRECONDITION_FAILED", `Nothing was moved: no IaC module is registered for ${c.comp.name}'s kind ${c.comp.kind}, so which provisioner its state belongs to is unknown. Register a module for ${c.comp.kind}, then try again.`);
  const from = await currentBackend(db, actor.orgId, c.comp.stateBackendId, provisioner);
  const to = await backendByName(db, actor.orgId, input.to);
  await checkDestination(db, to, provisioner, from, new Map());
  const fromKey = from.kind === PLANTON_MANAGED_KIND ? plantonManagedKey(actor.orgId, c.comp.id) : (c.comp.stateKey ?? defaultStateKey(c.environment, c.comp.name));
  const store = await openStore(db, from);
  let state: StoredState | null;
  try {
    state = await store.read(fromKey);
  } finally {
    await store.close?.();
  }
  if (!state) throw new PlantonError("PRECONDITION_FAILED", `Nothing was moved: component ${c.comp.name} has no state on ${from.name} (key ${fromKey}). Run a job first; a component without state needs no move.`);
  if (from.kind === PLANTON_MANAGED_KIND) {
    const [row] = await db.select({ moved: stateObjects.movedToBackendId }).from(stateObjects).where(eq(stateObjects.componentId, c.comp.id));
    if (row?.moved) throw new PlantonError("PRECONDITION_FAILED", `Nothing was moved: component ${c.comp.name}'s Planton-managed copy was moved already and is kept only for rollback. Move it from its current backend instead.`);
  }
  return {
    scope: "migrate_backend",
    destinations: { [provisioner]: to },
    items: [
      { componentId: c.comp.id, component: c.comp.name, environment: c.environment, provisioner, from, to, fromKey, toKey: defaultStateKey(c.environment, c.comp.name), size: state.bytes.byteLength, serial: state.serial, checksum: state.checksum },
    ],
  };
}

function plannedView(p: Planned) {
  return {
    id: null,
    componentId: p.componentId,
    component: p.component,
    environment: p.environment,
    provisioner: p.provisioner,
    from: p.from.name,
    to: p.to.name,
    fromKey: p.fromKey,
    toKey: p.toKey,
    size: p.size,
    serial: p.serial,
    checksum: p.checksum,
    step: "pending" as const,
    error: null,
    canRollBack: false,
  };
}

/** What the plan would move: every item, or the first `limit`; the totals over all. */
const dryRunOf = (plan: Plan, limit?: number) => ({
  items: firstOf(plan.items, limit).map(plannedView),
  totals: { count: plan.items.length, size: plan.items.reduce((n, i) => n + i.size, 0) },
});

/** What a move off Planton-managed storage would do; changes nothing. */
export async function dryRun(db: Queryable, actor: Actor, raw: z.input<typeof dryRunBody>) {
  const { limit, ...input } = dryRunBody.parse(raw);
  return dryRunOf(await planMoveOff(db, actor, input, true), limit);
}

// ── Starting ────────────────────────────────────────────────────────────────────────────────────

/** Test-only hooks of the runner: `afterStep` throwing MoveStopped stops the run there, as if the process died. */
export interface MoveHooks {
  afterStep?: (step: Step, itemIds: string[]) => void | Promise<void>;
}
export class MoveStopped extends Error {
  constructor() {
    super("the move's run was stopped");
  }
}
/** This process's run lock broke under a run (its connection ended): another process may be running the move now, so this one stops. */
class MoveLost extends MoveStopped {}
export interface RunOptions {
  hooks?: MoveHooks;
  /** Items per chunk (each step of a chunk is one commit) and chunks in flight. */
  chunkSize?: number;
  parallelChunks?: number;
  /** Store calls in flight across the chunks (copies, read-backs, locks). */
  storeCalls?: number;
  /** Where a run says what it does and does not (console.log by default). */
  log?: (msg: string) => void;
  /** The clock the sweep's backoff reads (tests move it on instead of waiting). */
  now?: () => number;
}

async function runningMoveRefusal(db: Queryable, orgId: string): Promise<PlantonError | null> {
  const [running] = await db.select().from(stateMoves).where(and(eq(stateMoves.orgId, orgId), eq(stateMoves.status, "running")));
  if (!running) return null;
  return conflict(`Nothing was started: state move ${running.id}, started by ${running.startedByLabel} at ${running.createdAt.toISOString()}, is still running. Follow it in Settings → State Backends and start again when it ends.`);
}

async function insertMove(db: Database, actor: Actor, plan: Plan, opts: RunOptions) {
  if (!plan.items.length) throw new PlantonError("PRECONDITION_FAILED", "Nothing was started: no state is left on Planton-managed storage.");
  const refusal = await runningMoveRefusal(db, actor.orgId);
  if (refusal) throw refusal;
  const moveId = newId("stateMove");
  // The items as they are inserted, and as the run starts from them (reading 10 000 back with their names took a fifth of a second).
  const now = new Date();
  const items: RunItem[] = plan.items.map((p) => {
    const id = newId("stateMoveItem");
    return {
      id, moveId, componentId: p.componentId, provisioner: p.provisioner, fromBackendId: p.from.id, toBackendId: p.to.id, fromKey: p.fromKey, toKey: p.toKey,
      size: p.size, serial: p.serial, checksum: null, step: "pending", error: null, createdAt: now, updatedAt: now, component: p.component, environment: p.environment, lock: moveLockId(id),
    };
  });
  let move: MoveRow | undefined;
  try {
    await db.transaction(async (tx) => {
      [move] = await tx.insert(stateMoves).values({
        id: moveId,
        orgId: actor.orgId,
        scope: plan.scope,
        destinations: Object.fromEntries(Object.entries(plan.destinations).map(([p, b]) => [p, b.id])),
        startedBy: actor.userId,
        startedByLabel: actor.label,
      }).returning();
      // One parameter for all items (thousands of rows): set-based, not one bind per column per row.
      const rows = JSON.stringify(items.map((i) => ({ id: i.id, cid: i.componentId, provisioner: i.provisioner, src: i.fromBackendId, dst: i.toBackendId, fk: i.fromKey, tk: i.toKey, size: i.size, serial: i.serial })));
      await tx.execute(sql`
        insert into state_move_items (id, move_id, component_id, provisioner, from_backend_id, to_backend_id, from_key, to_key, size, serial)
        select v.id, ${moveId}, v.cid, v.provisioner, v.src, v.dst, v.fk, v.tk, v.size, v.serial
          from jsonb_to_recordset(${rows}::jsonb) as v(id text, cid text, provisioner text, src text, dst text, fk text, tk text, size int, serial bigint)`);
      const where = Object.entries(plan.destinations).map(([p, b]) => `${p} → ${b.name}`).join(", ");
      const changes = { moveId, scope: plan.scope, destinations: Object.fromEntries(Object.entries(plan.destinations).map(([p, b]) => [p, b.name])), count: plan.items.length };
      // One component's migration is recorded on the component (its Activity shows it); a move off Planton-managed storage on the move.
      const one = plan.items[0];
      await recordAudit(
        tx,
        actor,
        plan.scope === "migrate_backend"
          ? { action: "state.migrate_backend", targetId: one.componentId, targetName: one.component, environment: one.environment, summary: `Started moving ${one.component}'s state from ${one.from.name} to ${one.to.name}`, changes: { ...changes, from: one.from.name, to: one.to.name } }
          : { action: "state.move.start", targetId: moveId, targetName: moveId, summary: `Started moving ${plan.items.length} states off Planton-managed storage (${where})`, changes },
      );
      await notifyMove(tx, actor.orgId, moveId);
    });
  } catch (e) {
    // Two starts at once: the partial unique index lets one in; the other is told which.
    if (isUniqueViolation(e)) throw (await runningMoveRefusal(db, actor.orgId)) ?? e;
    throw e;
  }
  launchMove(db, moveId, opts, items);
  // The answer is the move as committed, from the plan: reading back and joining every item (10 000 of them) cost as
  // much as a fifth of a move's run, spent while the run competes for the same cores.
  const names = new Map(Object.values(plan.destinations).map((b) => [b.id, b.name]));
  // As a live view carries it: the counts over all, the first items (all waiting, so in the plan's order).
  const shown = plan.items.slice(0, MOVE_ITEMS_SHOWN).map((p, k) => ({ ...plannedView(p), id: items[k].id }));
  return moveViewOf(move!, (id) => names.get(id) ?? id, shown, new Map([["pending", items.length]]));
}

/** Starts moving every state off Planton-managed storage; answers the move (it runs in the background). */
export async function startMove(db: Database, actor: Actor, input: z.input<typeof moveOffBody>, opts: RunOptions = {}) {
  return insertMove(db, actor, await planMoveOff(db, actor, input, false), opts);
}

/** One component's state to another backend: the dry run when `dryRun`, else the started move. */
export async function migrateBackend(db: Database, actor: Actor, input: z.input<typeof migrateBackendInput>, opts: RunOptions = {}) {
  const plan = await planMigrate(db, actor, input);
  if (input.dryRun) return { dryRun: dryRunOf(plan), move: null };
  return { dryRun: null, move: await insertMove(db, actor, plan, opts) };
}

// ── Running ─────────────────────────────────────────────────────────────────────────────────────

// A move runs only in the process holding its run lock: a session-level advisory lock on a connection of its
// own (DatabaseHandle.sessionLock), so replicas on one database never work the same move at once, and a move
// whose process died (its connection ended, Postgres freed the lock) is taken over by the next sweep of any
// replica (every scheduler tick calls resumeRunningMoves). On PGlite the one process always holds it.

/** The bigint advisory-lock key of a move's run: its namespace, then a 32-bit hash of the move id. */
export function moveRunLockKey(moveId: string): number {
  return keyInSpace(MOVE_RUN_LOCK_SPACE, createHash("sha256").update(moveId).digest().readUInt32BE(0));
}

// The runs in this process, by move and by database (tests open two handles as two replicas); on globalThis, as the
// routes are bundled apart from server/start.ts. Each resolves to whether it ran here (held the run lock).
const g = globalThis as unknown as { __plantonMoveRuns?: Map<string, Map<Database, Promise<boolean>>>; __plantonMoveRetries?: Map<string, { failures: number; at: number }> };
const runs = (g.__plantonMoveRuns ??= new Map());

/**
 * A run that stopped on an error (its move still running) is run again by a sweep, here or in another console
 * process — after 2 s, then twice as long after each failure in a row, at most 5 minutes: a lasting fault (the
 * database refusing a statement) is retried and logged a few times an hour, not every tick.
 */
const RETRY_FIRST_MS = 2000;
const RETRY_MAX_MS = 5 * 60_000;
const retries = (g.__plantonMoveRetries ??= new Map());

const logMove = (opts: RunOptions, msg: string) => (opts.log ?? ((m) => console.log(`[state-move] ${m}`)))(msg);

/** Runs the move here when this process can take its run lock (or already runs it); the only way a move is run. `items`: its unfinished items, when the caller has them as committed. */
function launchMove(db: Database, moveId: string, opts: RunOptions = {}, items?: RunItem[]): Promise<boolean> {
  const here = runs.get(moveId) ?? new Map<Database, Promise<boolean>>();
  const running = here.get(db);
  if (running) return running;
  const run = (async () => {
    const lock = handleOf(db).sessionLock(moveRunLockKey(moveId));
    let held = false;
    try {
      held = await lock.hold();
      if (!held) logMove(opts, `state move ${moveId} is not run here (pid ${process.pid}): another console process holds its run lock and runs it`);
      else {
        await runMove(db, moveId, lock, opts, items);
        retries.delete(moveId);
      }
    } catch (e) {
      if (e instanceof MoveLost) {
        logMove(opts, `state move ${moveId} stopped here (pid ${process.pid}): its run lock's connection broke, so another console process may be running it; a sweep runs it on wherever its lock is free`);
      } else if (!(e instanceof MoveStopped)) {
        const failures = (retries.get(moveId)?.failures ?? 0) + 1;
        const wait = Math.min(RETRY_FIRST_MS * 2 ** (failures - 1), RETRY_MAX_MS);
        retries.set(moveId, { failures, at: (opts.now ?? Date.now)() + wait });
        console.error(`[state-move] ${moveId} stopped: ${(e as Error).message}; it runs on from where it stands in ${Math.round(wait / 1000)} s (failure ${failures} in a row)`);
      }
    } finally {
      // Released when the run ends, however it ends: a move still running then is resumed by the next sweep.
      await lock.release().catch(() => {});
    }
    return held;
  })()
    .finally(() => {
      here.delete(db);
      if (!here.size && runs.get(moveId) === here) runs.delete(moveId);
    });
  here.set(db, run);
  runs.set(moveId, here);
  return run;
}

/** Every run of the move in this process, or a resolved promise when none (tests wait on it). */
export async function moveRun(moveId: string): Promise<void> {
  await Promise.all(runs.get(moveId)?.values() ?? []);
}

/**
 * The sweep (every scheduler tick, so also at start): every move still running whose run lock no process holds
 * (its process died mid-way, or its run stopped) runs on here from where it stands — one whose run here stopped on
 * an error, once its backoff has passed. Answers the moves launched.
 */
export async function resumeRunningMoves(db: Database, opts: RunOptions = {}): Promise<string[]> {
  const running = await db.select({ id: stateMoves.id }).from(stateMoves).where(eq(stateMoves.status, "running"));
  if (!running.length) return [];
  // Read on the pool first, so a replica does not open a lock connection every tick for a move another one runs;
  // launchMove's own try of the lock decides. Advisory locks are per database, pg_locks is the whole cluster's.
  const held = new Set(
    rowsOf<{ key: string }>(
      await db.execute(sql`
        select (classid::bigint << 32 | objid::bigint)::text as key from pg_locks
         where locktype = 'advisory' and objsubid = 1 and granted and classid = ${MOVE_RUN_LOCK_SPACE}
           and database = (select oid from pg_database where datname = current_database())`),
    ).map((r) => String(r.key)),
  );
  const now = (opts.now ?? Date.now)();
  const free = running.filter((m) => !held.has(String(moveRunLockKey(m.id))) && !runs.get(m.id)?.has(db) && (retries.get(m.id)?.at ?? 0) <= now);
  for (const m of free) {
    logMove(opts, `resuming state move ${m.id} here (pid ${process.pid}): it is running and no console process holds its run lock`);
    void launchMove(db, m.id, opts);
  }
  return free.map((m) => m.id);
}

/** Runs a move to its end in this process unless another holds its run lock; answers whether it ran here (the test of a resume calls it directly). */
export async function resumeMove(db: Database, moveId: string, opts: RunOptions = {}): Promise<boolean> {
  return launchMove(db, moveId, opts);
}

async function environmentNameOf(db: Queryable, environmentId: string): Promise<string | null> {
  const [env] = await db.select({ name: environments.name }).from(environments).where(eq(environments.id, environmentId));
  return env?.name ?? null;
}

async function notifyMove(tx: Queryable, orgId: string, moveId: string) {
  await tx.execute(sql`select pg_notify(${STATE_MOVES_CHANNEL}, ${`${orgId}:${moveId}`})`);
}

/** Runs a task when a slot is free: a run's lanes, or its store slots at a step's priority (inStoreSlots). */
type Limit = (task: () => Promise<void>) => Promise<void>;

/** Runs `fn` over `items` under `limit`; on a throw no item not yet started starts, and it rethrows once the started ones settle. */
async function eachUnder<T>(limit: Limit, items: T[], fn: (item: T) => Promise<void>): Promise<void> {
  let failure: { error: unknown } | null = null;
  await Promise.all(
    items.map((item) =>
      limit(async () => {
        if (failure) return;
        try {
          await fn(item);
        } catch (error) {
          failure ??= { error };
        }
      }),
    ),
  );
  if (failure) throw (failure as { error: unknown }).error;
}

interface RunItem extends ItemRow {
  component: string;
  environment: string;
  /** moveLockId(id), worked out once (every step's statement sends it). */
  lock: string;
}

interface RunContext {
  db: Database;
  move: MoveRow;
  actor: Actor;
  stores: Map<string, Promise<StateStore>>;
  backends: Map<string, BackendRow>;
  hooks: MoveHooks;
  stopped?: boolean;
  /** The move's run lock: each step's end checks it was held without a break (stepDone). */
  lock: SessionLock;
  /** Items copied by an atomic create in this run, which took no lock on the destination. */
  lockless: Set<string>;
  /**
   * The run's store calls in flight (copies, read-backs, locks), one limit shared by all its chunks: a chunk that copies
   * while the others commit their steps takes the slots they leave, so the destination stays busy (a limit per chunk
   * left it idle whenever chunks committed at once).
   */
  slots: PQueue;
}

/**
 * The store-call priority of each step's calls: a later step's first. A chunk that has copied reads its copies back
 * and commits as soon as its copies are done, instead of queueing behind every copy the other chunks asked for
 * meanwhile — with a first-come queue the lanes finished each round together, and the destination sat idle while
 * they all committed and then all locked their next chunks.
 */
const STEP_PRIORITY = { lock: 0, copy: 1, readBack: 2, release: 3 } as const;
const inStoreSlots = (ctx: RunContext, step: keyof typeof STEP_PRIORITY): Limit => (task) => ctx.slots.add(task, { priority: STEP_PRIORITY[step] });

const moveActor = (m: MoveRow): Actor => ({ userId: m.startedBy, label: m.startedByLabel, orgId: m.orgId, role: "admin" });
const who = (m: MoveRow) => `state move ${m.id} by ${m.startedByLabel}`;

function storeOf(ctx: RunContext, backendId: string): Promise<StateStore> {
  let s = ctx.stores.get(backendId);
  if (!s) {
    const row = ctx.backends.get(backendId);
    s = row ? (row.kind === PLANTON_MANAGED_KIND ? Promise.resolve(new PlantonManagedStore(ctx.db, row.orgId, who(ctx.move))) : openStore(ctx.db, row)) : Promise.reject(new Error(`backend ${backendId} was deleted`));
    ctx.stores.set(backendId, s);
  }
  return s;
}

async function runMove(db: Database, moveId: string, lock: SessionLock, opts: RunOptions, given?: RunItem[]): Promise<void> {
  const [move] = await db.select().from(stateMoves).where(eq(stateMoves.id, moveId));
  if (!move || move.status !== "running") return;
  const backends = new Map((await db.select().from(stateBackends).where(eq(stateBackends.orgId, move.orgId))).map((b) => [b.id, b]));
  const ctx: RunContext = { db, move, actor: moveActor(move), stores: new Map(), backends, hooks: opts.hooks ?? {}, lock, lockless: new Set(), slots: new PQueue({ concurrency: opts.storeCalls ?? STORE_CALLS }) };
  try {
    const items = given ?? (await db
      .select({ item: stateMoveItems, component: infraComponents.name, environment: environments.name })
      .from(stateMoveItems)
      .innerJoin(infraComponents, eq(infraComponents.id, stateMoveItems.componentId))
      .innerJoin(environments, eq(environments.id, infraComponents.environmentId))
      .where(and(eq(stateMoveItems.moveId, moveId), inArray(stateMoveItems.step, [...MOVE_STEPS_UNFINISHED])))
      .orderBy(asc(stateMoveItems.id))).map((r) => ({ ...r.item, component: r.component, environment: r.environment, lock: moveLockId(r.item.id) }));
    // Chunks of 50 to 200 items, as many as fill every lane in each round (1 000 items: 8 of 125, not 5 of 200 with the fifth alone at the end).
    const lanes = opts.parallelChunks ?? 4;
    const rounds = Math.max(1, Math.ceil(items.length / (lanes * MAX_CHUNK)));
    const size = opts.chunkSize ?? Math.max(MIN_CHUNK, Math.ceil(items.length / (rounds * lanes)));
    const chunks: RunItem[][] = [];
    for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
    const laneSlots = new PQueue({ concurrency: lanes });
    await eachUnder((task) => laneSlots.add(task), chunks, (chunk) => runChunk(ctx, chunk));
    await endMove(ctx);
  } finally {
    for (const s of ctx.stores.values()) await s.then((st) => st.close?.()).catch(() => {});
  }
}


type Copied = { checksum: string; size: number; serial: number };

/** The columns of `v` a step's statement reads besides the item's id (the others stay null): what is sent is what is read. */
type StepColumns = { cid?: string; backend?: string; key?: string; pm?: boolean; lock?: string } & Partial<Copied>;

/**
 * Commits step `to` for the items still at `from`, in one statement (one round trip, all or nothing): the step's
 * own changes (`effects`: data-modifying CTEs over `v`, one row per item, with the `columns` they read), the items'
 * new step and the move's NOTIFY (and the job queue's, when `queue`). A chunk's step is then one commit for all its items.
 */
async function commitStep(
  ctx: RunContext,
  items: RunItem[],
  from: Step,
  to: Step,
  opts: { effects?: SQL; columns?: (i: RunItem) => StepColumns; copied?: Map<string, Copied>; queue?: boolean } = {},
) {
  if (!items.length) return;
  const { orgId, id: moveId } = ctx.move;
  const rows = JSON.stringify(items.map((i) => ({ id: i.id, ...opts.columns?.(i), ...opts.copied?.get(i.id) })));
  await ctx.db.execute(sql`
    with v as (select * from jsonb_to_recordset(${rows}::jsonb) as v(id text, cid text, backend text, key text, pm boolean, lock text, checksum text, size int, serial bigint)),
    ${opts.effects ? sql`${opts.effects},` : sql``}
    stepped as (
      update state_move_items i set step = ${to}, updated_at = now()${opts.copied ? sql`, checksum = v.checksum, size = v.size, serial = v.serial` : sql``}
        from v where i.id = v.id and i.step = ${from} returning i.id)
    select count(*)::int as n, pg_notify(${STATE_MOVES_CHANNEL}, ${`${orgId}:${moveId}`})${opts.queue ? sql`, pg_notify(${JOB_QUEUED_CHANNEL}, ${orgId})` : sql``} from stepped`);
  for (const i of items) {
    i.step = to;
    const c = opts.copied?.get(i.id);
    if (c) Object.assign(i, c);
  }
}

async function runChunk(ctx: RunContext, chunk: RunItem[]): Promise<void> {
  const live = () => chunk.filter((i) => i.step !== "failed");
  // A stopped run (the test hook) stops every chunk at its next step, as a process that died would.
  const stepDone = async (step: Step) => {
    if (ctx.stopped) throw new MoveStopped();
    // Its run lock's connection broke: another process may have taken the lock and be running the move. Stop here.
    if (!(await ctx.lock.held())) throw ((ctx.stopped = true), new MoveLost());
    // Test-only: with the harness's gates folder set, a test holds the move after a step at gate state-move.<step>.
    if (process.env.PLANTON_TEST_GATES_DIR) await holdWhileArmed(process.env.PLANTON_TEST_GATES_DIR, `state-move.${step}`);
    try {
      await ctx.hooks.afterStep?.(step, live().map((i) => i.id));
    } catch (e) {
      if (e instanceof MoveStopped) ctx.stopped = true;
      throw e;
    }
  };

  // held: the components' job queues wait (claim.ts skips held components).
  const pending = live().filter((i) => i.step === "pending");
  if (pending.length) {
    await commitStep(ctx, pending, "pending", "held", { columns: (i) => ({ cid: i.componentId }), effects: sql`held as (update infra_components c set state_hold = ${ctx.move.id} from v where c.id = v.cid)` });
    await stepDone("held");
  }

  // locked: the source state, under the lock ID derived from the item id (a lock already ours is ours).
  // Planton-managed states are locked, read and stepped in one statement; others through their store.
  const toLock = live().filter((i) => i.step === "held");
  let sources = new Map<string, StoredState | null>();
  if (toLock.length) {
    const locked: RunItem[] = [];
    const planton = await lockPlantonSources(ctx, toLock.filter((i) => isPlanton(ctx, i)));
    sources = planton.sources;
    // Only store calls take the run's store slots: a Planton-managed item, locked above, waited there behind the
    // other chunks' copies (a tenth of a second a chunk) for nothing.
    for (const item of toLock) {
      const reason = isPlanton(ctx, item) ? planton.refused.get(item.id) : undefined;
      if (reason) await failItem(ctx, item, reason);
    }
    await eachUnder(inStoreSlots(ctx, "lock"), toLock.filter((i) => !isPlanton(ctx, i)), async (item) => {
      const reason = await lockSource(ctx, item);
      if (reason) await failItem(ctx, item, reason);
      else locked.push(item);
    });
    await commitStep(ctx, locked, "held", "locked");
    await stepDone("locked");
  }

  // copied: written to the destination under the same lock ID; the same checksum there counts as copied.
  const toCopy = live().filter((i) => i.step === "locked");
  if (toCopy.length) {
    const copied: RunItem[] = [];
    const extra = new Map<string, Copied>();
    // A resumed run reads the states it locked in an earlier run.
    for (const [cid, state] of await readPlantonSources(ctx, toCopy.filter((i) => isPlanton(ctx, i) && !sources.has(i.componentId)))) sources.set(cid, state);
    await eachUnder(inStoreSlots(ctx, "copy"), toCopy, async (item) => {
      const r = await copyItem(ctx, item, isPlanton(ctx, item) ? (sources.get(item.componentId) ?? null) : undefined);
      if (typeof r === "string") await failItem(ctx, item, r);
      else (copied.push(item), extra.set(item.id, r));
    });
    await commitStep(ctx, copied, "locked", "copied", { copied: extra });
    await stepDone("copied");
  }

  // switched: read back and compare, then one transaction points each component at its destination.
  const toSwitch = live().filter((i) => i.step === "copied");
  if (toSwitch.length) {
    const verified: RunItem[] = [];
    await eachUnder(inStoreSlots(ctx, "readBack"), toSwitch, async (item) => {
      // The copy's bytes are read back and hashed (not parsed: equal checksums mean the bytes the copy wrote).
      const back = await storedChecksum(await storeOf(ctx, item.toBackendId), item.toKey).catch((e: Error) => e);
      const to = ctx.backends.get(item.toBackendId)?.name ?? item.toBackendId;
      if (back instanceof Error) return failItem(ctx, item, `Nothing was switched for component ${item.component}: reading its copy back from ${to} failed (${accessErrorSentence(back)}). Check the backend's access in Settings → State Backends, then retry.`);
      if (back !== item.checksum) {
        return failItem(ctx, item, `Nothing was switched for component ${item.component}: the copy read back from ${to} (key ${item.toKey}) has checksum ${back ?? "none"}, not the copied ${item.checksum}. Retry the move; the state stays on its current backend until the checksums agree.`);
      }
      verified.push(item);
    });
    // One statement points every verified component at its destination; the Planton-managed copy stays, marked as moved, for the move's rollback.
    // An item whose only lock is its Planton-managed source's (a fresh copy created atomically, no lock taken there) is
    // switched, unlocked and released in that one commit: there is no lock outside the transaction to release after it.
    const atOnce: RunItem[] = [];
    const switchOnly: RunItem[] = [];
    for (const i of verified) (isPlanton(ctx, i) && ctx.lockless.has(i.id) ? atOnce : switchOnly).push(i);
    if (atOnce.length) {
      await commitStep(ctx, atOnce, "copied", "done", {
        queue: true,
        columns: (i) => ({ cid: i.componentId, backend: i.toBackendId, key: i.toKey, lock: i.lock }),
        effects: sql`
          switched as (
            update infra_components c set state_backend_id = v.backend, state_key = v.key, updated_at = now(),
              state_hold = case when c.state_hold = ${ctx.move.id} then null else c.state_hold end
              from v where c.id = v.cid),
          marked as (
            update state_objects s set moved_to_backend_id = v.backend, moved_at = now(), updated_at = now(),
              lock_info = case when s.lock_info->>'ID' = v.lock then null else s.lock_info end,
              locked_by_job = case when s.lock_info->>'ID' = v.lock then null else s.locked_by_job end
              from v where s.component_id = v.cid)`,
      });
    }
    await commitStep(ctx, switchOnly, "copied", "switched", {
      columns: (i) => ({ cid: i.componentId, backend: i.toBackendId, key: i.toKey, pm: isPlanton(ctx, i) }),
      effects: sql`
        switched as (update infra_components c set state_backend_id = v.backend, state_key = v.key, updated_at = now() from v where c.id = v.cid),
        marked as (update state_objects s set moved_to_backend_id = v.backend, moved_at = now() from v where s.component_id = v.cid and v.pm)`,
    });
    if (switchOnly.length) await stepDone("switched");
    if (atOnce.length && !switchOnly.length) await stepDone("done");
  }

  // done: both locks released, the hold released (the components' waiting jobs run, against the new backend).
  const toFinish = live().filter((i) => i.step === "switched");
  if (toFinish.length) {
    await eachUnder(inStoreSlots(ctx, "release"), toFinish, (item) => releaseLocks(ctx, item, { source: !isPlanton(ctx, item) }));
    // Planton-managed locks (under the item's lock ID only) and the holds are released with the step, and the queue told.
    await commitStep(ctx, toFinish, "switched", "done", {
      queue: true,
      columns: (i) => ({ cid: i.componentId, pm: isPlanton(ctx, i), lock: i.lock }),
      effects: sql`
        unlocked as (update state_objects s set lock_info = null, locked_by_job = null, updated_at = now() from v where v.pm and s.component_id = v.cid and s.lock_info->>'ID' = v.lock),
        released as (update infra_components c set state_hold = null from v where c.id = v.cid and c.state_hold = ${ctx.move.id})`,
    });
    await stepDone("done");
  }
}

/** Locks the source state for the item; answers why it could not, or null. */
async function lockSource(ctx: RunContext, item: RunItem): Promise<string | null> {
  try {
    const store = await storeOf(ctx, item.fromBackendId);
    await store.lock(item.fromKey, { ID: item.lock, Operation: MOVE_LOCK_OPERATION, Who: who(ctx.move) }).catch(async (e) => {
      if (e instanceof StateLockedError && e.holder.ID === item.lock) return e.holder;
      throw e;
    });
    return null;
  } catch (e) {
    if (e instanceof StateLockedError) {
      const [row] = await ctx.db.select({ job: stateObjects.lockedByJob }).from(stateObjects).where(eq(stateObjects.componentId, item.componentId));
      const byJob = row?.job ?? /^job (\S+)$/.exec(e.holder.Who)?.[1];
      return byJob
        ? `Nothing was moved for component ${item.component}: its state is locked by job ${byJob}; retry when it ends.`
        : `Nothing was moved for component ${item.component}: its state is locked by ${e.holder.Who} (lock ${e.holder.ID}, ${e.holder.Operation}). Retry when that run ends, or force-unlock it if nothing runs.`;
    }
    return `Nothing was moved for component ${item.component}: its state could not be locked (${accessErrorSentence(e)}). Retry the move.`;
  }
}

/** Copies the item's state; answers what was copied, or why not. */
async function copyItem(ctx: RunContext, item: RunItem, read?: StoredState | null): Promise<{ checksum: string; size: number; serial: number } | string> {
  const toName = ctx.backends.get(item.toBackendId)?.name ?? item.toBackendId;
  try {
    const dest = await storeOf(ctx, item.toBackendId);
    const state = read === undefined ? await (await storeOf(ctx, item.fromBackendId)).read(item.fromKey) : read;
    if (!state) return `Nothing was moved for component ${item.component}: its state under ${item.fromKey} is gone. Run a job of the component to write one, then retry.`;
    const copied = { checksum: state.checksum, size: state.bytes.byteLength, serial: state.serial };
    // A fresh key on a store with an atomic create needs no lock there: the create never replaces what another
    // writer put first, and the read-back before the switch refuses a copy anyone changed since.
    if (dest.create && (await dest.create(item.toKey, state))) {
      ctx.lockless.add(item.id);
      return copied;
    }
    try {
      await dest.lock(item.toKey, { ID: item.lock, Operation: MOVE_LOCK_OPERATION, Who: who(ctx.move) });
    } catch (e) {
      if (!(e instanceof StateLockedError)) throw e;
      if (e.holder.ID !== item.lock) return `Nothing was copied for component ${item.component}: ${item.toKey} in ${toName} is locked by ${e.holder.Who} (lock ${e.holder.ID}). Release that lock there, then retry.`;
    }
    const there = await dest.read(item.toKey);
    // An older version of this same state there (a rolled-back move left it) is replaced, as the write rules allow; any other state is not.
    if (there && writeRefusal(item.toKey, there, state)) {
      await dest.unlock(item.toKey, item.lock).catch(() => {});
      return `Nothing was copied for component ${item.component}: ${item.toKey} in ${toName} already holds a different state (serial ${there.serial}, lineage ${there.lineage}). Delete it there if it is not needed, or move this component to another backend (planton tofu state migrate-backend ${item.component} --to <backend>), then retry.`;
    }
    // The lock is ours and the rules allow the write; the same bytes already there count as copied.
    if (there?.checksum !== state.checksum) await dest.write(item.toKey, state);
    return copied;
  } catch (e) {
    return `Nothing was copied for component ${item.component}: writing to ${toName} failed (${accessErrorSentence(e)}). Check the backend's access in Settings → State Backends, then retry.`;
  }
}

/** Releases the item's locks (a lock that is gone is already released; one under another ID stays). */
async function releaseLocks(ctx: RunContext, item: RunItem, sides = { source: true }) {
  const locks: [string, string][] = ctx.lockless.has(item.id) ? [] : [[item.toBackendId, item.toKey]];
  if (sides.source) locks.push([item.fromBackendId, item.fromKey]);
  for (const [backendId, key] of locks) {
    try {
      await (await storeOf(ctx, backendId)).unlock(key, item.lock);
    } catch {
      // best effort: a lock left behind is ours by ID, and a retry releases it
    }
  }
}

/** Store calls in flight in a run, across its chunks (the bench's raw PUT has as many). */
const STORE_CALLS = 64;
const MAX_CHUNK = 200;
const MIN_CHUNK = 50;

// Planton-managed sources, a chunk at a time: one statement locks, reads or unlocks every item's
// state row (the same conditional update PlantonManagedStore.lock makes, for many rows at once).
const isPlanton = (ctx: RunContext, item: RunItem) => ctx.backends.get(item.fromBackendId)?.kind === PLANTON_MANAGED_KIND;

/**
 * Locks the items' Planton-managed states and commits their step `locked`, in one statement that also answers the
 * states it locked (read under the lock); answers, per item that could not be locked, why.
 */
async function lockPlantonSources(ctx: RunContext, items: RunItem[]): Promise<{ refused: Map<string, string>; sources: Map<string, StoredState | null> }> {
  const refused = new Map<string, string>();
  const sources = new Map<string, StoredState | null>();
  if (!items.length) return { refused, sources };
  const { orgId, id: moveId } = ctx.move;
  const info = JSON.stringify({ Operation: MOVE_LOCK_OPERATION, Who: who(ctx.move), Version: STORE_VERSION, Created: new Date().toISOString(), Info: "" });
  const rows = JSON.stringify(items.map((i) => ({ id: i.id, cid: i.componentId, lock: i.lock })));
  // The states come back a row each (one row with no cid when none was locked; the NOTIFY is sent once either way):
  // gathering them into one jsonb_agg document cost Postgres more than the locking itself.
  const taken = rowsOf<{ cid: string | null; state: unknown }>(
    await ctx.db.execute(sql`
      with v as (select * from jsonb_to_recordset(${rows}::jsonb) as v(id text, cid text, lock text)),
      taken as (
        update state_objects s set lock_info = ${info}::jsonb || jsonb_build_object('ID', v.lock, 'Path', s.key), locked_by_job = null, updated_at = now()
          from v where s.component_id = v.cid and s.org_id = ${orgId} and (s.lock_info is null or s.lock_info->>'ID' = v.lock)
        returning v.id, s.component_id, s.state),
      stepped as (update state_move_items i set step = 'locked', updated_at = now() from taken t where i.id = t.id and i.step = 'held'),
      notified as (select pg_notify(${STATE_MOVES_CHANNEL}, ${`${orgId}:${moveId}`}))
      select t.component_id as cid, t.state from notified left join taken t on true`),
  );
  for (const t of taken) if (t.cid) sources.set(t.cid, t.state == null ? null : plantonStoredState(t.state));
  for (const i of items) if (sources.has(i.componentId)) i.step = "locked";
  const missed = items.filter((i) => !sources.has(i.componentId));
  if (!missed.length) return { refused, sources };

  const holders = new Map(
    (await ctx.db.select({ cid: stateObjects.componentId, lock: stateObjects.lockInfo, job: stateObjects.lockedByJob }).from(stateObjects).where(inArray(stateObjects.componentId, missed.map((i) => i.componentId)))).map((r) => [r.cid, r]),
  );
  for (const item of missed) {
    const h = holders.get(item.componentId);
    refused.set(
      item.id,
      !h?.lock
        ? `Nothing was moved for component ${item.component}: its Planton-managed state is gone. Run a job of the component to write one, then retry.`
        : h.job
          ? `Nothing was moved for component ${item.component}: its state is locked by job ${h.job}; retry when it ends.`
          : `Nothing was moved for component ${item.component}: its state is locked by ${h.lock.Who} (lock ${h.lock.ID}, ${h.lock.Operation}). Retry when that run ends, or force-unlock it if nothing runs.`,
    );
  }
  return { refused, sources };
}

/** The items' Planton-managed states, as the bytes a PlantonManagedStore reads, by component. */
async function readPlantonSources(ctx: RunContext, items: RunItem[]): Promise<Map<string, StoredState | null>> {
  if (!items.length) return new Map();
  const rows = await ctx.db.select({ cid: stateObjects.componentId, state: stateObjects.state }).from(stateObjects).where(inArray(stateObjects.componentId, items.map((i) => i.componentId)));
  return new Map(rows.map((r) => [r.cid, r.state == null ? null : plantonStoredState(r.state)]));
}

async function failItem(ctx: RunContext, item: RunItem, reason: string) {
  await releaseLocks(ctx, item);
  await ctx.db.transaction(async (tx) => {
    await tx.update(stateMoveItems).set({ step: "failed", error: reason, updatedAt: new Date() }).where(eq(stateMoveItems.id, item.id));
    await tx.update(infraComponents).set({ stateHold: null }).where(and(eq(infraComponents.id, item.componentId), eq(infraComponents.stateHold, ctx.move.id)));
    await recordAudit(tx, ctx.actor, { action: "state.move.item_failed", targetId: item.id, targetName: item.component, environment: item.environment, result: "failure", summary: reason, changes: { moveId: ctx.move.id, componentId: item.componentId } });
    await notifyMove(tx, ctx.move.orgId, ctx.move.id);
    await notifyQueue(tx, ctx.move.orgId);
  });
  item.step = "failed";
  item.error = reason;
}

async function endMove(ctx: RunContext) {
  await ctx.db.transaction(async (tx) => {
    const counts = await stepCounts(tx, ctx.move.id);
    const n = (s: Step) => counts.get(s) ?? 0;
    if (MOVE_STEPS_UNFINISHED.some((s) => n(s) > 0)) return;
    const status = n("failed") ? "failed" : "succeeded";
    const [ended] = await tx.update(stateMoves).set({ status, finishedAt: new Date(), updatedAt: new Date() }).where(and(eq(stateMoves.id, ctx.move.id), eq(stateMoves.status, "running"))).returning();
    if (!ended) return;
    await recordAudit(tx, ctx.actor, {
      action: "state.move.end",
      targetId: ctx.move.id,
      targetName: ctx.move.id,
      result: status === "succeeded" ? "success" : "failure",
      summary: status === "succeeded" ? `State move ${ctx.move.id} succeeded: ${n("done")} states moved` : `State move ${ctx.move.id} failed: ${n("done")} states moved, ${n("failed")} failed (retry them)`,
      changes: { status, done: n("done"), failed: n("failed") },
    });
    await notifyMove(tx, ctx.move.orgId, ctx.move.id);
  });
}

// ── Retry and rollback ──────────────────────────────────────────────────────────────────────────

export const moveIdInput = z.object({ id: z.string().min(1) });
export const getMoveInput = moveIdInput.extend({
  limit: viewLimit("At most this many items, failed first, then in flight, then the rest (0: the progress counts alone); every item when left out"),
});
export const rollbackInput = z.object({ id: z.string().min(1), itemId: z.string().min(1) });

async function moveRow(db: Queryable, orgId: string, id: string): Promise<MoveRow> {
  const [m] = await db.select().from(stateMoves).where(and(eq(stateMoves.id, id), eq(stateMoves.orgId, orgId)));
  if (!m) throw notFound(`State move ${id}`, "Check the id (Settings → State Backends shows the latest move).");
  return m;
}

/** Runs a failed move's failed items again. */
export async function retryMove(db: Database, actor: Actor, raw: z.input<typeof moveIdInput>, opts: RunOptions = {}) {
  const input = moveIdInput.parse(raw);
  const move = await moveRow(db, actor.orgId, input.id);
  if (move.status !== "failed") throw conflict(`Nothing was retried: state move ${move.id} is ${move.status}, and only a failed move's failed items can be retried.`);
  const refusal = await runningMoveRefusal(db, actor.orgId);
  if (refusal) throw refusal;
  try {
    await db.transaction(async (tx) => {
      const again = await tx.update(stateMoveItems).set({ step: "pending", error: null, updatedAt: new Date() }).where(and(eq(stateMoveItems.moveId, move.id), eq(stateMoveItems.step, "failed"))).returning({ id: stateMoveItems.id });
      await tx.update(stateMoves).set({ status: "running", finishedAt: null, updatedAt: new Date() }).where(eq(stateMoves.id, move.id));
      await recordAudit(tx, actor, { action: "state.move.retry", targetId: move.id, targetName: move.id, summary: `Retried ${again.length} failed items of state move ${move.id}`, changes: { items: again.length } });
      await notifyMove(tx, actor.orgId, move.id);
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw (await runningMoveRefusal(db, actor.orgId)) ?? e;
    throw e;
  }
  launchMove(db, move.id, opts);
  return getMove(db, actor, { id: move.id, limit: MOVE_ITEMS_SHOWN });
}

/** Switches one moved component back to Planton-managed storage, copying back what was written since the move. */
export async function rollbackItem(db: Database, actor: Actor, raw: z.input<typeof rollbackInput>) {
  const input = rollbackInput.parse(raw);
  const move = await moveRow(db, actor.orgId, input.id);
  const [row] = await db
    .select({ item: stateMoveItems, comp: infraComponents, obj: stateObjects })
    .from(stateMoveItems)
    .innerJoin(infraComponents, eq(infraComponents.id, stateMoveItems.componentId))
    .leftJoin(stateObjects, eq(stateObjects.componentId, stateMoveItems.componentId))
    .where(and(eq(stateMoveItems.id, input.itemId), eq(stateMoveItems.moveId, move.id)));
  if (!row) throw notFound(`Item ${input.itemId} of state move ${move.id}`, "Check the id (GET /state-moves/{id} lists the items).");
  const { item, comp, obj } = row;
  const nothing = `Nothing was rolled back for component ${comp.name}`;
  if (item.step !== "done") throw conflict(`${nothing}: its move is ${item.step}, and only a component whose move is done can be rolled back.`);
  const from = (await db.select().from(stateBackends).where(eq(stateBackends.id, item.fromBackendId)))[0];
  const to = (await db.select().from(stateBackends).where(eq(stateBackends.id, item.toBackendId)))[0];
  if (!from || from.kind !== PLANTON_MANAGED_KIND || !obj?.state || obj.movedToBackendId !== item.toBackendId || comp.stateBackendId !== item.toBackendId) {
    throw conflict(`${nothing}: its Planton-managed copy is no longer kept, or the component was moved again since. Move it with planton tofu state migrate-backend ${comp.name} --to <backend> instead.`);
  }
  if (!to) throw conflict(`${nothing}: the backend it was moved to was deleted, so its current state cannot be read.`);
  const busy = await db.select({ id: infraJobs.id }).from(infraJobs).where(and(eq(infraJobs.componentId, comp.id), sql`(${infraJobs.status} = 'running' or (${infraJobs.status} = 'awaiting_approval' and ${infraJobs.startedAt} is not null))`));
  if (busy.length) throw conflict(`${nothing}: job ${busy[0].id} is running on it. Roll back when the job ends.`);

  const lockId = moveLockId(`rollback-${item.id}`);
  const pm = new PlantonManagedStore(db, actor.orgId, actor.label);
  const dest = await openStore(db, to);
  let copiedBack: { serial: number; checksum: string } | null = null;
  try {
    try {
      await dest.lock(item.toKey, { ID: lockId, Operation: MOVE_LOCK_OPERATION, Who: `rollback of state move ${move.id} by ${actor.label}` });
    } catch (e) {
      if (e instanceof StateLockedError) throw conflict(`${nothing}: its state on ${to.name} is locked by ${e.holder.Who} (lock ${e.holder.ID}). Roll back when that run ends.`);
      throw e;
    }
    try {
      const current = await dest.read(item.toKey);
      if (current && current.checksum !== item.checksum) {
        // Written on the new backend since the move: bring it back first, so nothing is lost.
        await pm.lock(obj.key, { ID: lockId, Operation: MOVE_LOCK_OPERATION, Who: `rollback of state move ${move.id} by ${actor.label}` });
        try {
          await pm.write(obj.key, current);
          copiedBack = { serial: current.serial, checksum: current.checksum };
        } finally {
          await pm.unlock(obj.key, lockId).catch(() => {});
        }
      }
      await db.transaction(async (tx) => {
        await tx.update(infraComponents).set({ stateBackendId: from.id, stateKey: null, updatedAt: new Date() }).where(eq(infraComponents.id, comp.id));
        await tx.update(stateObjects).set({ movedToBackendId: null, movedAt: null, updatedAt: new Date() }).where(eq(stateObjects.id, obj.id));
        await tx.update(stateMoveItems).set({ step: "rolled_back", updatedAt: new Date() }).where(eq(stateMoveItems.id, item.id));
        await recordAudit(tx, actor, {
          action: "state.move.rollback",
          targetId: comp.id,
          targetName: comp.name,
          environment: await environmentNameOf(tx, comp.environmentId),
          summary: `Rolled ${comp.name}'s state back from ${to.name} to Planton-managed storage${copiedBack ? ` (serial ${copiedBack.serial}, written on ${to.name} since the move, copied back first)` : ""}`,
          changes: { moveId: move.id, componentId: comp.id, from: to.name, to: from.name, copiedBack },
        });
        await notifyMove(tx, actor.orgId, move.id);
      });
    } finally {
      await dest.unlock(item.toKey, lockId).catch(() => {});
    }
  } finally {
    await dest.close?.();
  }
  return getMove(db, actor, { id: move.id, limit: MOVE_ITEMS_SHOWN });
}

// ── Reading ─────────────────────────────────────────────────────────────────────────────────────

/** How many of a move's items are at each step. */
async function stepCounts(db: Queryable, moveId: string): Promise<Map<Step, number>> {
  const rows = await db.select({ step: stateMoveItems.step, n: sql<number>`count(*)::int` }).from(stateMoveItems).where(eq(stateMoveItems.moveId, moveId)).groupBy(stateMoveItems.step);
  return new Map(rows.map((r) => [r.step as Step, Number(r.n)]));
}

function progressOf(counts: Map<Step, number>) {
  const n = (...steps: readonly Step[]) => steps.reduce((sum, s) => sum + (counts.get(s) ?? 0), 0);
  return { total: n(...counts.keys()), done: n("done"), failed: n("failed"), rolledBack: n("rolled_back"), inFlight: n(...MOVE_STEPS_IN_FLIGHT) };
}

/** Which items a bounded view carries first: failed, then in flight, then waiting; the ended ones (null here: last) after. */
const shownFirst = (step: SQL | AnyColumn) => sql`array_position(array[${sql.join(["failed", ...MOVE_STEPS_IN_FLIGHT, "pending"].map((s) => sql`${s}`), sql`, `)}]::text[], ${step})`;

/**
 * A live view's counts over all of the move's items and the ids of the `limit` items it carries (item ids sort as the
 * plan ordered them: by environment, then component), from one read of the move's rows: a count and a pick apart read
 * them twice, about 11 ms each at 10 000 items while the move's own steps kept Postgres busy.
 */
async function liveSelection(db: Queryable, moveId: string, limit: number): Promise<{ counts: Map<Step, number>; ids: string[]; componentIds: string[] }> {
  const rows = rowsOf<{ id: string | null; cid: string | null; step: Step; n: number }>(
    await db.execute(sql`
      with mine as materialized (select id, component_id, step from ${stateMoveItems} where move_id = ${moveId})
      select null::text as id, null::text as cid, step, count(*)::int as n from mine group by step
      union all
      (select id, component_id, step, 0 from mine order by ${shownFirst(sql`step`)}, id limit ${limit})`),
  );
  const counts = new Map<Step, number>();
  const ids: string[] = [];
  const componentIds: string[] = [];
  for (const r of rows) r.id === null ? counts.set(r.step, Number(r.n)) : (ids.push(r.id), componentIds.push(r.cid!));
  return { counts, ids, componentIds };
}

/** A move with its items (every one, or at most `limit` of them for a live view, see MOVE_ITEMS_SHOWN) and the counts over all. */
async function moveView(db: Queryable, move: MoveRow, limit?: number) {
  const backends = new Map((await db.select().from(stateBackends).where(eq(stateBackends.orgId, move.orgId))).map((b) => [b.id, b]));
  const query = db
    .select({
      item: stateMoveItems,
      component: infraComponents.name,
      environment: environments.name,
      backendNow: infraComponents.stateBackendId,
      movedTo: stateObjects.movedToBackendId,
      kept: sql<boolean>`${stateObjects.state} is not null`,
    })
    .from(stateMoveItems)
    .innerJoin(infraComponents, eq(infraComponents.id, stateMoveItems.componentId))
    .innerJoin(environments, eq(environments.id, infraComponents.environmentId))
    .leftJoin(stateObjects, eq(stateObjects.componentId, stateMoveItems.componentId))
    .$dynamic();
  // A bounded view picks its items from the move's own rows, so only those it carries are joined: at 10 000 items, a
  // few milliseconds instead of 60. Their components are named by id as well: with the items' ids alone Postgres
  // estimated that reading every component beat 200 lookups, and took 12 ms where the lookups take 1.
  const live = limit === undefined ? null : await liveSelection(db, move.id, limit);
  const rows = !live
    ? await query.where(eq(stateMoveItems.moveId, move.id)).orderBy(asc(environments.name), asc(infraComponents.name))
    : live.ids.length
      ? await query.where(and(inArray(stateMoveItems.id, live.ids), inArray(infraComponents.id, live.componentIds))).orderBy(shownFirst(stateMoveItems.step), asc(stateMoveItems.id))
      : [];
  const name = (id: string) => backends.get(id)?.name ?? id;
  const items = rows.map(({ item, ...r }) => ({
    id: item.id,
    componentId: item.componentId,
    component: r.component,
    environment: r.environment,
    provisioner: item.provisioner as Provisioner,
    from: name(item.fromBackendId),
    to: name(item.toBackendId),
    fromKey: item.fromKey,
    toKey: item.toKey,
    size: item.size,
    serial: item.serial,
    checksum: item.checksum,
    step: item.step as Step,
    error: item.error,
    canRollBack: item.step === "done" && backends.get(item.fromBackendId)?.kind === PLANTON_MANAGED_KIND && !!r.kept && r.movedTo === item.toBackendId && r.backendNow === item.toBackendId,
  }));
  return moveViewOf(move, name, items, live?.counts);
}

type ItemView = z.output<typeof moveItemSchema> & { id: string };

/** A move as the API answers it, with `items` and the backend names `name` gives; the counts are those of `items` unless given. */
function moveViewOf(move: MoveRow, name: (id: string) => string, items: ItemView[], counts?: Map<Step, number>) {
  if (!counts) {
    counts = new Map();
    for (const i of items) counts.set(i.step, (counts.get(i.step) ?? 0) + 1);
  }
  return {
    id: move.id,
    status: move.status as "running" | "succeeded" | "failed",
    scope: move.scope as Scope,
    destinations: Object.fromEntries(Object.entries(move.destinations).map(([p, id]) => [p, name(id)])),
    startedBy: move.startedByLabel,
    createdAt: move.createdAt,
    finishedAt: move.finishedAt,
    progress: progressOf(counts),
    items,
  };
}

export async function getMove(db: Queryable, actor: Actor, raw: z.input<typeof getMoveInput>) {
  const input = getMoveInput.parse(raw);
  return moveView(db, await moveRow(db, actor.orgId, input.id), input.limit);
}

/**
 * The running move, else the latest; and how many states are still on Planton-managed storage — null while a move runs:
 * each of its steps changes the count, and counting meant reading every state row (23 ms at 10 000 states) on each
 * read of a watched move, a third of the Postgres time the move itself had.
 */
export async function currentMove(db: Queryable, actor: Actor) {
  // One read (a running move first): read apart, a move started between them was taken as the latest yet not as running.
  const [latest] = await db
    .select()
    .from(stateMoves)
    .where(eq(stateMoves.orgId, actor.orgId))
    .orderBy(desc(sql`${stateMoves.status} = 'running'`), desc(stateMoves.createdAt), desc(stateMoves.id))
    .limit(1);
  const remaining = async () => {
    const [{ n }] = await db
      .select({ n: sql<number>`count(*)::int` })
      .from(stateObjects)
      .where(and(eq(stateObjects.orgId, actor.orgId), isNotNull(stateObjects.state), isNull(stateObjects.movedToBackendId)));
    return Number(n);
  };
  return { move: latest ? await moveView(db, latest, MOVE_ITEMS_SHOWN) : null, remainingOnPlanton: latest?.status === "running" ? null : await remaining() };
}

/** Between two reads of a watched move, at least this long: a page needs a few frames a second, not one per committed step. */
export const MOVE_WATCH_INTERVAL_MS = 250;
/** A watched move is read again after this long without a NOTIFY (one lost to a reconnect is picked up). */
const MOVE_WATCH_SAFETY_MS = 15_000;

type CurrentMove = Awaited<ReturnType<typeof currentMove>>;

/**
 * One reader of an organization's current move per database handle in this process, shared by every page watching
 * it: each read answers them all, so a second admin with the wizard open costs the database nothing more (each read
 * at 10 000 states is 20–30 ms of Postgres while the move keeps it busy). It lives while someone watches.
 */
interface MoveWatch {
  /** The latest read and how many reads there have been (a page waits for one newer than it has). */
  value: CurrentMove | null;
  version: number;
  error: unknown;
  watchers: number;
  /** Woken after each read (and on failure). */
  waiting: Set<() => void>;
  stop: AbortController;
}
const gw = globalThis as unknown as { __plantonMoveWatches?: Map<DatabaseHandle, Map<string, MoveWatch>> };
const moveWatches = (gw.__plantonMoveWatches ??= new Map());

function joinMoveWatch(handle: DatabaseHandle, actor: Actor): MoveWatch {
  let byOrg = moveWatches.get(handle);
  if (!byOrg) moveWatches.set(handle, (byOrg = new Map()));
  let w = byOrg.get(actor.orgId);
  if (!w) {
    const watch: MoveWatch = { value: null, version: 0, error: null, watchers: 0, waiting: new Set(), stop: new AbortController() };
    const wakeAll = () => {
      const waiting = [...watch.waiting];
      watch.waiting.clear();
      for (const wake of waiting) wake();
    };
    void readMoveWatch(handle, actor, watch.stop.signal, (value) => ((watch.value = value), (watch.version += 1), wakeAll())).catch((e) => {
      watch.error = e;
      if (byOrg!.get(actor.orgId) === watch) byOrg!.delete(actor.orgId);
      wakeAll();
    });
    byOrg.set(actor.orgId, (w = watch));
  }
  w.watchers += 1;
  return w;
}

function leaveMoveWatch(handle: DatabaseHandle, orgId: string, w: MoveWatch) {
  w.watchers -= 1;
  if (w.watchers > 0) return;
  w.stop.abort();
  const byOrg = moveWatches.get(handle);
  if (byOrg?.get(orgId) === w) byOrg.delete(orgId);
  if (byOrg && !byOrg.size) moveWatches.delete(handle);
}

/**
 * The shared reader: reads at once, then again after each NOTIFY of a committed step, at most once every
 * MOVE_WATCH_INTERVAL_MS (the NOTIFYs in between are covered by that one read), until `signal` aborts.
 */
async function readMoveWatch(handle: DatabaseHandle, actor: Actor, signal: AbortSignal, publish: (value: CurrentMove) => void) {
  let dirty = true;
  let wake: (() => void) | null = null;
  const unsubscribe = await subscribeChannel(handle, STATE_MOVES_CHANNEL, (payload) => {
    if (payload === "" || payload.startsWith(`${actor.orgId}:`)) (dirty = true), wake?.();
  });
  /** Waits `ms`, or less when `signal` aborts, or (when `onNotify`) a NOTIFY comes. */
  const pause = (ms: number, onNotify: boolean) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener("abort", done);
      if (onNotify) wake = done;
    });
  let lastRead = -Infinity;
  try {
    while (!signal.aborted) {
      if (!dirty) {
        await pause(MOVE_WATCH_SAFETY_MS, true);
        dirty = true;
        continue;
      }
      const early = lastRead + MOVE_WATCH_INTERVAL_MS - performance.now();
      if (early > 0) await pause(early, false);
      if (signal.aborted) break;
      dirty = false;
      lastRead = performance.now();
      const value = await currentMove(handle.db, actor);
      if (!signal.aborted) publish(value);
    }
  } finally {
    unsubscribe();
  }
}

/**
 * The organization's current move as it changes, until `signal` aborts: the latest read of the organization's shared
 * reader at once (or its first), then each newer one. A page that falls behind gets the latest, not every read.
 */
export async function* watchCurrentMove(handle: DatabaseHandle, actor: Actor, signal?: AbortSignal) {
  const w = joinMoveWatch(handle, actor);
  let seen = 0;
  try {
    while (!signal?.aborted) {
      if (w.version > seen) {
        seen = w.version;
        yield w.value!;
        continue;
      }
      if (w.error) throw w.error;
      await new Promise<void>((resolve) => {
        const done = () => {
          signal?.removeEventListener("abort", done);
          w.waiting.delete(done);
          resolve();
        };
        w.waiting.add(done);
        signal?.addEventListener("abort", done);
      });
    }
  } finally {
    leaveMoveWatch(handle, actor.orgId, w);
  }
}
