// Job credentials: `jcr_<JWT>` signed HS256 with a key derived from the server key, scoped to one
// job, organization and runner attempt, valid one hour at most, and bound to the runner token it was
// issued under by a fingerprint of that token's hash (so rotating the token retires the credential).
import { createHmac } from "node:crypto";
import { SignJWT, jwtVerify, type JWTPayload } from "jose";
import { newId } from "@/lib/ids";
import { previousServerKeys, serverKey } from "../../crypto";
import { PlantonError } from "../../errors";

export const CREDENTIAL_PREFIX = "jcr_";
export const CREDENTIAL_TTL_SECONDS = 3600;

export interface JobCredentialClaims {
  jobId: string;
  orgId: string;
  attemptId: string;
  credentialId: string;
  /** Fingerprint of the runner token hash the credential was issued under. */
  runnerTokenFingerprint: string;
  expiresAt: Date;
  /** The previous server key it was signed under (a key rotation in progress: PLANTON_SECRET_KEY_PREVIOUS); absent for the server key. */
  signedWithPrevious?: Buffer;
}

const hs256Key = (from: Buffer) => {
  const raw = createHmac("sha256", from).update("planton job credential v1").digest();
  return crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
};

let signing: { from: Buffer; key: Promise<CryptoKey> } | undefined;
/**
 * The HS256 key, derived from the server key and imported once per server key: every runner call verifies
 * a credential, and importing the key each time cost a Web Crypto round trip per request.
 */
function signingKey(): Promise<CryptoKey> {
  const from = serverKey();
  if (signing?.from !== from) signing = { from, key: hs256Key(from) };
  return signing.key;
}

/** The HS256 keys of the previous server keys, imported once each: credentials a console signed before a key rotation. */
const previousSigning = new Map<Buffer, Promise<CryptoKey>>();
function previousSigningKey(from: Buffer): Promise<CryptoKey> {
  let key = previousSigning.get(from);
  if (!key) previousSigning.set(from, (key = hs256Key(from)));
  return key;
}

/**
 * What this process learnt under one server key, kept until the key changes: each runner token hash's
 * fingerprint, and the credentials whose signature verified, by their text. A runner sends the same
 * credential with every call (each event upload, heartbeat and state call), and each call checked the
 * fingerprint of its runner's token hash; the HMAC and the Web Crypto verification took about 4 % of a
 * console's CPU while jobs ran (bench/jobs.ts, a CPU profile). The same text verifies the same way under the
 * same key; a credential's expiry is still checked at every use.
 */
let learnt: { from: Buffer; fingerprints: Map<string, string>; verified: Map<string, JWTPayload> } | undefined;
/** Entries kept at most in each map (the oldest credentials go first; the fingerprints all at once): a running job's credential is used every few seconds. */
const KEPT = 10_000;

function learntUnder(): NonNullable<typeof learnt> {
  const from = serverKey();
  if (learnt?.from !== from) learnt = { from, fingerprints: new Map(), verified: new Map() };
  return learnt;
}

const fingerprintUnder = (key: Buffer, tokenHash: string) => createHmac("sha256", key).update(`runner token ${tokenHash}`).digest("hex").slice(0, 16);

/** Keyed, so the credential (readable by whoever holds it) tells nothing about the token hash. `previous`: under a previous server key. */
export function runnerTokenFingerprint(tokenHash: string, previous?: Buffer): string {
  if (previous) return fingerprintUnder(previous, tokenHash);
  const { from, fingerprints } = learntUnder();
  let fingerprint = fingerprints.get(tokenHash);
  if (fingerprint === undefined) {
    fingerprint = fingerprintUnder(from, tokenHash);
    if (fingerprints.size >= KEPT) fingerprints.clear();
    fingerprints.set(tokenHash, fingerprint);
  }
  return fingerprint;
}

/**
 * A credential signed under a previous server key (issued before a key rotation, at most an hour old): its claims and
 * that key, or null when no previous key signed it either. Not kept: a heartbeat renews it under the server key.
 */
