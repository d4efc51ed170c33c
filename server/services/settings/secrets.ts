import { and, eq } from "drizzle-orm";
import { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { secrets, variables } from "@/db/schema";
import { newId } from "@/lib/ids";
import { diffFields, recordAudit } from "../../audit";
import { decryptSecret, encryptSecret } from "../../crypto";
import { badRequest, conflict, isUniqueViolation, notFound } from "../../errors";
import type { Actor } from "../../actor";
import { STORE_NAME, STORE_NAME_RULE } from "@/lib/store-names";

export { STORE_NAME };

const storeName = z
  .string()
  .trim()
  .max(128, { error: "Name must be at most 128 characters" })
  .regex(STORE_NAME, { error: `Name must be ${STORE_NAME_RULE}` });

export const createSecretInput = z.object({
  name: storeName,
  description: z.string().max(300).default(""),
  value: z.string().min(1, { error: "Enter the secret's value" }).max(64 * 1024),
});

export const updateSecretInput = z.object({
  id: z.string(),
  description: z.string().max(300).optional(),
  /** A new value replaces the stored one; left out, the value is kept. */
  value: z.string().min(1, { error: "Enter the new value, or leave it out to keep the current one" }).max(64 * 1024).optional(),
});

export const variableInput = z.object({
  name: storeName,
  description: z.string().max(300).default(""),
  value: z.string().max(64 * 1024),
});

export const updateVariableInput = z.object({ id: z.string(), description: z.string().max(300).optional(), value: z.string().max(64 * 1024).optional() });

/** Secrets of an organization: names and dates only. The value never leaves the server this way, not even for admins. */
export async function listSecrets(db: Queryable, orgId: string) {
  return db
    .select({ id: secrets.id, name: secrets.name, description: secrets.description, createdAt: secrets.createdAt, updatedAt: secrets.updatedAt })
    .from(secrets)
    .where(eq(secrets.orgId, orgId))
    .orderBy(secrets.name);
}

/** A secret's value in clear, for a job that references it. Not reachable from the console. */
export async function secretValue(db: Queryable, orgId: string, name: string): Promise<string> {
  const [row] = await db.select({ valueEncrypted: secrets.valueEncrypted }).from(secrets).where(and(eq(secrets.orgId, orgId), eq(secrets.name, name)));
  if (!row) throw notFound(`Secret ${name}`, "Create it in Settings → Secrets and Variables.");
  return decryptSecret(row.valueEncrypted);
}

const secretConflict = (name: string) => conflict(`A secret named ${name} already exists. Nothing was saved. Choose another name, or replace the existing secret's value.`, "name");

export async function createSecret(db: Database, actor: Actor, raw: z.input<typeof createSecretInput>) {
  const input = createSecretInput.parse(raw);
  const id = newId("secret");
  try {
    return await db.transaction(async (tx) => {
      await tx.insert(secrets).values({ id, orgId: actor.orgId, name: input.name, description: input.description, valueEncrypted: encryptSecret(input.value) });
      await recordAudit(tx, actor, { action: "secret.create", targetType: "secret", targetId: id, summary: `Created secret ${input.name}`, changes: { description: input.description } });
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
    await tx
      .update(secrets)
      .set({ description: input.description ?? row.description, valueEncrypted: input.value !== undefined ? encryptSecret(input.value) : row.valueEncrypted, updatedAt: new Date() })
      .where(eq(secrets.id, row.id));
    await recordAudit(tx, actor, {
      action: "secret.update",
      targetType: "secret",
      targetId: row.id,
      summary: input.value !== undefined ? `Replaced the value of secret ${row.name}` : `Changed the description of secret ${row.name}`,
      changes,
    });
  });
}

export async function deleteSecret(db: Database, actor: Actor, id: string) {
  return db.transaction(async (tx) => {
    const [row] = await tx.select({ id: secrets.id, name: secrets.name }).from(secrets).where(and(eq(secrets.id, id), eq(secrets.orgId, actor.orgId)));
    if (!row) throw notFound(`Secret ${id}`, "It may have been deleted already; reload the list.");
    await tx.delete(secrets).where(eq(secrets.id, id));
    await recordAudit(tx, actor, { action: "secret.delete", targetType: "secret", targetId: id, summary: `Deleted secret ${row.name}` });
  });
}

export async function listVariables(db: Queryable, orgId: string) {
  return db
    .select({ id: variables.id, name: variables.name, description: variables.description, value: variables.value, createdAt: variables.createdAt, updatedAt: variables.updatedAt })
    .from(variables)
    .where(eq(variables.orgId, orgId))
    .orderBy(variables.name);
}

const variableConflict = (name: string) => conflict(`A variable named ${name} already exists. Nothing was saved. Choose another name, or edit the existing variable.`, "name");

export async function createVariable(db: Database, actor: Actor, raw: z.input<typeof variableInput>) {
  const input = variableInput.parse(raw);
  const id = newId("variable");
  try {
    return await db.transaction(async (tx) => {
      await tx.insert(variables).values({ id, orgId: actor.orgId, ...input });
      await recordAudit(tx, actor, { action: "variable.create", targetType: "variable", targetId: id, summary: `Created variable ${input.name}`, changes: { value: input.value, description: input.description } });
      return { id, name: input.name };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw variableConflict(input.name);
    throw err;
  }
}

export async function updateVariable(db: Database, actor: Actor, raw: z.input<typeof updateVariableInput>) {
  const input = updateVariableInput.parse(raw);
  if (input.value === undefined && input.description === undefined) throw badRequest("Nothing to change: send a new value or description.", "value");
  return db.transaction(async (tx) => {
    const [row] = await tx.select().from(variables).where(and(eq(variables.id, input.id), eq(variables.orgId, actor.orgId)));
    if (!row) throw notFound(`Variable ${input.id}`, "It may have been deleted; reload the list.");
    const changes = diffFields({ value: row.value, description: row.description }, { value: input.value, description: input.description });
    await tx
      .update(variables)
      .set({ value: input.value ?? row.value, description: input.description ?? row.description, updatedAt: new Date() })
      .where(eq(variables.id, row.id));
    await recordAudit(tx, actor, {
      action: "variable.update",
      targetType: "variable",
      targetId: row.id,
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
    await recordAudit(tx, actor, { action: "variable.delete", targetType: "variable", targetId: id, summary: `Deleted variable ${row.name}` });
  });
}
