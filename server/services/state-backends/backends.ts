// Managing an organization's state backends: list, get, create and update (each after an access test),
// delete, and the default backend per provisioner. Credentials come from the connection a backend
// names and are never on its row or in an answer. Planton-managed always exists and cannot be changed.
import { and, eq, inArray } from "drizzle-orm";
import type { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { connections, stateBackendDefaults, stateBackends, stateMoves } from "@/db/schema";
import type { setDefaultBody, stateBackendBody, stateBackendPatch, testAccessBody } from "@/lib/api/state-schemas";
import { CONNECTION_PROVIDERS, PROVISIONERS, withDefaults, fieldsSchema, type Provisioner, type SpecField } from "@/lib/catalog";
import { newId } from "@/lib/ids";
import { backendNameSchema, isStateBackendKind, shownBackendConfig, PLANTON_MANAGED_KIND, STATE_BACKEND_KIND_NAMES, STATE_BACKEND_KINDS, type StateBackendKind } from "@/lib/state-backend-kinds";
import type { Actor } from "../../actor";
import { diffFields, recordAudit } from "../../audit";
import { decryptSecret } from "../../crypto";
import { badRequest, conflict, isUniqueViolation, notFound, PlantonError } from "../../errors";
import { runAccessTest, type AccessCheck } from "./access-test";
import { localFolderFix, localFolderRefusal, localStateFolders, sharedFolderRefusal, sharedFolderRefusalAtSave, type LocalStateFolders } from "./local-folder";
import { backendsAndDefaults, servedComponents, type BackendRow, type ServedComponent } from "./served";
import { firstAndMore } from "@/lib/display";

export type StateBackendInput = z.input<typeof stateBackendBody>;
export type StateBackendPatch = z.input<typeof stateBackendPatch>;

const CREATABLE = STATE_BACKEND_KIND_NAMES.filter((k) => STATE_BACKEND_KINDS[k].creatable);
const titleOf = (kind: string) => (isStateBackendKind(kind) ? STATE_BACKEND_KINDS[kind].title : kind);

/** How a refused save begins: "State backend x was not created" / "… was not changed". */
type Verb = "created" | "changed" | "tested";
const notDone = (name: string, verb: Verb) => (verb === "tested" ? `The access test of state backend ${name} did not run` : `State backend ${name} was not ${verb}`);

function plantonManagedRefusal(name: string, verb: "created" | "changed" | "deleted", field?: string) {
  return badRequest(
    `State backend ${name} was not ${verb}: Planton-managed storage always exists, one per organization, and cannot be created, edited or deleted. ${verb === "created" ? `Pick another kind: ${CREATABLE.join(", ")}` : "Create a backend of your own in Settings → State Backends (planton infra state-backend create) and make it the default"}.`,
    field,
  );
}

/** What was typed, cut short when it is long, for a refusal to echo. */
const shortened = (v: string) => (v.length > 60 ? `${v.slice(0, 57)}…` : v);

function kindOf(kind: string, name: string, verb: Verb): StateBackendKind {
  if (kind === PLANTON_MANAGED_KIND) throw plantonManagedRefusal(name, "created", "kind");
  // The kinds are listed where the fix is made (the list names the database kind, which a refusal echoing odd input should not).
  if (!isStateBackendKind(kind)) throw badRequest(`${notDone(name, verb)}: there is no state backend kind ${shortened(kind)}. Pick one of the kinds planton infra state-backend create --help lists, or choose one in Settings → State Backends.`, "kind");
  return kind;
}

/** The kind's fields checked one by one (the message names the first wrong one), with defaults filled in. */
function checkConfig(kind: StateBackendKind, raw: Record<string, unknown>, name: string, verb: Verb): Record<string, unknown> {
  const fields = STATE_BACKEND_KINDS[kind].configFields as SpecField[];
  // An empty optional field reads as left out, so its default applies; a missing required one as empty, so the message says it is required.
  const given = Object.fromEntries(Object.entries(raw).filter(([k, v]) => !(v === "" && fields.some((f) => f.name === k && !f.required))));
  const filled = { ...Object.fromEntries(fields.filter((f) => f.required).map((f) => [f.name, ""])), ...given };
  const parsed = fieldsSchema(fields).safeParse(filled);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.path.length ? String(issue.path[0]) : "";
    const fix = field ? `Set it with --config ${field}=… (or in Settings → State Backends)` : `The ${titleOf(kind)} kind takes ${fields.map((f) => f.name).join(", ") || "no settings"}`;
    throw badRequest(`${notDone(name, verb)}: ${issue.message}. ${fix}.`, field ? `config.${field}` : "config");
  }
  return withDefaults(fields, parsed.data as Record<string, unknown>);
}