async function previousKeyPayload(jwt: string): Promise<{ payload: JWTPayload; key: Buffer } | null> {
  for (const key of previousServerKeys()) {
    const verified = await jwtVerify(jwt, await previousSigningKey(key), { algorithms: ["HS256"] }).catch((e: { code?: string }) => (e?.code === "ERR_JWS_SIGNATURE_VERIFICATION_FAILED" ? null : Promise.reject(e)));
    if (verified) return { payload: verified.payload, key };
  }
  return null;
}

/** The credential's claims: verified once, then taken as verified while they have not expired. */
async function verifiedPayload(jwt: string): Promise<JWTPayload & { previousKey?: Buffer }> {
  const under = learntUnder();
  const known = under.verified.get(jwt);
  // jose's rule: expired once `exp` is not after now (no clock tolerance). Expired, it is verified again, which refuses it.
  if (known?.exp !== undefined && known.exp > Math.floor(Date.now() / 1000)) return known;
  if (known) under.verified.delete(jwt);
  const { payload } = await jwtVerify(jwt, await signingKey(), { algorithms: ["HS256"] }).catch(async (e: { code?: string }) => {
    const old = e?.code === "ERR_JWS_SIGNATURE_VERIFICATION_FAILED" ? await previousKeyPayload(jwt) : null;
    if (!old) throw e;
    return { payload: { ...old.payload, previousKey: old.key } };
  });
  if (payload.previousKey) return payload;
  // Kept only while the key it was verified with is still the key.
  if (learntUnder() === under) {
    if (under.verified.size >= KEPT) under.verified.delete(under.verified.keys().next().value!);
    under.verified.set(jwt, payload);
  }
  return payload;
}

export async function issueJobCredential(c: { jobId: string; orgId: string; attemptId: string; runnerTokenHash: string; credentialId?: string }, ttlSeconds = CREDENTIAL_TTL_SECONDS) {
  const credentialId = c.credentialId ?? newId("jobCredential");
  const exp = Math.floor(Date.now() / 1000) + Math.min(ttlSeconds, CREDENTIAL_TTL_SECONDS);
  const jwt = await new SignJWT({ org: c.orgId, att: c.attemptId, rtf: runnerTokenFingerprint(c.runnerTokenHash) })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(c.jobId)
    .setJti(credentialId)
    .setIssuedAt()
    .setExpirationTime(exp)
    .sign(await signingKey());
  return { token: CREDENTIAL_PREFIX + jwt, expiresAt: new Date(exp * 1000).toISOString(), credentialId };
}

/** Checks a credential's signature and expiry, and that it is for `jobId`. */
export async function verifyJobCredential(token: string | null | undefined, jobId: string): Promise<JobCredentialClaims> {
  if (!token?.startsWith(CREDENTIAL_PREFIX)) {
    throw new PlantonError("UNAUTHORIZED", "Nothing was done: this route needs the job credential from the claim (Authorization: Bearer jcr_…).");
  }
  let payload;
  try {
    payload = await verifiedPayload(token.slice(CREDENTIAL_PREFIX.length));
  } catch (e) {
    const expired = (e as { code?: string }).code === "ERR_JWT_EXPIRED";
    throw new PlantonError(
      "UNAUTHORIZED",
      expired
        ? "Nothing was done: the job credential expired. A runner renews it through its heartbeat while the job runs."
        : "Nothing was done: the job credential is not valid. Use the credential the claim returned.",
    );
  }
  if (payload.sub !== jobId) {
    throw new PlantonError("FORBIDDEN", `Nothing was done: this job credential is for job ${payload.sub}, not ${jobId}. A credential works only for its own job.`);
  }
  return {
    jobId,
    orgId: String(payload.org),
    attemptId: String(payload.att),
    credentialId: String(payload.jti),
    runnerTokenFingerprint: String(payload.rtf ?? ""),
    expiresAt: new Date((payload.exp ?? 0) * 1000),
    ...(payload.previousKey ? { signedWithPrevious: payload.previousKey } : {}),
  };
}
