// The job's connection, as its runner hands it to the engine: the stored credentials of the connection
// the job deploys through (and nothing else), while the connection is authorized for the job's
// environment, mapped to the environment variables its provider's engines read (lib/catalog.ts
// CONNECTION_PROVIDERS[…].env). A runner-mode connection stores none: the job's runner has them in its own environment.
import { and, eq } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { connections, environments, infraComponents, infraJobs } from "@/db/schema";
import { CONNECTION_PROVIDERS } from "@/lib/catalog";
import type { JobConnectionEnv } from "@/lib/runner-protocol";
import { decryptSecret } from "../../crypto";
import { conflict, PlantonError } from "../../errors";
import { isAuthorized, unauthorizedConnectionMessage } from "../jobs/preflight";
import type { JobAccess } from "./job-access";

/** The environment variables of the connection the job deploys through; empty when it has none or it is runner-mode. */
export async function readJobConnection(db: Queryable, access: JobAccess): Promise<JobConnectionEnv> {
  const [job] = await db
    .select({ iacInput: infraJobs.iacInput, environmentId: environments.id, environment: environments.name })
    .from(infraJobs)
    .innerJoin(infraComponents, eq(infraComponents.id, infraJobs.componentId))
    .innerJoin(environments, eq(environments.id, infraComponents.environmentId))
    .where(eq(infraJobs.id, access.jobId));
  const ref = job?.iacInput?.connection ?? null;
  if (!ref) return { provider: null, mode: null, env: {} };
  if (ref.mode === "runner") return { provider: ref.provider, mode: "runner", env: {} };
  const [conn] = await db.select().from(connections).where(and(eq(connections.orgId, access.orgId), eq(connections.name, ref.name)));
  if (!conn || conn.provider !== ref.provider) {
    throw conflict(`Nothing was read: connection ${ref.name}, which job ${access.jobId} was created with, was deleted or changed provider since. Run the job again to use the component's connection now.`);
  }
  // Checked again at the read: an authorization withdrawn since the job was queued hands over nothing.
  if (!(await isAuthorized(db, conn.id, job!.environmentId))) throw new PlantonError("FORBIDDEN", unauthorizedConnectionMessage(job!.environment, conn.provider, conn.name));
  const mapping = CONNECTION_PROVIDERS[conn.provider]?.env ?? {};
  const fields: Record<string, unknown> = {
    ...((conn.config ?? {}) as Record<string, unknown>),
    ...(conn.credentialsEncrypted ? (JSON.parse(decryptSecret(conn.credentialsEncrypted)) as Record<string, unknown>) : {}),
  };
  const env: Record<string, string> = {};
  for (const [field, variable] of Object.entries(mapping)) if (typeof fields[field] === "string" && fields[field] !== "") env[variable] = fields[field] as string;
  return { provider: conn.provider, mode: "stored", env };
}