type ConnectionRow = typeof connections.$inferSelect;

/** The connection a kind takes its credentials from, checked against the provider it needs. */
async function connectionFor(db: Queryable, orgId: string, kind: StateBackendKind, connection: string | null | undefined, name: string, verb: Verb): Promise<ConnectionRow | null> {
  const provider = STATE_BACKEND_KINDS[kind].connectionProvider;
  const title = STATE_BACKEND_KINDS[kind].title;
  if (!provider) {
    if (connection) throw badRequest(`${notDone(name, verb)}: the ${title} kind needs no credentials, so it takes no connection. Leave the connection out.`, "connection");
    return null;
  }
  const providerTitle = CONNECTION_PROVIDERS[provider]?.title ?? provider;
  if (!connection) {
    throw badRequest(
      `${notDone(name, verb)}: the ${title} kind takes its credentials from ${a(providerTitle)} connection, and none was named. Name one (--connection <name>), or create ${a(provider)} connection in Settings → Connections first.`,
      "connection",
    );
  }
  const [row] = await db.select().from(connections).where(and(eq(connections.orgId, orgId), eq(connections.name, connection)));
  if (!row) throw badRequest(`${notDone(name, verb)}: there is no connection named ${connection}. Pick ${a(provider)} connection from Settings → Connections, or create one there.`, "connection");
  if (row.provider !== provider) {
    throw badRequest(`${notDone(name, verb)}: connection ${connection} is ${a(row.provider)} connection, and the ${title} kind needs ${a(provider)} one. Pick ${a(provider)} connection, or create one in Settings → Connections.`, "connection");
  }
  return row;
}

/** The connection's credential values, only to keep them out of an access test's message. */
function secretsOf(conn: ConnectionRow | null): string[] {
  if (!conn?.credentialsEncrypted) return [];
  try {
    return Object.values(JSON.parse(decryptSecret(conn.credentialsEncrypted)) as Record<string, string>);
  } catch {
    return [];
  }
}

/** "a (dev), b (prod) and 3 more": the first ten components. */
export function componentsListed(cs: Pick<ServedComponent, "component" | "environment">[]): string {
  return firstAndMore(cs.map((c) => `${c.component} (${c.environment})`), 10);
}

/** "a postgres", "an aws". */
const a = (word: string) => `${/^[aeiou]/i.test(word) ? "an" : "a"} ${word}`;

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;

async function backendByName(db: Queryable, orgId: string, name: string): Promise<BackendRow> {
  const [row] = await db.select().from(stateBackends).where(and(eq(stateBackends.orgId, orgId), eq(stateBackends.name, name)));
  if (!row) throw notFound(`State backend ${name}`, "List the organization's backends with planton infra state-backend list, or see Settings → State Backends.");
  return row;
}

/** The organization's backends, each with its connection, how many components keep state there and what it is the default for. */
export async function listStateBackends(db: Queryable, actor: Actor) {
  const { backends, defaults } = await backendsAndDefaults(db, actor.orgId);
  const served = await servedComponents(db, actor.orgId);
  const connIds = [...new Set(backends.map((b) => b.connectionId).filter((id): id is string => !!id))];
  const conns = connIds.length ? await db.select({ id: connections.id, name: connections.name }).from(connections).where(inArray(connections.id, connIds)) : [];
  const planton = backends.find((b) => b.kind === PLANTON_MANAGED_KIND);
  // A provisioner without a default row keeps new states on Planton-managed storage (preflight's last resort).
  const effective = new Map(PROVISIONERS.map((p) => [p, defaults.get(p) ?? planton?.id ?? null]));
  const shaped = backends.map((b) => ({
    id: b.id,
    name: b.name,
    kind: b.kind,
    config: shownBackendConfig(b.kind, b.config),
    connection: conns.find((c) => c.id === b.connectionId)?.name ?? null,
    defaultFor: PROVISIONERS.filter((p) => effective.get(p) === b.id),
    components: served.filter((s) => s.backendId === b.id).length,
    createdAt: b.createdAt,
    updatedAt: b.updatedAt,
  }));
  const named = Object.fromEntries(PROVISIONERS.flatMap((p) => {
    const b = backends.find((x) => x.id === effective.get(p));
    return b ? [[p, b.name]] : [];
  }));
  return { backends: shaped, defaults: named };
}

