// Who may use a secret or a variable: jobs of the whole organization, or only of the environments it names.
// Preflight and the runner's secret read both ask here, so the two can never disagree.
import { and, eq, inArray } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { secretEnvironments, secrets, variableEnvironments, variables } from "@/db/schema";

export const SECRETS_PAGE = "Settings → Secrets & Variables";

/** The two stores a spec can reference, and their scope tables. */
const STORES = {
  secret: { table: secrets, scopes: secretEnvironments, scopeId: secretEnvironments.secretId },
  variable: { table: variables, scopes: variableEnvironments, scopeId: variableEnvironments.variableId },
} as const;
export type StoreKind = keyof typeof STORES;

export const notAllowedMessage = (kind: StoreKind, environment: string, name: string) =>
  `Nothing ran: environment ${environment} may not use the ${kind} ${name}. Allow it in ${SECRETS_PAGE} (scope: environments ${environment}, or the organization), then run the job again.`;

export const missingMessage = (kind: StoreKind, name: string) =>
  `Nothing ran: the spec references the ${kind} ${name}, which does not exist. Create it in ${SECRETS_PAGE}, or fix the reference in the component's spec, then run the job again.`;

type SecretRow = typeof secrets.$inferSelect;
type VariableRow = typeof variables.$inferSelect;

export type StoreUse<Row> = { ok: true; entry: Row } | { ok: false; missing: boolean; reason: string };

/** May a job in environment `environment` use each of the named secrets (or variables)? One answer per name. */
async function storeUses<Row extends { id: string; name: string; scope: "organization" | "environment" }>(
  db: Queryable,
  kind: StoreKind,
  orgId: string,
  environment: { id: string; name: string },
  names: string[],
): Promise<Map<string, StoreUse<Row>>> {
  const answers = new Map<string, StoreUse<Row>>();
  if (!names.length) return answers;
  const store = STORES[kind];
  const rows = (await db.select().from(store.table).where(and(eq(store.table.orgId, orgId), inArray(store.table.name, names)))) as Row[];
  const scoped = rows.filter((r) => r.scope === "environment");
  const allowed = scoped.length
    ? new Set(
        (
          await db
            .select({ id: store.scopeId })
            .from(store.scopes)
            .where(and(inArray(store.scopeId, scoped.map((r) => r.id)), eq(store.scopes.environmentId, environment.id)))
        ).map((r) => r.id),
      )
    : new Set<string>();
  for (const name of names) {
    const row = rows.find((r) => r.name === name);
    if (!row) answers.set(name, { ok: false, missing: true, reason: missingMessage(kind, name) });
    else if (row.scope === "environment" && !allowed.has(row.id)) answers.set(name, { ok: false, missing: false, reason: notAllowedMessage(kind, environment.name, name) });
    else answers.set(name, { ok: true, entry: row });
  }
  return answers;
}

export const secretUses = (db: Queryable, orgId: string, environment: { id: string; name: string }, names: string[]) => storeUses<SecretRow>(db, "secret", orgId, environment, names);
export const variableUses = (db: Queryable, orgId: string, environment: { id: string; name: string }, names: string[]) => storeUses<VariableRow>(db, "variable", orgId, environment, names);
