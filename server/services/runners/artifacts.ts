// Artifacts a runner uploads (plan files, their masked review renditions, logs, state snapshots):
// stored with their SHA-256, checked against the `Digest: sha-256=<base64>` header on upload and
// sent with it on download. Executable plans and state snapshots hold secret values, so they are
// encrypted at rest and go back only to the job's runner; people get the masked renditions.
import { and, desc, eq } from "drizzle-orm";
import type { Database, Queryable } from "@/db/client";
import { artifacts } from "@/db/schema";
import { ARTIFACT_KINDS, digestClaimed, digestHeader, ENCRYPTED_ARTIFACT_KINDS, isArtifactKind, sha256Of, type ArtifactKind } from "@/lib/artifacts";
import { newId } from "@/lib/ids";
import { decryptBytes, encryptBytes } from "../../crypto";
import { badRequest, notFound, PlantonError } from "../../errors";
import type { JobAccess } from "./job-access";

export const MAX_ARTIFACT_BYTES = 64 * 1024 * 1024;


export async function uploadArtifact(db: Database, access: JobAccess, input: { kind: string | null; name: string | null; digest: string | null; bytes: Uint8Array }) {
  if (!isArtifactKind(input.kind)) {
    throw badRequest(`Nothing was stored: kind must be one of ${ARTIFACT_KINDS.join(", ")} (got ${input.kind ?? "none"}).`, "kind");
  }
  if (!input.name) throw badRequest("Nothing was stored: name the artifact (?name=…).", "name");
  if (input.bytes.length > MAX_ARTIFACT_BYTES) throw badRequest(`Nothing was stored: the artifact is ${input.bytes.length} bytes; the limit is ${MAX_ARTIFACT_BYTES}.`);
  const claimed = digestClaimed(input.digest);
  if (!claimed) throw badRequest("Nothing was stored: send the artifact's SHA-256 as the header `Digest: sha-256=<base64>`.", "digest");
  const digest = sha256Of(input.bytes);
  if (digest.base64 !== claimed) {
    throw badRequest(`Nothing was stored: the bytes received have sha-256=${digest.base64}, not the sha-256=${claimed} the Digest header names; the upload was damaged. Upload it again.`, "digest");
  }
  const { id, sha256 } = await storeArtifact(db, { jobId: access.jobId, kind: input.kind, name: input.name, bytes: input.bytes, sha256: digest.hex });
  return { artifactId: id, sha256 };
}

/**
 * Stores an artifact of a job with its SHA-256 (encrypted at rest for the kinds that may hold secrets): the one insert
 * of every artifact, a runner's upload and the server's own (the job's archived log). `stored` is false when a unique
 * rule kept it out (one log per job: `skipConflict`).
 */
export async function storeArtifact(db: Queryable, input: { jobId: string; kind: ArtifactKind; name: string; bytes: Uint8Array; sha256?: string }, skipConflict = false) {
  const id = newId("artifact");
  const sha256 = input.sha256 ?? sha256Of(input.bytes).hex;
  const encrypted = ENCRYPTED_ARTIFACT_KINDS.includes(input.kind);
  const content = encrypted ? encryptBytes(input.bytes) : Buffer.from(input.bytes).toString("base64");
  const insert = db.insert(artifacts).values({ id, jobId: input.jobId, kind: input.kind, name: input.name, sha256, size: input.bytes.length, content, encrypted });
  const rows = await (skipConflict ? insert.onConflictDoNothing() : insert).returning({ id: artifacts.id });
  return { id, sha256, stored: rows.length > 0 };
}

/** An artifact's bytes in clear, whether or not they are encrypted at rest. For the server's own reading and the job's runner. */
export function artifactBytes(row: { content: string; encrypted: boolean }): Buffer {
  return row.encrypted ? decryptBytes(row.content) : Buffer.from(row.content, "base64");
}

async function artifactRow(db: Queryable, jobId: string, artifactId: string) {
  const [row] = await db.select().from(artifacts).where(and(eq(artifacts.id, artifactId), eq(artifacts.jobId, jobId)));
  return row;
}

/** For the job's runner (job credential): any of its job's artifacts, decrypted. */
export async function downloadArtifact(db: Queryable, jobId: string, artifactId: string) {
  const row = await artifactRow(db, jobId, artifactId);
  if (!row) throw notFound(`Artifact ${artifactId} of job ${jobId}`, "A job credential reads only its own job's artifacts.");
  const bytes = new Uint8Array(artifactBytes(row));
  return { bytes, digest: digestHeader(bytes), sha256: row.sha256, name: row.name, kind: row.kind };
}

/** For people (console, REST): only artifacts with nothing sensitive in clear; an encrypted one is refused, naming what to read instead. */
export async function downloadArtifactForViewer(db: Queryable, jobId: string, artifactId: string) {
  const row = await artifactRow(db, jobId, artifactId);
  if (!row) throw notFound(`Artifact ${artifactId} of job ${jobId}`, `List the job's artifacts (GET /api/v1/jobs/${jobId}/artifacts) for their ids.`);
  if (row.encrypted) {
    if (row.kind === "plan") {
      const [review] = await db
        .select({ id: artifacts.id })
        .from(artifacts)
        .where(and(eq(artifacts.jobId, jobId), eq(artifacts.kind, "plan_review")))
        .orderBy(desc(artifacts.createdAt))
        .limit(1);
      throw new PlantonError(
        "FORBIDDEN",
        `Nothing was sent: artifact ${artifactId} is job ${jobId}'s executable plan, which holds secret values, so it is kept encrypted and only the job's runner reads it. ` +
          `${review ? `Download its review rendition (artifact ${review.id}, sensitive values masked), or` : "To review it,"} run planton infra job plan ${jobId}.`,
      );
    }
    throw new PlantonError(
      "FORBIDDEN",
      `Nothing was sent: artifact ${artifactId} (${row.kind}) of job ${jobId} may hold secret values, so it is kept encrypted and only the job's runner reads it. See the component's State tab for what the state holds, sensitive values masked.`,
    );
  }
  const bytes = new Uint8Array(artifactBytes(row));
  return { bytes, digest: digestHeader(bytes), sha256: row.sha256, name: row.name, kind: row.kind };
}
