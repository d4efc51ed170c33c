// Artifacts a runner uploads (plan files, logs, state snapshots): stored with their SHA-256, checked
// against the `Digest: sha-256=<base64>` header on upload and sent with it on download.
import { createHash } from "node:crypto";
import { and, eq } from "drizzle-orm";
import type { Database } from "@/db/client";
import { artifacts } from "@/db/schema";
import { newId } from "@/lib/ids";
import { badRequest, notFound } from "../../errors";
import type { JobAccess } from "./job-access";

export const ARTIFACT_KINDS = ["plan", "log", "state", "iac_input"] as const;
export const MAX_ARTIFACT_BYTES = 64 * 1024 * 1024;

export const digestHeader = (bytes: Uint8Array) => `sha-256=${createHash("sha256").update(bytes).digest("base64")}`;

export async function uploadArtifact(db: Database, access: JobAccess, input: { kind: string | null; name: string | null; digest: string | null; bytes: Uint8Array }) {
  if (!input.kind || !(ARTIFACT_KINDS as readonly string[]).includes(input.kind)) {
    throw badRequest(`Nothing was stored: kind must be one of ${ARTIFACT_KINDS.join(", ")} (got ${input.kind ?? "none"}).`, "kind");
  }
  if (!input.name) throw badRequest("Nothing was stored: name the artifact (?name=…).", "name");
  if (input.bytes.length > MAX_ARTIFACT_BYTES) throw badRequest(`Nothing was stored: the artifact is ${input.bytes.length} bytes; the limit is ${MAX_ARTIFACT_BYTES}.`);
  const claimed = input.digest?.match(/sha-256=([A-Za-z0-9+/=]+)/i)?.[1];
  if (!claimed) throw badRequest("Nothing was stored: send the artifact's SHA-256 as the header `Digest: sha-256=<base64>`.", "digest");
  const digest = createHash("sha256").update(input.bytes).digest();
  if (digest.toString("base64") !== claimed) {
    throw badRequest(`Nothing was stored: the bytes received have sha-256=${digest.toString("base64")}, not the sha-256=${claimed} the Digest header names; the upload was damaged. Upload it again.`, "digest");
  }
  const id = newId("artifact");
  const sha256 = digest.toString("hex");
  await db.insert(artifacts).values({ id, jobId: access.jobId, kind: input.kind, name: input.name, sha256, size: input.bytes.length, content: Buffer.from(input.bytes).toString("base64") });
  return { artifactId: id, sha256 };
}

export async function downloadArtifact(db: Database, jobId: string, artifactId: string) {
  const [row] = await db.select().from(artifacts).where(and(eq(artifacts.id, artifactId), eq(artifacts.jobId, jobId)));
  if (!row) throw notFound(`Artifact ${artifactId} of job ${jobId}`, "A job credential reads only its own job's artifacts.");
  const bytes = new Uint8Array(Buffer.from(row.content, "base64"));
  return { bytes, digest: digestHeader(bytes), sha256: row.sha256, name: row.name, kind: row.kind };
}
