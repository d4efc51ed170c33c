// Artifacts as every side knows them: their kinds, which hold sensitive bytes, and the
// `Digest: sha-256=<base64>` header each upload and download carries (RFC 3230's form).
import { createHash } from "node:crypto";

export const ARTIFACT_KINDS = ["plan", "plan_review", "log", "state", "iac_input"] as const;
export type ArtifactKind = (typeof ARTIFACT_KINDS)[number];

/** Kinds whose bytes may hold sensitive values: encrypted at rest, readable only with the job's credential. */
export const isArtifactKind = (value: string | null): value is ArtifactKind => (ARTIFACT_KINDS as readonly (string | null)[]).includes(value);

export const ENCRYPTED_ARTIFACT_KINDS: readonly ArtifactKind[] = ["plan", "state"];

export function sha256Of(bytes: Uint8Array): { hex: string; base64: string } {
  const d = createHash("sha256").update(bytes).digest();
  return { hex: d.toString("hex"), base64: d.toString("base64") };
}

/** The Digest header value for these bytes. */
export const digestHeader = (bytes: Uint8Array) => `sha-256=${sha256Of(bytes).base64}`;

/** The base64 SHA-256 a Digest header names, or null when it names none. */
export const digestClaimed = (header: string | null | undefined): string | null => header?.match(/sha-256=([A-Za-z0-9+/=]+)/i)?.[1] ?? null;

/** An artifact's bytes read as JSON (a plan, a review rendition), or null when they are not JSON. */
export function artifactJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(bytes).toString("utf8"));
  } catch {
    return null;
  }
}
