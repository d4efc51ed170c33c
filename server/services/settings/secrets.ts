import { and, eq, inArray } from "drizzle-orm";
import { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { environments, secretEnvironments, secrets, variableEnvironments, variables } from "@/db/schema";
import { newId } from "@/lib/ids";
import { STORE_NAME, STORE_NAME_HINT, unstorableMessage, unstorableText } from "@/lib/secrets";
import { diffFields, recordAudit } from "../../audit";
import { decryptSecret, encryptSecret } from "../../crypto";
import { badRequest, conflict, isUniqueViolation, notFound, PlantonError } from "../../errors";
import type { Actor } from "../../actor";
import { SECRETS_PAGE } from "./secret-access";

const storeName = z
  .string()
  .trim()
  .max(128, { error: "Name must be at most 128 characters" })
  .regex(STORE_NAME, { error: `Name must be ${STORE_NAME_HINT}` });

/** Text the database can store; refused on the field that holds it, before anything is saved. */
const storable = (what: string) =>
  z.string().superRefine((s, ctx) => {
    const why = unstorableText(s);
    if (why) ctx.addIssue({ code: "custom", message: unstorableMessage(what, why) });
  });

const description = storable("description").pipe(z.string().max(300));

/** Who may use an entry: every job of the organization, or only jobs in the named environments. */
const scopeFields = {
  scope: z.enum(["organization", "environment"]).default("organization"),
  environments: z.array(z.string()).default([]),
};

export const createSecretInput = z.object({
  name: storeName,
  description: description.default(""),
  value: storable("value").pipe(z.string().min(1, { error: "Enter the secret's value" }).max(64 * 1024)),
  ...scopeFields,
});

export const updateSecretInput = z.object({
  id: z.string(),
  description: description.optional(),
  /** A new value replaces the stored one; left out, the value is kept. */
  value: storable("value").pipe(z.string().min(1, { error: "Enter the new value, or leave it out to keep the current one" }).max(64 * 1024)).optional(),
  /** Sent, the scope and its environments replace the stored ones; left out, they are kept. */
  scope: scopeFields.scope.removeDefault().optional(),
  environments: z.array(z.string()).optional(),
});

export const variableInput = z.object({
  name: storeName,
  description: description.default(""),
  value: storable("value").pipe(z.string().max(64 * 1024)),
  ...scopeFields,
});

export const updateVariableInput = z.object({
  id: z.string(),
  description: description.optional(),
  value: storable("value").pipe(z.string().max(64 * 1024)).optional(),
  scope: scopeFields.scope.removeDefault().optional(),
  environments: z.array(z.string()).optional(),
});

type Scope = "organization" | "environment";

/** The environments an environment-scoped entry names, checked to exist; [] for the organization. */
async function scopeEnvironments(db: Queryable, orgId: string, kind: "secret" | "variable", name: string, scope: Scope, names: string[]) {
  if (scope === "organization") return [];
  const wanted = [...new Set(names.map((n) => n.trim()).filter(Boolean))];
  const known = await db.select({ id: environments.id, name: environments.name }).from(environments).where(eq(environments.orgId, orgId));
  if (!wanted.length) {
    throw badRequest(`Pick at least one environment whose jobs may use the ${kind} ${name}, or make it the organization's. Nothing was saved.`, "environments");
  }
  const unknown = wanted.filter((n) => !known.some((e) => e.name === n));
  if (unknown.length) {
    throw new PlantonError(
      "NOT_FOUND",
      `Environment ${unknown.join(", ")} was not found, so the ${kind} ${name} was not saved. Pick from ${known.map((e) => e.name).join(", ") || "the environments"}, or create it in Settings → Environments.`,
      "environments",
    );
  }
  return wanted.map((n) => known.find((e) => e.name === n)!);
}

const scopeLabel = (scope: Scope, envs: { name: string }[]) => (scope === "organization" ? "the organization" : `environments ${envs.map((e) => e.name).join(", ")}`);

async function environmentNamesOf(db: Queryable, kind: "secret" | "variable", ids: string[]) {
  if (!ids.length) return new Map<string, string[]>();
  const rows =
    kind === "secret"
      ? await db
          .select({ id: secretEnvironments.secretId, name: environments.name })
          .from(secretEnvironments)
          .innerJoin(environments, eq(environments.id, secretEnvironments.environmentId))
          .where(inArray(secretEnvironments.secretId, ids))
      : await db
          .select({ id: variableEnvironments.variableId, name: environments.name })
          .from(variableEnvironments)
          .innerJoin(environments, eq(environments.id, variableEnvironments.environmentId))
          .where(inArray(variableEnvironments.variableId, ids));
  const out = new Map<string, string[]>();
  for (const r of rows.sort((a, b) => a.name.localeCompare(b.name))) out.set(r.id, [...(out.get(r.id) ?? []), r.name]);
  return out;
}

/** Secrets of an organization: names and dates only. The value never leaves the server this way, not even for admins. */
export async function listSecrets(db: Queryable, orgId: string) {
  const rows = await db
    .select({ id: secrets.id, name: secrets.name, description: secrets.description, scope: secrets.scope, createdAt: secrets.createdAt, updatedAt: secrets.updatedAt })
    .from(secrets)
    .where(eq(secrets.orgId, orgId))
    .orderBy(secrets.name);
  const envs = await environmentNamesOf(db, "secret", rows.filter((r) => r.scope === "environment").map((r) => r.id));
  return rows.map((r) => ({ ...r, environments: envs.get(r.id) ?? [] }));
}

/** A secret's value in clear, for a job that references it. Not reachable from the console. */
export async function secretValue(db: Queryable, orgId: string, name: string): Promise<string> {
  const [row] = await db.select({ valueEncrypted: secrets.valueEncrypted }).from(secrets).where(and(eq(secrets.orgId, orgId), eq(secrets.name, name)));
  if (!row) throw notFound(`Secret ${name}`, `Create it in ${SECRETS_PAGE}.`);
  return decryptSecret(row.valueEncrypted);
}

const secretConflict = (name: string) => conflict(`A secret named ${name} already exists. Nothing was saved. Choose another name, or replace the existing secret's value.`, "name");

export async function createSecret(db: Database, actor: Actor, raw: z.input<typeof createSecretInput>) {
  const input = createSecretInput.parse(raw);
  const envs = await scopeEnvironments(db, actor.orgId, "secret", input.name, input.scope, input.environments);
  const id = newId("secret");
  try {
    return await db.transaction(async (tx) => {
      await tx.insert(secrets).values({ id, orgId: actor.orgId, name: input.name, description: input.description, valueEncrypted: encryptSecret(input.value), scope: input.scope });
      if (envs.length) await tx.insert(secretEnvironments).values(envs.map((e) => ({ secretId: id, environmentId: e.id })));
      await recordAudit(tx, actor, {
        action: "secret.create",
        targetId: id,
        targetName: input.name,
        summary: `Created secret ${input.name} for ${scopeLabel(input.scope, envs)}`,
        changes: { description: input.description, scope: scopeLabel(input.scope, envs) },
      });
      return { id, name: input.name };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw secretConflict(input.name);
    throw err;
  }
}

export async function updateSecret(db: Database, actor: Actor, raw: z.input<typeof updateSecretInput>) {
  const input = updateSecretInput.parse(raw);
  return db.transaction(async (tx) => {
    const [row] = await tx.select().from(secrets).where(and(eq(secrets.id, input.id), eq(secrets.orgId, actor.orgId)));
    if (!row) throw notFound(`Secret ${input.id}`, "It may have been deleted; reload the list.");
    const changes: Record<string, unknown> = diffFields({ description: row.description }, { description: input.description });
    if (input.value !== undefined) changes.value = "replaced";
    const scope = await rescope(tx, actor.orgId, "secret", row, input);
    if (scope) changes.scope = scope;
    await tx
      .update(secrets)
      .set({
        description: input.description ?? row.description,
        valueEncrypted: input.value !== undefined ? encryptSecret(input.value) : row.valueEncrypted,
        scope: input.scope ?? row.scope,
        updatedAt: new Date(),
      })
      .where(eq(secrets.id, row.id));
    await recordAudit(tx, actor, {
      action: "secret.update",
      targetId: row.id,
      targetName: row.name,
      summary:
        input.value !== undefined
          ? `Replaced the value of secret ${row.name}`
          : scope && input.description === undefined
            ? `Secret ${row.name} may now be used by ${scope.to}`
            : `Changed the description of secret ${row.name}`,
      changes,
    });
  });
}

export async function deleteSecret(db: Database, actor: Actor, id: string) {
  return db.transaction(async (tx) => {
    const [row] = await tx.select({ id: secrets.id, name: secrets.name }).from(secrets).where(and(eq(secrets.id, id), eq(secrets.orgId, actor.orgId)));
    if (!row) throw notFound(`Secret ${id}`, "It may have been deleted already; reload the list.");
    await tx.delete(secrets).where(eq(secrets.id, id));
    await recordAudit(tx, actor, { action: "secret.delete", targetId: id, targetName: row.name, summary: `Deleted secret ${row.name}` });
  });
}

export async function listVariables(db: Queryable, orgId: string) {
  const rows = await db
    .select({ id: variables.id, name: variables.name, description: variables.description, value: variables.value, scope: variables.scope, createdAt: variables.createdAt, updatedAt: variables.updatedAt })
    .from(variables)
    .where(eq(variables.orgId, orgId))
    .orderBy(variables.name);
  const envs = await environmentNamesOf(db, "variable", rows.filter((r) => r.scope === "environment").map((r) => r.id));
  return rows.map((r) => ({ ...r, environments: envs.get(r.id) ?? [] }));
}

const variableConflict = (name: string) => conflict(`A variable named ${name} already exists. Nothing was saved. Choose another name, or edit the existing variable.`, "name");

export async function createVariable(db: Database, actor: Actor, raw: z.input<typeof variableInput>) {
  const input = variableInput.parse(raw);
  const envs = await scopeEnvironments(db, actor.orgId, "variable", input.name, input.scope, input.environments);
  const id = newId("variable");
  try {
    return await db.transaction(async (tx) => {
      await tx.insert(variables).values({ id, orgId: actor.orgId, name: input.name, description: input.description, value: input.value, scope: input.scope });
      if (envs.length) await tx.insert(variableEnvironments).values(envs.map((e) => ({ variableId: id, environmentId: e.id })));
      await recordAudit(tx, actor, {
        action: "variable.create",
        targetId: id,
        targetName: input.name,
        summary: `Created variable ${input.name} for ${scopeLabel(input.scope, envs)}`,
        changes: { value: input.value, description: input.description, scope: scopeLabel(input.scope, envs) },
      });
      return { id, name: input.name };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw variableConflict(input.name);
    throw err;
  }
}

export async function updateVariable(db: Database, actor: Actor, raw: z.input<typeof updateVariableInput>) {
  const input = updateVariableInput.parse(raw);
  if (input.value === undefined && input.description === undefined && input.scope === undefined) {
    throw badRequest("Nothing to change: send a new value, description or scope.", "value");
  }
  return db.transaction(async (tx) => {
    const [row] = await tx.select().from(variables).where(and(eq(variables.id, input.id), eq(variables.orgId, actor.orgId)));
    if (!row) throw notFound(`Variable ${input.id}`, "It may have been deleted; reload the list.");
    const changes: Record<string, unknown> = diffFields({ value: row.value, description: row.description }, { value: input.value, description: input.description });
    const scope = await rescope(tx, actor.orgId, "variable", row, input);
    if (scope) changes.scope = scope;
    await tx
      .update(variables)
      .set({ value: input.value ?? row.value, description: input.description ?? row.description, scope: input.scope ?? row.scope, updatedAt: new Date() })
      .where(eq(variables.id, row.id));
    await recordAudit(tx, actor, {
      action: "variable.update",
      targetId: row.id,
      targetName: row.name,
      summary: `Changed variable ${row.name}: ${Object.keys(changes).join(", ") || "no change"}`,
      changes,
    });
  });
}

export async function deleteVariable(db: Database, actor: Actor, id: string) {
  return db.transaction(async (tx) => {
    const [row] = await tx.select({ id: variables.id, name: variables.name }).from(variables).where(and(eq(variables.id, id), eq(variables.orgId, actor.orgId)));
    if (!row) throw notFound(`Variable ${id}`, "It may have been deleted already; reload the list.");
    await tx.delete(variables).where(eq(variables.id, id));
    await recordAudit(tx, actor, { action: "variable.delete", targetId: id, targetName: row.name, summary: `Deleted variable ${row.name}` });
  });
}

/** Replaces an entry's scope and environments when the input sends a scope; says what changed, or null. */
async function rescope(
  tx: Queryable,
  orgId: string,
  kind: "secret" | "variable",
  row: { id: string; name: string; scope: Scope },
  input: { scope?: Scope; environments?: string[] },
): Promise<{ from: string; to: string } | null> {
  if (input.scope === undefined) return null;
  const envs = await scopeEnvironments(tx, orgId, kind, row.name, input.scope, input.environments ?? []);
  const before = (await environmentNamesOf(tx, kind, [row.id])).get(row.id) ?? [];
  const from = scopeLabel(row.scope, before.map((name) => ({ name })));
  const to = scopeLabel(input.scope, envs);
  if (kind === "secret") {
    await tx.delete(secretEnvironments).where(eq(secretEnvironments.secretId, row.id));
    if (envs.length) await tx.insert(secretEnvironments).values(envs.map((e) => ({ secretId: row.id, environmentId: e.id })));
  } else {
    await tx.delete(variableEnvironments).where(eq(variableEnvironments.variableId, row.id));
    if (envs.length) await tx.insert(variableEnvironments).values(envs.map((e) => ({ variableId: row.id, environmentId: e.id })));
  }
  return from === to ? null : { from, to };
}
