import { betterAuth } from "better-auth";
import { drizzleAdapter } from "better-auth/adapters/drizzle";
import { accounts, sessions, users, verifications } from "@/db/schema";
import type { Database } from "@/db/client";
import { newId, type IdKind } from "@/lib/ids";
import { serverConfig } from "../config";
import { serverKey, sha256Hex } from "../crypto";
import { CLIENT_ADDRESS_HEADER } from "./sign-in-limits";

const MODEL_ID_KIND: Record<string, IdKind> = { user: "user", session: "session", account: "account", verification: "verification" };

/** Email + password sign-in with database sessions (better-auth). Sign-up is closed: admins add members. */
export function createAuth(db: Database) {
  const config = serverConfig();
  return betterAuth({
    appName: "Planton console",
    database: drizzleAdapter(db, {
      provider: "pg",
      schema: { user: users, session: sessions, account: accounts, verification: verifications },
    }),
    secret: config.BETTER_AUTH_SECRET ?? sha256Hex(Buffer.concat([serverKey(), Buffer.from("auth")])),
    baseURL: config.PLANTON_URL,
    // The console is served from the same origin it signs in on, whichever host name reaches it.
    trustedOrigins: (request) => {
      const origins = config.PLANTON_URL ? [new URL(config.PLANTON_URL).origin] : [];
      const host = request?.headers.get("x-forwarded-host") ?? request?.headers.get("host");
      if (request && host) origins.push(`${request.headers.get("x-forwarded-proto") ?? new URL(request.url).protocol.slice(0, -1)}://${host}`);
      return origins;
    },
    emailAndPassword: { enabled: true, disableSignUp: true, minPasswordLength: 8 },
    session: { expiresIn: 60 * 60 * 24 * 7, updateAge: 60 * 60 * 24 },
    // better-auth's own limiter keys on X-Forwarded-For as the client wrote it; sign-in-limits.ts does this instead.
    rateLimit: { enabled: false },
    advanced: {
      // Cookies follow the scheme the console is served on: Secure (and `__Secure-` named) only when PLANTON_URL is https,
      // so plain HTTP on a LAN keeps its session; components/shell/sign-in-form.tsx explains the https-only case.
      useSecureCookies: secureCookies(config.PLANTON_URL),
      ipAddress: { ipAddressHeaders: [CLIENT_ADDRESS_HEADER] },
      database: { generateId: ({ model }) => newId(MODEL_ID_KIND[model] ?? "verification") },
    },
    telemetry: { enabled: false },
    logger: { level: "error" },
  });
}

/** Whether session cookies are sent only over HTTPS: when the console's configured URL is https. */
export const secureCookies = (consoleUrl: string | undefined) => !!consoleUrl?.startsWith("https://");

export type Auth = ReturnType<typeof createAuth>;

/** Creates a user with a password sign-in, bypassing closed sign-up (for seeding and admins adding members). */
export async function createUserWithPassword(auth: Auth, input: { email: string; name: string; password: string }) {
  const ctx = await auth.$context;
  const user = await ctx.internalAdapter.createUser({ email: input.email.toLowerCase(), name: input.name, emailVerified: true }, { method: "admin" });
  await ctx.internalAdapter.linkAccount({
    userId: user.id,
    providerId: "credential",
    accountId: user.id,
    password: await ctx.password.hash(input.password),
  });
  return user;
}
