// Secrets a job may read (only those its IaC input references) and the outputs it reports:
// sensitive values go to the organization's secret store and come back as `$secret/<name>`.
import { and, eq } from "drizzle-orm";
import type { Database } from "@/db/client";
import { infraComponents, infraJobs, secrets } from "@/db/schema";
import { newId } from "@/lib/ids";
import type { OutputsPayload } from "@/lib/runner-protocol";
import { systemActor } from "../../actor";
import { recordAudit } from "../../audit";
import { decryptSecret, encryptSecret } from "../../crypto";
import { notFound, PlantonError } from "../../errors";
import { sameAttempt, type JobAccess } from "./job-access";

export const secretRef = (name: string) => `$secret/${name}`;

export async function readJobSecret(db: Database, access: JobAccess, name: string) {
  const [job] = await db.select({ iacInput: infraJobs.iacInput }).from(infraJobs).where(eq(infraJobs.id, access.jobId));
  const referenced = new Set([...JSON.stringify(job?.iacInput ?? null).matchAll(/\$secret\/([A-Za-z0-9_.-]+)/g)].map((m) => m[1]));
  if (!referenced.has(name)) {
    throw new PlantonError("FORBIDDEN", `Nothing was read: job ${access.jobId} does not reference the secret ${name}. A job credential reads only the secrets its IaC input names.`);
  }
  const [row] = await db.select().from(secrets).where(and(eq(secrets.orgId, access.orgId), eq(secrets.name, name)));
  if (!row) throw notFound(`Secret ${name}`, "Create it in Settings → Secrets, then run the job again.");
  return { value: decryptSecret(row.valueEncrypted) };
}

export const outputSecretName = (component: string, output: string) => `${component}-${output}`;

export async function saveOutputs(db: Database, access: JobAccess, body: { attemptId: string; outputs: Record<string, { value: unknown; sensitive: boolean }> }): Promise<OutputsPayload> {
  sameAttempt(access, body.attemptId);
  return db.transaction(async (tx) => {
    const [row] = await tx
      .select({ component: infraComponents.name })
      .from(infraJobs)
      .innerJoin(infraComponents, eq(infraComponents.id, infraJobs.componentId))
      .where(eq(infraJobs.id, access.jobId));
    const out: OutputsPayload["outputs"] = {};
    for (const [name, o] of Object.entries(body.outputs)) {
      if (!o.sensitive) {
        out[name] = { value: o.value, sensitive: false };
        continue;
      }
      const secretName = outputSecretName(row.component, name);
      const value = typeof o.value === "string" ? o.value : JSON.stringify(o.value);
      await tx
        .insert(secrets)
        .values({ id: newId("secret"), orgId: access.orgId, name: secretName, description: `Output ${name} of ${row.component} (job ${access.jobId})`, valueEncrypted: encryptSecret(value) })
        .onConflictDoUpdate({ target: [secrets.orgId, secrets.name], set: { valueEncrypted: encryptSecret(value), updatedAt: new Date() } });
      await recordAudit(tx, { ...systemActor(access.orgId), label: `job ${access.jobId}` }, {
        action: "secret.write",
        targetType: "secret",
        summary: `Stored the sensitive output ${name} of ${row.component} as secret ${secretName}`,
      });
      out[name] = { value: secretRef(secretName), sensitive: true };
    }
    await tx.update(infraJobs).set({ outputs: out }).where(eq(infraJobs.id, access.jobId));
    return { outputs: out };
  });
}
