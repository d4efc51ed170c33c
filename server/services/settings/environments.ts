import { and, count, eq } from "drizzle-orm";
import { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { environments, infraComponents } from "@/db/schema";
import { newId } from "@/lib/ids";
import { recordAudit } from "../../audit";
import { conflict, isUniqueViolation, notFound, PlantonError } from "../../errors";
import type { Actor } from "../../actor";
import { environmentNameSchema } from "@/lib/names";

export const environmentInput = z.object({
  name: environmentNameSchema(),
  description: z.string().max(300).default(""),
});

export async function listEnvironments(db: Queryable, orgId: string) {
  const rows = await db
    .select({ id: environments.id, name: environments.name, description: environments.description, createdAt: environments.createdAt, components: count(infraComponents.id) })
    .from(environments)
    .leftJoin(infraComponents, eq(infraComponents.environmentId, environments.id))
    .where(eq(environments.orgId, orgId))
    .groupBy(environments.id);
  const order = ["dev", "staging", "prod"];
  const rank = (n: string) => (order.includes(n) ? order.indexOf(n) : order.length);
  return rows.sort((a, b) => rank(a.name) - rank(b.name) || a.name.localeCompare(b.name));
}

export async function createEnvironment(db: Database, actor: Actor, raw: z.input<typeof environmentInput>) {
  const input = environmentInput.parse(raw);
  try {
    return await db.transaction(async (tx) => {
      const id = newId("environment");
      await tx.insert(environments).values({ id, orgId: actor.orgId, name: input.name, description: input.description });
      await recordAudit(tx, actor, { action: "environment.create", targetId: id, targetName: input.name, environment: input.name, summary: `Created environment ${input.name}` });
      return { id, ...input };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`An environment named ${input.name} already exists. Choose another name.`, "name");
    throw err;
  }
}

export async function updateEnvironment(db: Database, actor: Actor, input: { id: string; description: string }) {
  return db.transaction(async (tx) => {
    const [env] = await tx.select().from(environments).where(and(eq(environments.id, input.id), eq(environments.orgId, actor.orgId)));
    if (!env) throw notFound(`Environment ${input.id}`, "Reload the list.");
    await tx.update(environments).set({ description: input.description, updatedAt: new Date() }).where(eq(environments.id, env.id));
    await recordAudit(tx, actor, {
      action: "environment.update",
      targetId: env.id,
      targetName: env.name,
      environment: env.name,
      summary: `Changed the description of environment ${env.name}`,
      changes: { description: { from: env.description, to: input.description } },
    });
  });
}

export async function deleteEnvironment(db: Database, actor: Actor, id: string) {
  return db.transaction(async (tx) => {
    const [env] = await tx.select().from(environments).where(and(eq(environments.id, id), eq(environments.orgId, actor.orgId)));
    if (!env) throw notFound(`Environment ${id}`, "Reload the list.");
    const [{ n }] = await tx.select({ n: count() }).from(infraComponents).where(eq(infraComponents.environmentId, id));
    if (n > 0) {
      throw new PlantonError("PRECONDITION_FAILED", `Environment ${env.name} was not deleted: ${n} Infra Component${n === 1 ? "" : "s"} still belong to it. Destroy or move them first.`);
    }
    await tx.delete(environments).where(eq(environments.id, id));
    await recordAudit(tx, actor, { action: "environment.delete", targetId: id, targetName: env.name, environment: env.name, summary: `Deleted environment ${env.name}` });
  });
}
