// Helpers for the settings tests: a seeded organization, a typed tRPC caller per role, audit counts.
import { and, count, eq } from "drizzle-orm";
import type { Database } from "../db/client";
import { auditEvents } from "../db/schema";
import { createCallerFactory } from "../server/trpc/init";
import { appRouter } from "../server/trpc/root";
import type { Caller } from "../server/trpc/context";
import type { Role } from "../lib/roles";
import { seedTestOrg, type TestOrg } from "./fixtures";

const factory = createCallerFactory(appRouter);

export interface SettingsOrg extends TestOrg {
  /** The app router as `role` would call it over HTTP, with the role checks. */
  as: (role: Role) => ReturnType<typeof factory>;
}

export async function seedSettingsOrg(db: Database, slug?: string): Promise<SettingsOrg> {
  const org = await seedTestOrg(db, { slug });
  return { ...org, as: (role) => factory({ db, caller: org.users[role], clientAddress: null }) };
}

export const callerAs = (db: Database, caller: Caller) => factory({ db, caller, clientAddress: null });

export async function auditCount(db: Database, orgId: string, action?: string): Promise<number> {
  const [{ n }] = await db
    .select({ n: count() })
    .from(auditEvents)
    .where(action ? and(eq(auditEvents.orgId, orgId), eq(auditEvents.action, action)) : eq(auditEvents.orgId, orgId));
  return n;
}

export async function auditOf(db: Database, orgId: string, action: string) {
  // In the order they were recorded (the chain's seq): "the last one" means the latest.
  return db.select().from(auditEvents).where(and(eq(auditEvents.orgId, orgId), eq(auditEvents.action, action))).orderBy(auditEvents.seq);
}

/** Runs a call expected to be refused and returns the refusal, with the field the console would show it beside. */
export async function refusal(p: Promise<unknown>): Promise<{ code: string; message: string; field?: string }> {
  try {
    await p;
  } catch (e) {
    // A tRPC refusal carries the service's PlantonError or ZodError as its cause; a service call throws it directly.
    const err = e as { code?: string; message: string; cause?: unknown; issues?: unknown };
    const cause = (err.cause ?? err) as { field?: string; issues?: { path: PropertyKey[] }[] };
    const field = cause.field ?? cause.issues?.[0]?.path.join(".");
    return { code: err.code ?? (cause.issues ? "BAD_REQUEST" : ""), message: err.message, field };
  }
  throw new Error("expected the call to be refused, but it succeeded");
}
