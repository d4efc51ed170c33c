import { and, eq, inArray, isNull, or } from "drizzle-orm";
import { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { connectionAuthorizations, connections, environments, infraComponents, organizations, runners } from "@/db/schema";
import { addAuthorizationBody, authorizationLabel, type connectionAuthorizationsSchema, type listAuthorizationsInput, removeAuthorizationInput } from "@/lib/api/connection-schemas";
import { CONNECTION_PROVIDERS, fieldsSchema, shownConnectionConfig } from "@/lib/catalog";
import { newId } from "@/lib/ids";
import { diffFields, recordAudit } from "../../audit";
import { encryptSecret } from "../../crypto";
import { badRequest, conflict, isUniqueViolation, notFound, PlantonError } from "../../errors";
import type { Actor } from "../../actor";
import { nameSchema } from "@/lib/names";

/** Connections of an organization with their authorizations; credentials are never returned. */
export async function listConnections(db: Queryable, orgId: string) {
  const rows = await db
    .select({
      id: connections.id,
      name: connections.name,
      provider: connections.provider,
      description: connections.description,
      config: connections.config,
      mode: connections.mode,
      runnerId: connections.runnerId,
      runner: runners.name,
      hasCredentials: connections.credentialsEncrypted,
      createdAt: connections.createdAt,
      updatedAt: connections.updatedAt,
    })
    .from(connections)
    .leftJoin(runners, eq(runners.id, connections.runnerId))
    .where(eq(connections.orgId, orgId))
    .orderBy(connections.name);
  const auths = rows.length
    ? await db
        .select({ connectionId: connectionAuthorizations.connectionId, id: connectionAuthorizations.id, scope: connectionAuthorizations.scope, environment: environments.name })
        .from(connectionAuthorizations)
        .leftJoin(environments, eq(environments.id, connectionAuthorizations.environmentId))
        .where(inArray(connectionAuthorizations.connectionId, rows.map((r) => r.id)))
    : [];
  const usedBy = rows.length
    ? await db
        .select({ connectionId: infraComponents.connectionId, name: infraComponents.name, environment: environments.name })
        .from(infraComponents)
        .innerJoin(environments, eq(environments.id, infraComponents.environmentId))
        .where(inArray(infraComponents.connectionId, rows.map((r) => r.id)))
    : [];
  return rows.map(({ hasCredentials, ...r }) => ({
    ...r,
    config: shownConnectionConfig(r.provider, r.config) as Record<string, string>,
    hasCredentials: !!hasCredentials,
    authorizations: auths.filter((a) => a.connectionId === r.id).map(({ id, scope, environment }) => ({ id, scope, environment })),
    components: usedBy.filter((c) => c.connectionId === r.id).map(({ name, environment }) => ({ name, environment })),
  }));
}

/** The self-hosted runners of an organization that a connection can be pinned to, and the organization's default. */
export async function listRunnerChoices(db: Queryable, orgId: string) {
  const rows = await db
    .select({ id: runners.id, name: runners.name, lastSeenAt: runners.lastSeenAt })
    .from(runners)
    .where(and(eq(runners.orgId, orgId), eq(runners.kind, "self_hosted"), isNull(runners.revokedAt)))
    .orderBy(runners.name);
  const [org] = await db.select({ defaultRunnerId: organizations.defaultRunnerId }).from(organizations).where(eq(organizations.id, orgId));
  const def = rows.find((r) => r.id === org?.defaultRunnerId);
  return { runners: rows, organizationDefault: def ? `runner ${def.name}` : "a Planton-hosted runner" };
}

const connectionName = nameSchema("aws-prod");

export const connectionInput = z.object({
  name: connectionName,
  provider: z.string().min(1, { error: "Pick a provider" }),
  description: z.string().max(300).default(""),
  config: z.record(z.string(), z.string()).default({}),
  /** Credential fields in clear, only on the way in; stored encrypted, never returned. */
  credentials: z.record(z.string(), z.string()).optional(),
  mode: z.enum(["stored", "runner"]).default("stored"),
  /** A self-hosted runner of the organization; null means the organization's default runner. */
  runnerId: z.string().nullable().default(null),
});

export const updateConnectionInput = connectionInput.extend({ id: z.string() });

export const authorizationInput = z.object({
  id: z.string(),
  /** True: every environment of the organization may use the connection. */
  organization: z.boolean(),
  /** Environment names, when not organization-wide. */
  environments: z.array(z.string()).default([]),
});

function providerOf(name: string) {
  const p = CONNECTION_PROVIDERS[name];
  if (!p) {
    throw badRequest(`Unknown provider ${name}. Nothing was saved. Pick one of ${Object.keys(CONNECTION_PROVIDERS).join(", ")}.`, "provider");
  }
  return p;
}

/** Checks a set of provider fields; the error names the first wrong one, under `prefix.<field>`. */
function checkFields(fields: Parameters<typeof fieldsSchema>[0], values: Record<string, string>, prefix: "config" | "credentials", provider: string) {
  // A field left out reads as an empty one, so the message says it is required rather than "must be text".
  const filled = { ...Object.fromEntries(fields.filter((f) => f.required).map((f) => [f.name, ""])), ...values };
  const parsed = fieldsSchema(fields).safeParse(filled);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.path.length ? `${prefix}.${issue.path.join(".")}` : prefix;
    const what = prefix === "config" ? "settings" : "credentials";
    throw badRequest(`The ${provider} connection's ${what} are incomplete: ${issue.message}. Nothing was saved.`, field);
  }
  return parsed.data as Record<string, string>;
}

