import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { serverConfig } from "./config";

let cachedKey: Buffer | undefined;

/**
 * The server key for secrets at rest: PLANTON_SECRET_KEY (64 hex chars or base64 of 32 bytes),
 * else one generated once into the data folder.
 */
export function serverKey(): Buffer {
  if (cachedKey) return cachedKey;
  const config = serverConfig();
  if (config.PLANTON_SECRET_KEY) return (cachedKey = config.PLANTON_SECRET_KEY);
  const file = path.join(config.PLANTON_DATA_DIR, "secret.key");
  if (fs.existsSync(file)) {
    cachedKey = Buffer.from(fs.readFileSync(file, "utf8").trim(), "hex");
  } else {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    cachedKey = randomBytes(32);
    // `wx`: never through a file or link that appeared meanwhile.
    fs.writeFileSync(file, cachedKey.toString("hex"), { mode: 0o600, flag: "wx" });
  }
  return cachedKey;
}

/** AES-256-GCM; the result is base64 of iv (12) | tag (16) | ciphertext. */
export function encryptBytes(plain: Uint8Array, key = serverKey()): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64");
}

let cachedPrevious: Buffer[] | undefined;

/**
 * The server keys that came before this one (PLANTON_SECRET_KEY_PREVIOUS), in the order given: what they sealed
 * still opens (decryptBytes tries them after the server key), and the console re-seals it under the server key at
 * start (key-rotation.ts), after which they can be dropped.
 */
export function previousServerKeys(): Buffer[] {
  return (cachedPrevious ??= serverConfig().PLANTON_SECRET_KEY_PREVIOUS ?? []);
}

/** Opens a value sealed by encryptBytes with `key`; throws when that key did not seal it. */
export function openWith(sealed: string, key: Buffer): Buffer {
  const raw = Buffer.from(sealed, "base64");
  const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]);
}

/** The value `key` sealed, or null when `key` did not seal it. */
export function openedWith(sealed: string, key: Buffer): Buffer | null {
  try {
    return openWith(sealed, key);
  } catch {
    return null;
  }
}

/** With `key`, opens with that key only; otherwise with the server key, then each previous key (a rotation in progress). */
export function decryptBytes(sealed: string, key?: Buffer): Buffer {
  if (key) return openWith(sealed, key);
  try {
    return openWith(sealed, serverKey());
  } catch (err) {
    for (const previous of previousServerKeys()) {
      const opened = openedWith(sealed, previous);
      if (opened) return opened;
    }
    throw err;
  }
}

export const encryptSecret = (plain: string, key = serverKey()): string => encryptBytes(Buffer.from(plain, "utf8"), key);

export const decryptSecret = (sealed: string, key?: Buffer): string => decryptBytes(sealed, key).toString("utf8");

export const sha256Hex = (s: string | Buffer) => createHash("sha256").update(s).digest("hex");

/** A bearer token with a readable prefix (`plt_…`, `rnr_…`); only its hash is stored. */
export function newBearerToken(prefix: string): { token: string; hash: string; displayPrefix: string } {
  const token = `${prefix}_${randomBytes(24).toString("base64url")}`;
  return { token, hash: sha256Hex(token), displayPrefix: token.slice(0, prefix.length + 7) };
}