export async function getStateBackend(db: Queryable, actor: Actor, input: { name: string }) {
  const { backends } = await listStateBackends(db, actor);
  const found = backends.find((b) => b.name === input.name);
  if (!found) throw notFound(`State backend ${input.name}`, "List the organization's backends with planton infra state-backend list, or see Settings → State Backends.");
  return found;
}

/** A backend's fields checked, with the connection it names; throws the product's refusal. */
async function checkedBackend(db: Queryable, actor: Actor, input: { name: string; kind: string; config: Record<string, unknown>; connection?: string | null }, verb: Verb) {
  const kind = kindOf(input.kind, input.name, verb);
  const config = checkConfig(kind, input.config, input.name, verb);
  if (kind === "local") {
    // Refused before the access test opens it, in words about the folder (opening refuses it too: local-folder.ts).
    const folder = String(config.path);
    const folders = localStateFolders(actor.orgId);
    const refused = localFolderRefusal(folders, folder) ?? (await sharedFolderRefusal(db, actor.orgId, folder));
    if (refused) throw folderRefused(folders, input.name, verb, refused);
  }
  const conn = await connectionFor(db, actor.orgId, kind, input.connection, input.name, verb);
  return { kind, config, conn, toOpen: { name: input.name, kind, orgId: actor.orgId, connectionId: conn?.id ?? null, config } };
}

const folderRefused = (folders: LocalStateFolders, name: string, verb: Verb, refused: string) => badRequest(`${notDone(name, verb)}: ${refused}. ${localFolderFix(folders)}.`, "config.path");

/** In the transaction that saves a `local` backend: its folder is still no other organization's (one may have saved since the check). */
async function claimLocalFolder(tx: Queryable, actor: Actor, name: string, kind: string, config: Record<string, unknown>, verb: "created" | "changed") {
  if (kind !== "local") return;
  const refused = await sharedFolderRefusalAtSave(tx, actor.orgId, String(config.path));
  if (refused) throw folderRefused(localStateFolders(actor.orgId), name, verb, refused);
}

function accessRefusal(name: string, verb: "created" | "changed", access: AccessCheck) {
  return new PlantonError("PRECONDITION_FAILED", `State backend ${name} was not ${verb}: ${access.error} Fix that, then ${verb === "created" ? "create" : "save"} it again (the access test runs each time).`);
}

/** Runs the access test on a saved backend (by name) or on an unsaved one (kind, config, connection). */
export async function testStateBackendAccess(db: Queryable, actor: Actor, raw: z.input<typeof testAccessBody>): Promise<AccessCheck> {
  if (raw.kind) {
    const name = raw.name ?? "(unsaved)";
    const { conn, toOpen } = await checkedBackend(db, actor, { name, kind: raw.kind, config: raw.config ?? {}, connection: raw.connection }, "tested");
    return runAccessTest(db, toOpen, secretsOf(conn));
  }
  if (!raw.name) throw badRequest("Nothing was tested: name a saved backend (name), or describe one (kind, config and connection).", "name");
  const row = await backendByName(db, actor.orgId, raw.name);
  const [conn] = row.connectionId ? await db.select().from(connections).where(eq(connections.id, row.connectionId)) : [];
  return runAccessTest(db, row, secretsOf(conn ?? null));
}