async function checkRunner(db: Queryable, orgId: string, runnerId: string | null, mode: "stored" | "runner") {
  if (runnerId) {
    const [r] = await db.select().from(runners).where(and(eq(runners.id, runnerId), eq(runners.orgId, orgId), eq(runners.kind, "self_hosted"), isNull(runners.revokedAt)));
    if (!r) throw badRequest(`Runner ${runnerId} is not a self-hosted runner of this organization that is still in service (a revoked runner runs nothing). Nothing was saved. Pick one from the list, or leave it empty to use the organization's default.`, "runnerId");
    return r;
  }
  if (mode === "runner") {
    const [org] = await db.select({ defaultRunnerId: organizations.defaultRunnerId }).from(organizations).where(eq(organizations.id, orgId));
    if (!org?.defaultRunnerId) {
      throw badRequest(
        "A connection in runner mode needs a self-hosted runner: it discovers credentials from its own environment, and the organization's default is a Planton-hosted runner, which has none of yours. Nothing was saved. Pick a runner, or store the credentials instead.",
        "runnerId",
      );
    }
  }
  return null;
}

function nameConflict(name: string) {
  return conflict(`A connection named ${name} already exists. Nothing was saved. Choose another name, or edit the existing one.`, "name");
}

export async function createConnection(db: Database, actor: Actor, raw: z.input<typeof connectionInput>) {
  const input = connectionInput.parse(raw);
  const provider = providerOf(input.provider);
  const config = checkFields(provider.configFields, input.config, "config", input.provider);
  const credentials = input.mode === "stored" ? checkFields(provider.credentialFields, input.credentials ?? {}, "credentials", input.provider) : null;
  const runner = await checkRunner(db, actor.orgId, input.runnerId, input.mode);
  const id = newId("connection");
  try {
    return await db.transaction(async (tx) => {
      await tx.insert(connections).values({
        id,
        orgId: actor.orgId,
        name: input.name,
        provider: input.provider,
        description: input.description,
        config,
        // A provider without credential fields (local) stores nothing.
        credentialsEncrypted: credentials && Object.keys(credentials).length ? encryptSecret(JSON.stringify(credentials)) : null,
        mode: input.mode,
        runnerId: runner?.id ?? null,
      });
      await recordAudit(tx, actor, {
        action: "connection.create",
        targetId: id,
        targetName: input.name,
        summary: `Created ${input.provider} connection ${input.name}${input.mode === "runner" ? ", using the runner's own credentials" : ""}`,
        changes: { provider: input.provider, config, mode: input.mode, runner: runner?.name ?? null, credentials: credentials ? Object.keys(credentials) : [] },
      });
      return { id, name: input.name };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw nameConflict(input.name);
    throw err;
  }
}

async function connectionOf(db: Queryable, orgId: string, id: string) {
  const [row] = await db.select().from(connections).where(and(eq(connections.id, id), eq(connections.orgId, orgId)));
  if (!row) throw notFound(`Connection ${id}`, "It may have been deleted; reload the list.");
  return row;
}

async function componentsUsing(db: Queryable, connectionId: string) {
  return db
    .select({ name: infraComponents.name, environment: environments.name })
    .from(infraComponents)
    .innerJoin(environments, eq(environments.id, infraComponents.environmentId))
    .where(eq(infraComponents.connectionId, connectionId))
    .orderBy(infraComponents.name);
}

const listed = (cs: { name: string; environment: string }[]) => cs.map((c) => `${c.name} (${c.environment})`).join(", ");

/** Edits a connection. Credentials left out are kept; sent, they replace the stored ones whole. */
export async function updateConnection(db: Database, actor: Actor, raw: z.input<typeof updateConnectionInput>) {
  const input = updateConnectionInput.parse(raw);
  const provider = providerOf(input.provider);
  const config = checkFields(provider.configFields, input.config, "config", input.provider);
  const existing = await connectionOf(db, actor.orgId, input.id);
  const providerChanged = existing.provider !== input.provider;
  if (providerChanged) {
    const used = await componentsUsing(db, existing.id);
    if (used.length) {
      throw badRequest(
        `Connection ${existing.name} still deploys ${listed(used)} through ${existing.provider}, so its provider cannot change. Nothing was saved. Create a new ${input.provider} connection instead.`,
        "provider",
      );
    }
  }
  let credentialsEncrypted: string | null = null;
  let credentialsChanged = false;
  if (input.mode === "stored") {
    const mustResend = providerChanged || (!existing.credentialsEncrypted && provider.credentialFields.length > 0);
    if (input.credentials && Object.values(input.credentials).some((v) => v !== "")) {
      const creds = checkFields(provider.credentialFields, input.credentials, "credentials", input.provider);
      credentialsEncrypted = Object.keys(creds).length ? encryptSecret(JSON.stringify(creds)) : null;
      credentialsChanged = true;
    } else if (mustResend) {
      checkFields(provider.credentialFields, {}, "credentials", input.provider);
    } else {
      credentialsEncrypted = existing.credentialsEncrypted;
    }
  } else {
    credentialsChanged = !!existing.credentialsEncrypted;
  }
  const runner = await checkRunner(db, actor.orgId, input.runnerId, input.mode);
  try {
    return await db.transaction(async (tx) => {
      const after = { name: input.name, provider: input.provider, description: input.description, config, mode: input.mode, runnerId: runner?.id ?? null };
      const changes: Record<string, unknown> = diffFields(
        { name: existing.name, provider: existing.provider, description: existing.description, config: shownConnectionConfig(existing.provider, existing.config), mode: existing.mode, runnerId: existing.runnerId },
        after,
      );
      if (credentialsChanged) changes.credentials = input.mode === "runner" ? "removed" : "replaced";
      await tx.update(connections).set({ ...after, credentialsEncrypted, updatedAt: new Date() }).where(eq(connections.id, existing.id));
      await recordAudit(tx, actor, {
        action: "connection.update",
        targetId: existing.id,
        targetName: input.name,
        summary: `Changed connection ${existing.name}: ${Object.keys(changes).join(", ") || "no change"}`,
        changes,
      });
      return { id: existing.id, name: input.name };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw nameConflict(input.name);
    throw err;
  }
}

type AuthorizationRow = { id: string; scope: "organization" | "environment"; environmentId: string | null; environment: string | null };
type NewAuthorization = Omit<AuthorizationRow, "id">;
type EnvironmentRow = typeof environments.$inferSelect;

/** The organization's environments by name, in the order given; an unknown name is refused, saying what did not happen (`notDone`). */
async function environmentsNamed(db: Queryable, actor: Actor, names: string[], notDone: string): Promise<EnvironmentRow[]> {
  if (!names.length) return [];
  const envs = (await db.select().from(environments).where(and(eq(environments.orgId, actor.orgId), inArray(environments.name, names)))).sort(
    (a, b) => names.indexOf(a.name) - names.indexOf(b.name),
  );
  const unknown = names.filter((n) => !envs.some((e) => e.name === n));
  if (unknown.length) {
    const known = await db.select({ name: environments.name }).from(environments).where(eq(environments.orgId, actor.orgId));
    throw new PlantonError(
      "NOT_FOUND",
      `Environment ${unknown.join(", ")} was not found, so ${notDone}. Pick from ${known.map((e) => e.name).join(", ") || "the environments"}, or create it in Settings → Environments.`,
      "environments",
    );
  }
  return envs;
}

async function authorizationsOf(db: Queryable, connectionIds: string[]) {
  if (!connectionIds.length) return [];
  return db
    .select({ connectionId: connectionAuthorizations.connectionId, id: connectionAuthorizations.id, scope: connectionAuthorizations.scope, environmentId: connectionAuthorizations.environmentId, environment: environments.name })
    .from(connectionAuthorizations)
    .leftJoin(environments, eq(environments.id, connectionAuthorizations.environmentId))
    .where(inArray(connectionAuthorizations.connectionId, connectionIds))
    .orderBy(connectionAuthorizations.scope, environments.name);
}

/**
 * The one writer of a connection's authorizations: `plan` says, from the current ones, what to add and
 * what to remove (or refuses); both happen in one transaction with one audit event.
 */
async function changeAuthorizations(db: Database, actor: Actor, conn: { id: string; name: string }, plan: (current: AuthorizationRow[]) => { added: NewAuthorization[]; removed: AuthorizationRow[] }) {
  return db.transaction(async (tx) => {
    const current = await authorizationsOf(tx, [conn.id]);
    const { added, removed } = plan(current);
    if (removed.length) await tx.delete(connectionAuthorizations).where(inArray(connectionAuthorizations.id, removed.map((a) => a.id)));
    if (added.length) {
      await tx.insert(connectionAuthorizations).values(added.map((a) => ({ id: newId("connectionAuthorization"), connectionId: conn.id, scope: a.scope, environmentId: a.environmentId })));
    }
    if (added.length || removed.length) {
      const words = [added.length ? `authorized ${added.map(authorizationLabel).join(", ")}` : "", removed.length ? `removed ${removed.map(authorizationLabel).join(", ")}` : ""].filter(Boolean);
      await recordAudit(tx, actor, {
        action: "connection.authorize",
        targetId: conn.id,
        targetName: conn.name,
        summary: `Connection ${conn.name}: ${words.join("; ")}`,
        changes: { added: added.map(authorizationLabel), removed: removed.map(authorizationLabel) },
      });
    }
    return { added: added.map(authorizationLabel), removed: removed.map(authorizationLabel) };
  });
}

/** Replaces who may use a connection: the whole organization, or the chosen environments. */
export async function setConnectionAuthorizations(db: Database, actor: Actor, raw: z.input<typeof authorizationInput>) {
  const input = authorizationInput.parse(raw);
  const conn = await connectionOf(db, actor.orgId, input.id);
  const wanted = input.organization ? [] : [...new Set(input.environments)];
  const envs = await environmentsNamed(db, actor, wanted, `connection ${conn.name} was not authorized`);
  const r = await changeAuthorizations(db, actor, conn, (current) => {
    const keep = (a: AuthorizationRow) => (input.organization ? a.scope === "organization" : a.scope === "environment" && wanted.includes(a.environment ?? ""));
    const added: NewAuthorization[] = input.organization
      ? current.some((a) => a.scope === "organization")
        ? []
        : [{ scope: "organization", environmentId: null, environment: null }]
      : envs.filter((e) => !current.some((a) => a.environmentId === e.id)).map((e) => ({ scope: "environment", environmentId: e.id, environment: e.name }));
    return { added, removed: current.filter((a) => !keep(a)) };
  });
  return { added: r.added.length, removed: r.removed.length };
}

type AuthorizationAnswer = z.output<typeof connectionAuthorizationsSchema>;

/** `planton connection auth list`: who may use each connection (or the one named). */
export async function listConnectionAuthorizations(db: Queryable, actor: Actor, input: z.input<typeof listAuthorizationsInput>): Promise<{ connections: AuthorizationAnswer[] }> {
  const conns = input.connection
    ? [await connectionNamed(db, actor, input.connection)]
    : await db.select().from(connections).where(eq(connections.orgId, actor.orgId)).orderBy(connections.name);
  const auths = await authorizationsOf(db, conns.map((c) => c.id));
  return {
    connections: conns.map((c) => ({
      connection: c.name,
      provider: c.provider,
      authorizations: auths.filter((a) => a.connectionId === c.id).map((a) => ({ scope: a.scope, environment: a.environment })),
    })),
  };
}

/** A connection by its name (or id), as the CLI and REST name it. */
async function connectionNamed(db: Queryable, actor: Actor, ref: string) {
  const [row] = await db
    .select()
    .from(connections)
    .where(and(eq(connections.orgId, actor.orgId), or(eq(connections.name, ref), eq(connections.id, ref))));
  if (!row) throw notFound(`Connection ${ref}`, "List the organization's connections with planton connection auth list, or see Settings → Connections.");
  return row;
}

const article = (word: string) => (/^[aeiou]/i.test(word) ? "an" : "a");

function checkProvider(conn: { name: string; provider: string }, provider: string | undefined, notDone: string) {
  if (provider !== undefined && provider !== conn.provider) {
    throw badRequest(`${notDone}: connection ${conn.name} is ${article(conn.provider)} ${conn.provider} connection, not ${provider}. Pass --provider ${conn.provider}, or name ${article(provider)} ${provider} connection (planton connection auth list shows each connection's provider).`, "provider");
  }
}

function scopedEnvironments(scope: "organization" | "environment", names: string[], notDone: string): string[] {
  const unique = [...new Set(names.map((n) => n.trim()).filter(Boolean))];
  if (scope === "environment" && !unique.length) throw badRequest(`${notDone}: scope environment needs the environments, e.g. --environments staging,prod (or use --scope organization).`, "environments");
  if (scope === "organization" && unique.length) throw badRequest(`${notDone}: scope organization covers every environment, so it takes no environments. Drop --environments, or use --scope environment.`, "environments");
  return unique;
}

async function changeAnswer(db: Queryable, actor: Actor, conn: { name: string }, change: { added: string[]; removed: string[] }) {
  const [after] = (await listConnectionAuthorizations(db, actor, { connection: conn.name })).connections;
  return { ...after, ...change };
}

/** `planton connection auth create`: lets the organization, or the environments named, use a connection (those already allowed stay). */
export async function addConnectionAuthorizations(db: Database, actor: Actor, raw: z.input<typeof addAuthorizationBody>) {
  const input = addAuthorizationBody.parse(raw);
  const conn = await connectionNamed(db, actor, input.connection);
  const notDone = `Connection ${conn.name} was not authorized`;
  checkProvider(conn, input.provider, notDone);
  const names = scopedEnvironments(input.scope, input.environments, notDone);
  const envs = await environmentsNamed(db, actor, names, `connection ${conn.name} was not authorized`);
  const change = await changeAuthorizations(db, actor, conn, (current) => ({
    added:
      input.scope === "organization"
        ? current.some((a) => a.scope === "organization")
          ? []
          : [{ scope: "organization", environmentId: null, environment: null }]
        : envs.filter((e) => !current.some((a) => a.scope === "environment" && a.environmentId === e.id)).map((e) => ({ scope: "environment", environmentId: e.id, environment: e.name })),
    removed: [],
  }));
  return changeAnswer(db, actor, conn, change);
}

/** `planton connection auth delete`: removes exactly the authorizations named; one that does not exist is refused and nothing is removed. */
export async function removeConnectionAuthorizations(db: Database, actor: Actor, raw: z.input<typeof removeAuthorizationInput>) {
  const input = removeAuthorizationInput.parse(raw);
  const conn = await connectionNamed(db, actor, input.connection);
  const notDone = `Nothing was removed from connection ${conn.name}`;
  checkProvider(conn, input.provider, notDone);
  const names = scopedEnvironments(input.scope, (input.environments ?? "").split(","), notDone);
  await environmentsNamed(db, actor, names, `nothing was removed from connection ${conn.name}`);
  const change = await changeAuthorizations(db, actor, conn, (current) => {
    const removed = input.scope === "organization" ? current.filter((a) => a.scope === "organization") : current.filter((a) => a.scope === "environment" && names.includes(a.environment ?? ""));
    const missing = input.scope === "organization" ? (removed.length ? [] : ["the organization"]) : names.filter((n) => !removed.some((a) => a.environment === n)).map((n) => `environment ${n}`);
    if (missing.length) {
      const has = current.map(authorizationLabel).join(", ") || "nobody";
      throw new PlantonError("NOT_FOUND", `${notDone}: it is not authorized for ${missing.join(", ")} (it is authorized for ${has}). See planton connection auth list --connection ${conn.name}.`, "scope");
    }
    return { added: [], removed };
  });
  return changeAnswer(db, actor, conn, change);
}

export async function deleteConnection(db: Database, actor: Actor, id: string) {
  return db.transaction(async (tx) => {
    const conn = await connectionOf(tx, actor.orgId, id);
    const used = await componentsUsing(tx, id);
    if (used.length) {
      throw new PlantonError(
        "PRECONDITION_FAILED",
        `Connection ${conn.name} was not deleted: ${used.length === 1 ? "component" : "components"} ${listed(used)} ${used.length === 1 ? "deploys" : "deploy"} through it. Point ${used.length === 1 ? "it" : "them"} at another connection or delete ${used.length === 1 ? "it" : "them"} first.`,
      );
    }
    await tx.delete(connections).where(eq(connections.id, id));
    await recordAudit(tx, actor, { action: "connection.delete", targetId: id, targetName: conn.name, summary: `Deleted ${conn.provider} connection ${conn.name}` });
  });
}
