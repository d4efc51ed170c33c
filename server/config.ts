// Every environment variable the console server reads, checked in one place. README's configuration
// table lists the same variables (a test holds them together).
import path from "node:path";
import { z } from "zod";
import { absoluteFolder, absoluteFolders, envVar, oneOf, readEnv, secretEnvVar, shownUrl, text, urlOf, wholeNumber, type EnvValues } from "@/lib/env";
import { parseTrustedProxies } from "./client-address";
import { TRACING_ENV } from "@/lib/telemetry";
import { MOST_NICE } from "@/runner/priority";

/** A key of 32 bytes, from 64 hex characters or base64; null when it is not one. */
const keyBytes = (v: string): Buffer | null => {
  const key = /^[0-9a-f]{64}$/i.test(v) ? Buffer.from(v, "hex") : Buffer.from(v, "base64");
  return key.length === 32 ? key : null;
};
const NOT_A_KEY = "not 32 bytes as 64 hex characters or base64 (generate one with openssl rand -hex 32)";

/** 32 bytes as 64 hex characters or as base64. */
const secretKey = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined) return undefined;
    const key = keyBytes(v);
    if (key) return key;
    ctx.addIssue({ code: "custom", message: NOT_A_KEY });
    return z.NEVER;
  });

/** Comma-separated keys, each as PLANTON_SECRET_KEY takes one. */
const secretKeyList = z
  .string()
  .optional()
  .transform((v, ctx) => {
    const keys: Buffer[] = [];
    for (const [i, item] of (v ?? "").split(",").map((s) => s.trim()).filter(Boolean).entries()) {
      const key = keyBytes(item);
      if (!key) {
        ctx.addIssue({ code: "custom", message: `not a list of keys: its key ${i + 1} is ${NOT_A_KEY}` });
        return z.NEVER;
      }
      keys.push(key);
    }
    return keys;
  });

/** Comma-separated origins (`https://planton.example.com`): scheme, host and port, nothing after. */
const originList = z
  .string()
  .optional()
  .transform((v, ctx) => {
    const origins: string[] = [];
    for (const item of (v ?? "").split(",").map((s) => s.trim()).filter(Boolean)) {
      let url: URL | undefined;
      try {
        url = new URL(item);
      } catch {}
      if (!url || !["http:", "https:"].includes(url.protocol) || url.origin !== item.replace(/\/$/, "")) {
        ctx.addIssue({ code: "custom", message: `not a list of origins: ${item} is not scheme://host[:port] with nothing after` });
        return z.NEVER;
      }
      origins.push(url.origin);
    }
    return origins;
  });

/** The nice value hosted runners run at unless PLANTON_HOSTED_RUNNER_NICE says otherwise (runner/priority.ts). */
export const HOSTED_RUNNER_NICE = 10;

