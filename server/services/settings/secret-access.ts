// Who may use a secret: jobs of the whole organization, or only of the environments it names.
// Preflight and the runner's secret read both ask here, so the two can never disagree.
import { and, eq, inArray } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { secretEnvironments, secrets } from "@/db/schema";

export const SECRETS_PAGE = "Settings → Secrets & Variables";

export const secretNotAllowedMessage = (environment: string, name: string) =>
  `Nothing ran: environment ${environment} may not use the secret ${name}. Allow it in ${SECRETS_PAGE} (scope: environments ${environment}, or the organization), then run the job again.`;

export const missingSecretMessage = (name: string) =>
  `Nothing ran: the spec references the secret ${name}, which does not exist. Create it in ${SECRETS_PAGE}, or fix the reference in the component's spec, then run the job again.`;

type SecretRow = typeof secrets.$inferSelect;

export type SecretUse = { ok: true; secret: SecretRow } | { ok: false; missing: boolean; reason: string };

/** May a job in environment `environment` use each of the named secrets? One answer per name, in order. */
export async function secretUses(db: Queryable, orgId: string, environment: { id: string; name: string }, names: string[]): Promise<Map<string, SecretUse>> {
  const answers = new Map<string, SecretUse>();
  if (!names.length) return answers;
  const rows = await db.select().from(secrets).where(and(eq(secrets.orgId, orgId), inArray(secrets.name, names)));
  const scoped = rows.filter((r) => r.scope === "environment");
  const allowed = scoped.length
    ? new Set(
        (
          await db
            .select({ secretId: secretEnvironments.secretId })
            .from(secretEnvironments)
            .where(and(inArray(secretEnvironments.secretId, scoped.map((r) => r.id)), eq(secretEnvironments.environmentId, environment.id)))
        ).map((r) => r.secretId),
      )
    : new Set<string>();
  for (const name of names) {
    const row = rows.find((r) => r.name === name);
    if (!row) answers.set(name, { ok: false, missing: true, reason: missingSecretMessage(name) });
    else if (row.scope === "environment" && !allowed.has(row.id)) answers.set(name, { ok: false, missing: false, reason: secretNotAllowedMessage(environment.name, name) });
    else answers.set(name, { ok: true, secret: row });
  }
  return answers;
}
