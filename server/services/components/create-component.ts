// Creating an Infra Component (the direct path: its first update job is queued with it), and the
// checks every create and change makes: the spec against its kind, the connection's provider, the backend.
import { and, eq } from "drizzle-orm";
import type { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { connections, infraComponents, stateBackends } from "@/db/schema";
import { createComponentBody } from "@/lib/api/component-schemas";
import { fieldsSchema, withDefaults } from "@/lib/catalog";
import { newId } from "@/lib/ids";
import { recordAudit } from "../../audit";
import { badRequest, conflict, isUniqueViolation, notFound } from "../../errors";
import type { Actor } from "../../actor";
import { getCatalogKind, type CatalogKind } from "../catalog";
import { checkFieldValue } from "../modules/inputs";
import { moduleRef, pinnedModule } from "../modules/resolve";
import { environmentByName } from "../organizations/lookup";
import { createJob } from "../jobs/create-job";
import { recordVersion } from "./versions";
import { getComponentView, type ComponentChange } from "./views";

/** Validates a spec against its kind; the error names every wrong field and what it accepts (the form marks the first). */
export function validateSpec(kind: CatalogKind, spec: Record<string, unknown>) {
  // A required text field left out reads as an empty one, so the message says it is required rather than "must be text".
  const filled = { ...Object.fromEntries(kind.fields.filter((f) => f.required && f.type === "string").map((f) => [f.name, ""])), ...spec };
  const parsed = fieldsSchema(kind.fields).safeParse(filled);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.path.length ? `spec.${issue.path.join(".")}` : "spec";
    throw badRequest(`The spec does not match ${kind.kind}: ${firstPerField(parsed.error.issues).join("; ")}. Nothing was saved.`, field);
  }
  // Fields derived from a module's variables: their HCL type and validation blocks, each message naming its field.
  const problems = kind.fields.flatMap((f) => (parsed.data[f.name] === undefined || (!f.hclType && !f.validations) ? [] : [[f.name, checkFieldValue(f, parsed.data[f.name])] as const])).filter(([, p]) => p);
  if (problems.length) throw badRequest(`The spec does not match ${kind.kind}: ${problems.map(([, p]) => p).join("; ")}. Nothing was saved.`, `spec.${problems[0][0]}`);
  return withDefaults(kind.fields, parsed.data as Record<string, unknown>);
}

/** One message per field: the first check it failed (an empty name is "required", not also "must be like …"). */
function firstPerField(issues: { path: PropertyKey[]; message: string }[]): string[] {
  const seen = new Set<string>();
  return issues.filter((i) => !seen.has(i.path.join(".")) && !!seen.add(i.path.join("."))).map((i) => i.message.replace(/\.$/, ""));
}

/** Finds a connection by name and checks it deploys through the provider the kind needs. */
export async function connectionForKind(db: Queryable, orgId: string, kind: CatalogKind, name: string) {
  const [conn] = await db.select().from(connections).where(and(eq(connections.orgId, orgId), eq(connections.name, name)));
  if (!conn) throw notFound(`Connection ${name}`, "Pick one from the list, or create it in Settings → Connections.");
  if (conn.provider !== kind.provider) {
    throw badRequest(
      `Connection ${name} is ${article(conn.provider)} ${conn.provider} connection, but ${kind.kind} deploys through ${article(kind.provider)} ${kind.provider} connection. Pick ${article(kind.provider)} ${kind.provider} connection, or create one in Settings → Connections.`,
      "connection",
    );
  }
  return conn;
}

const article = (word: string) => (/^[aeiou]/i.test(word) ? "an" : "a");

export async function stateBackendByName(db: Queryable, orgId: string, name: string) {
  const [b] = await db.select().from(stateBackends).where(and(eq(stateBackends.orgId, orgId), eq(stateBackends.name, name)));
  if (!b) throw notFound(`State backend ${name}`, "Pick one from Settings → State Backends, or leave it empty to use the organization's default.");
  return b;
}

/**
 * Saves the component at spec version 1 and, unless deploy is false (a draft), queues its first update
 * job under the flow control that applies, in the same transaction: both are recorded, or neither.
 */
export async function createComponentAndDeploy(db: Database, actor: Actor, raw: z.input<typeof createComponentBody>): Promise<ComponentChange> {
  const input = createComponentBody.parse(raw);
  const env = await environmentByName(db, actor.orgId, input.environment).catch(withField("environment"));
  const kind = await getCatalogKind(db, actor.orgId, input.kind).catch(withField("kind"));
  const spec = validateSpec(kind, input.spec);
  const conn = input.connection ? await connectionForKind(db, actor.orgId, kind, input.connection).catch(withField("connection")) : null;
  const backend = input.stateBackend ? await stateBackendByName(db, actor.orgId, input.stateBackend).catch(withField("stateBackend")) : null;
  const pinned = input.module ? await pinnedModule(db, actor.orgId, kind.kind, input.module) : null;
  const id = newId("infraComponent");
  try {
    const job = await db.transaction(async (tx) => {
      await tx.insert(infraComponents).values({
        id,
        orgId: actor.orgId,
        environmentId: env.id,
        kind: kind.kind,
        name: input.name,
        description: input.description,
        spec,
        connectionId: conn?.id ?? null,
        stateBackendId: backend?.id ?? null,
        customModuleId: pinned?.id ?? null,
        status: "draft",
        specVersion: 1,
        createdBy: actor.userId,
      });
      await recordVersion(tx, actor, id, "first");
      await recordAudit(tx, actor, {
        action: "component.create",
        targetId: id,
        targetName: input.name,
        environment: env.name,
        summary: `Created ${kind.kind} ${input.name} in ${env.name}${input.deploy ? "" : " as a draft (nothing deployed)"}`,
        // A spec holds secrets only as `$secret/NAME` references, so it is recorded as written.
        changes: { kind: kind.kind, description: input.description, spec, connection: conn?.name ?? null, stateBackend: backend?.name ?? null, module: pinned ? moduleRef(pinned) : null, version: 1, deploy: input.deploy },
      });
      return input.deploy ? createJob(tx, actor, { componentId: id, operation: "update", versionMessage: input.versionMessage }) : null;
    });
    return { component: await getComponentView(db, actor, id), job, queuedBehind: null };
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw conflict(`A component named ${input.name} already exists in ${env.name}. Choose another name, or open the existing one.`, "name");
    }
    throw err;
  }
}

export function withField(field: string) {
  return (e: unknown): never => {
    throw Object.assign(e as Error, { field });
  };
}