export const SERVER_ENV = {
  PLANTON_DATA_DIR: envVar(
    text(".data").transform((p) => path.resolve(/*turbopackIgnore: true*/ p)),
    "/var/lib/planton",
    "where the embedded database (PGlite), the generated server key and local demo files live",
  ),
  DATABASE_URL: envVar(urlOf("postgres:", "postgresql:"), "postgres://planton:secret@db.internal:5432/planton", "a real Postgres instead of the embedded database; migrations run at start-up", shownUrl),
  PLANTON_DB_POOL: envVar(wholeNumber(1, 1000, 10), "20", "how many connections the server keeps open to DATABASE_URL"),
  PORT: envVar(wholeNumber(1, 65535, 3000), "8080", "the port `npm start` listens on"),
  HOST: envVar(text("127.0.0.1"), "0.0.0.0", "the address `npm start` listens on (`0.0.0.0` to serve other machines)"),
  PLANTON_URL: envVar(urlOf("http:", "https:"), "https://planton.example.com", "the public URL of the console, when it is served behind a proxy"),
  PLANTON_TRUSTED_ORIGINS: envVar(
    originList,
    "https://planton.example.com,https://ops.example.com",
    "more origins (besides PLANTON_URL) whose pages may send the console's sign-in cookie with a change",
  ),
  PLANTON_SERVER_URL: envVar(urlOf("http:", "https:"), "http://127.0.0.1:8080", "the URL the hosted runners reach the console on (default: http://127.0.0.1:PORT)"),
  PLANTON_SECRET_KEY: secretEnvVar(secretKey, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "the key that encrypts secrets and credentials at rest (AES-256-GCM)"),
  PLANTON_SECRET_KEY_PREVIOUS: secretEnvVar(
    secretKeyList,
    "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
    "server keys that came before PLANTON_SECRET_KEY, comma-separated: what they sealed still opens, and the console re-seals it under the current key",
  ),
  BETTER_AUTH_SECRET: secretEnvVar(text(), "a-long-random-string", "the key that signs sign-in sessions (default: derived from the server key)"),
  PLANTON_AUTH_RATE_LIMIT: envVar(oneOf(["on", "off"], "on"), "off", "`off` lifts the sign-in rate limit (for tests that sign in many times)"),
  PLANTON_TRUSTED_PROXIES: envVar(
    z
      .string()
      .optional()
      .transform((v, ctx) => {
        try {
          return parseTrustedProxies(v);
        } catch (err) {
          ctx.addIssue({ code: "custom", message: `not a list of IP addresses and CIDRs (${(err as Error).message})` });
          return z.NEVER;
        }
      }),
    "10.0.0.5,192.168.0.0/24",
    "the reverse proxies whose X-Forwarded-For is believed (addresses or CIDRs); unset, the client address is always the socket's",
  ),
  PLANTON_INVITATION_DAYS: envVar(wholeNumber(1, 90, 7), "14", "how many days an invitation link (adding a member, resetting a sign-in) stays usable"),
  PLANTON_ADMIN_EMAIL: envVar(
    z
      .email({ error: "not an email address" })
      .optional()
      .transform((v) => (v ?? "admin@acme.example").toLowerCase()),
    "ops@example.com",
    "the first admin's email, used only on first start with an empty database",
  ),
  PLANTON_ADMIN_PASSWORD: secretEnvVar(
    z.string().min(8, { error: "shorter than 8 characters" }).optional(),
    "a-long-passphrase",
    "the first admin's password, used only on first start (default: generated and printed once)",
  ),
  PLANTON_HOSTED_RUNNERS: envVar(wholeNumber(0, 64, 1), "2", "how many hosted runner processes the console starts (`0` for none)"),
  PLANTON_HOSTED_RUNNER_CAPACITY: envVar(wholeNumber(1, 64, 2), "4", "how many jobs each hosted runner runs at once"),
  PLANTON_HOSTED_RUNNER_NICE: envVar(
    wholeNumber(0, MOST_NICE, HOSTED_RUNNER_NICE),
    String(HOSTED_RUNNER_NICE),
    "the CPU priority hosted runners and their engines run at (a nice value, 0–19): they share the console's machine, and the console's pages, API and live streams come first",
  ),
  PLANTON_LOCAL_ROOTS: envVar(
    absoluteFolders(),
    "/srv/sites:/srv/exports",
    "folders besides <data folder>/local-infra/<organization> where hosted runners may write a `local` connection's files",
  ),
  PLANTON_STATE_LOCAL_ROOTS: envVar(
    absoluteFolders(),
    "/var/lib/tfstate:/srv/states",
    "folders besides <data folder>/local-states/<organization id> where `local` state backends may keep state files",
  ),
  PLANTON_MODULE_LOCAL_ROOTS: envVar(
    absoluteFolders(),
    "/srv/git:/srv/modules",
    "folders whose git repositories (`file://` URLs and plain paths) organizations may register modules from (default: none, only remote URLs)",
  ),
  PLANTON_LEASE_SECONDS: envVar(wholeNumber(1, 3600, 30), "60", "how long a runner's hold on a job lasts without a heartbeat before the job's runner is declared lost"),
  PLANTON_AUDIT_RETENTION_DAYS: envVar(
    wholeNumber(1, 36500),
    "400",
    "how many days audit events stay in the database; older ones are archived to PLANTON_AUDIT_ARCHIVE_DIR and sealed with a checkpoint (default: kept forever)",
  ),
  PLANTON_AUDIT_ARCHIVE_DIR: envVar(absoluteFolder(), "/var/lib/planton/audit-archive", "where archived audit events are written, one gzip JSON-lines file per run (default: <data folder>/audit-archive)"),
  PLANTON_METRICS_TOKEN: secretEnvVar(
    z.string().min(16, { error: "shorter than 16 characters (generate one with openssl rand -hex 32)" }).optional(),
    "3f9c0e8d2b7a4c1e9f6d5a2b8c7e4f1a",
    "the bearer token Prometheus sends to scrape /metrics; unset, /metrics is off",
  ),
  ...TRACING_ENV,
};

export type ServerConfig = EnvValues<typeof SERVER_ENV>;

/** The server's configuration from the environment; throws a ConfigError naming each bad value. */
export const serverConfig = (env: Record<string, string | undefined> = process.env): ServerConfig => readEnv("The Planton console", SERVER_ENV, env);