export async function createStateBackend(db: Database, actor: Actor, input: StateBackendInput) {
  const name = backendNameSchema.safeParse(input.name);
  if (!name.success) throw badRequest(`State backend ${input.name} was not created: ${name.error.issues[0].message}.`, "name");
  const { kind, config, conn, toOpen } = await checkedBackend(db, actor, { name: input.name, kind: input.kind, config: input.config ?? {}, connection: input.connection }, "created");
  const [taken] = await db.select({ id: stateBackends.id }).from(stateBackends).where(and(eq(stateBackends.orgId, actor.orgId), eq(stateBackends.name, input.name)));
  if (taken) throw nameConflict(input.name);
  const access = await runAccessTest(db, toOpen, secretsOf(conn));
  if (!access.ok) throw accessRefusal(input.name, "created", access);
  const id = newId("stateBackend");
  try {
    await db.transaction(async (tx) => {
      await claimLocalFolder(tx, actor, input.name, kind, config, "created");
      await tx.insert(stateBackends).values({ id, orgId: actor.orgId, name: input.name, kind, config, connectionId: conn?.id ?? null });
      await recordAudit(tx, actor, {
        action: "state_backend.create",
        targetId: id,
        targetName: input.name,
        summary: `Created ${titleOf(kind)} state backend ${input.name}${conn ? ` with connection ${conn.name}` : ""} (access test passed)`,
        changes: { kind, config, connection: conn?.name ?? null },
      });
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw nameConflict(input.name);
    throw err;
  }
  return { backend: await getStateBackend(db, actor, { name: input.name }), access };
}

function nameConflict(name: string) {
  return conflict(`State backend ${name} was not created: a backend with that name already exists. Choose another name, or edit the existing one.`, "name");
}

/** Changes a backend's kind, config or connection, after the access test; kind and config stay while it keeps components' state. */
export async function updateStateBackend(db: Database, actor: Actor, input: StateBackendPatch) {
  const existing = await backendByName(db, actor.orgId, input.name);
  if (existing.kind === PLANTON_MANAGED_KIND) throw plantonManagedRefusal(existing.name, "changed");
  const kind = input.kind ?? existing.kind;
  const [current] = existing.connectionId ? await db.select({ name: connections.name }).from(connections).where(eq(connections.id, existing.connectionId)) : [];
  const connection = input.connection !== undefined ? input.connection : (current?.name ?? null);
  const checked = await checkedBackend(db, actor, { name: existing.name, kind, config: input.config ?? (kind === existing.kind ? (existing.config as Record<string, unknown>) : {}), connection }, "changed");
  const before: Record<string, unknown> = { kind: existing.kind, config: shownBackendConfig(existing.kind, existing.config), connection: current?.name ?? null };
  const after = { kind: checked.kind, config: checked.config, connection: checked.conn?.name ?? null };
  const changes = diffFields(before, after);
  if (changes.kind || changes.config) {
    const served = (await servedComponents(db, actor.orgId)).filter((s) => s.backendId === existing.id);
    if (served.length) {
      throw badRequest(
        `State backend ${existing.name} was not changed: it keeps the state of ${plural(served.length, "component")} (${componentsListed(served)}), and a new kind or settings would leave those states behind. Change only its connection, or move them to another backend first (planton tofu state migrate-backend <component> --to <backend>).`,
        changes.kind ? "kind" : "config",
      );
    }
  }
  const access = await runAccessTest(db, checked.toOpen, secretsOf(checked.conn));
  if (!access.ok) throw accessRefusal(existing.name, "changed", access);
  await db.transaction(async (tx) => {
    await claimLocalFolder(tx, actor, existing.name, checked.kind, checked.config, "changed");
    await tx.update(stateBackends).set({ kind: checked.kind, config: checked.config, connectionId: checked.conn?.id ?? null, updatedAt: new Date() }).where(eq(stateBackends.id, existing.id));
    await recordAudit(tx, actor, {
      action: "state_backend.update",
      targetId: existing.id,
      targetName: existing.name,
      summary: `Changed state backend ${existing.name}: ${Object.keys(changes).join(", ") || "no change"} (access test passed)`,
      changes,
    });
  });
  return { backend: await getStateBackend(db, actor, { name: existing.name }), access };
}

/** Deletes a backend that keeps no component's state, is no default and is no running move's destination. */
export async function deleteStateBackend(db: Database, actor: Actor, input: { name: string }) {
  const row = await backendByName(db, actor.orgId, input.name);
  if (row.kind === PLANTON_MANAGED_KIND) throw plantonManagedRefusal(row.name, "deleted");
  const defaults = await db.select().from(stateBackendDefaults).where(and(eq(stateBackendDefaults.orgId, actor.orgId), eq(stateBackendDefaults.backendId, row.id)));
  if (defaults.length) {
    const ps = defaults.map((d) => d.provisioner);
    throw badRequest(
      `State backend ${row.name} was not deleted: it is the organization's default for ${ps.join(", ")}, so new components keep their state there. Make another backend the default first (planton infra state-backend set-default <backend> --provisioner ${ps[0]}), or unset it (planton infra state-backend unset-default --provisioner ${ps[0]}).`,
    );
  }
  const served = (await servedComponents(db, actor.orgId)).filter((s) => s.backendId === row.id);
  if (served.length) {
    throw badRequest(
      `State backend ${row.name} was not deleted: it keeps the state of ${plural(served.length, "component")}: ${componentsListed(served)}. Move their state to another backend first (planton tofu state migrate-backend <component> --to <backend>), then delete it.`,
    );
  }
  const running = await db.select().from(stateMoves).where(and(eq(stateMoves.orgId, actor.orgId), eq(stateMoves.status, "running")));
  if (running.some((m) => Object.values(m.destinations).includes(row.id))) {
    throw badRequest(`State backend ${row.name} was not deleted: the running state move ${running[0].id} copies states to it. Wait for the move to finish (Settings → State Backends), then delete it.`);
  }
  await db.transaction(async (tx) => {
    await tx.delete(stateBackends).where(eq(stateBackends.id, row.id));
    await recordAudit(tx, actor, { action: "state_backend.delete", targetId: row.id, targetName: row.name, summary: `Deleted ${titleOf(row.kind)} state backend ${row.name}`, changes: { kind: row.kind, config: shownBackendConfig(row.kind, row.config) } });
  });
  return { name: row.name, deleted: true as const };
}

function provisionerOf(raw: string, verb: string): Provisioner {
  if (!(PROVISIONERS as readonly string[]).includes(raw)) throw badRequest(`${verb}: there is no provisioner ${shortened(raw)}. Pick one of ${PROVISIONERS.join(", ")}.`, "provisioner");
  return raw as Provisioner;
}

/** Makes `backend` the organization's default for a provisioner: new components of it keep their state there. */
export async function setDefaultStateBackend(db: Database, actor: Actor, input: z.input<typeof setDefaultBody>) {
  const provisioner = provisionerOf(input.provisioner, "No default was set");
  const row = await backendByName(db, actor.orgId, input.backend);
  const serves = STATE_BACKEND_KINDS[row.kind as StateBackendKind]?.provisioners ?? [];
  if (!(serves as readonly string[]).includes(provisioner)) {
    const fits = STATE_BACKEND_KIND_NAMES.filter((k) => (STATE_BACKEND_KINDS[k].provisioners as readonly string[]).includes(provisioner)).map(titleOf);
    throw badRequest(
      `${row.name} was not made the default for ${provisioner}: the ${titleOf(row.kind)} kind keeps state for ${serves.join(", ")} only. Pick a backend that serves ${provisioner} (${fits.join(", ")}).`,
      "backend",
    );
  }
  const [before] = await db.select().from(stateBackendDefaults).where(and(eq(stateBackendDefaults.orgId, actor.orgId), eq(stateBackendDefaults.provisioner, provisioner)));
  if (before?.backendId !== row.id) {
    const [was] = before ? await db.select({ name: stateBackends.name }).from(stateBackends).where(eq(stateBackends.id, before.backendId)) : [];
    await db.transaction(async (tx) => {
      await tx
        .insert(stateBackendDefaults)
        .values({ orgId: actor.orgId, provisioner, backendId: row.id })
        .onConflictDoUpdate({ target: [stateBackendDefaults.orgId, stateBackendDefaults.provisioner], set: { backendId: row.id } });
      await recordAudit(tx, actor, {
        action: "state_backend.set_default",
        targetId: row.id,
        targetName: row.name,
        summary: `Made ${row.name} the default state backend for ${provisioner}: new components keep their state there`,
        changes: { provisioner, from: was?.name ?? null, to: row.name },
      });
    });
  }
  return listStateBackends(db, actor);
}

/** Removes a provisioner's default: new components of it keep their state on Planton-managed storage again. */
export async function unsetDefaultStateBackend(db: Database, actor: Actor, input: { provisioner: string }) {
  const provisioner = provisionerOf(input.provisioner, "No default was unset");
  const { backends } = await backendsAndDefaults(db, actor.orgId);
  const planton = backends.find((b) => b.kind === PLANTON_MANAGED_KIND);
  const [before] = await db.select().from(stateBackendDefaults).where(and(eq(stateBackendDefaults.orgId, actor.orgId), eq(stateBackendDefaults.provisioner, provisioner)));
  if (before && before.backendId !== planton?.id) {
    await db.transaction(async (tx) => {
      await tx.delete(stateBackendDefaults).where(and(eq(stateBackendDefaults.orgId, actor.orgId), eq(stateBackendDefaults.provisioner, provisioner)));
      await recordAudit(tx, actor, {
        action: "state_backend.unset_default",
        targetId: before.backendId,
        targetName: backends.find((b) => b.id === before.backendId)?.name ?? null,
        summary: `Unset the default state backend for ${provisioner} (${backends.find((b) => b.id === before.backendId)?.name ?? before.backendId}): new components keep their state on Planton-managed storage`,
        changes: { provisioner, from: backends.find((b) => b.id === before.backendId)?.name ?? before.backendId },
      });
    });
  }
  return listStateBackends(db, actor);
}
