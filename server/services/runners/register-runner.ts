// Runner records and runner tokens (`rnr_…`, shown once, stored hashed).
import { and, eq, isNull } from "drizzle-orm";
import { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { runners } from "@/db/schema";
import { registerRunnerBody } from "@/lib/api/runner-schemas";
import { newId } from "@/lib/ids";
import type { Actor } from "../../actor";
import { recordAudit } from "../../audit";
import { newBearerToken, sha256Hex } from "../../crypto";
import { conflict, isUniqueViolation, PlantonError } from "../../errors";

export type RunnerRow = typeof runners.$inferSelect;

export const RUNNER_TOKEN_PREFIX = "rnr_";

/** The register body of the public API (lib/api/runner-schemas.ts): one name rule for the console, the CLI and the service. */
export const registerRunnerInput = registerRunnerBody;

/** Registers an organization's own runner; the token is returned once and never again. */
export async function registerRunner(db: Database, actor: Actor, raw: z.input<typeof registerRunnerInput>) {
  const input = registerRunnerInput.parse(raw);
  const { token, hash } = newBearerToken("rnr");
  try {
    return await db.transaction(async (tx) => {
      const [runner] = await tx
        .insert(runners)
        .values({ id: newId("runner"), orgId: actor.orgId, scopeKey: actor.orgId, name: input.name, kind: "self_hosted", tokenHash: hash, capacity: input.capacity, labels: input.labels })
        .returning();
      await recordAudit(tx, actor, { action: "runner.register", targetId: runner.id, targetName: runner.name, summary: `Registered runner ${input.name}` });
      return { runner: { ...runner, tokenHash: undefined }, token };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`A runner named ${input.name} already exists. Choose another name.`, "name");
    throw err;
  }
}

/** A Planton-hosted runner record (orgId null) with a fresh token: the server keeps no plain token, so each start rotates it. */
export async function ensureHostedRunner(db: Queryable, name: string, capacity: number): Promise<{ runner: RunnerRow; token: string }> {
  const { token, hash } = newBearerToken("rnr");
  const [existing] = await db.select().from(runners).where(and(isNull(runners.orgId), eq(runners.scopeKey, "platform"), eq(runners.name, name)));
  if (existing) {
    const [runner] = await db.update(runners).set({ tokenHash: hash, capacity }).where(eq(runners.id, existing.id)).returning();
    return { runner, token };
  }
  const [runner] = await db.insert(runners).values({ id: newId("runner"), orgId: null, scopeKey: "platform", name, kind: "hosted", tokenHash: hash, capacity }).returning();
  return { runner, token };
}

const UNKNOWN_TOKEN =
  "Nothing was done: this runner token is not known (it may have been rotated, or the runner removed). Start the runner with its current token, or register it again in Settings → Runners.";

/** The runner a `rnr_…` token belongs to; refuses anything else, and a revoked runner. */
export async function authenticateRunner(db: Queryable, token: string | null | undefined): Promise<RunnerRow> {
  if (!token?.startsWith(RUNNER_TOKEN_PREFIX)) throw new PlantonError("UNAUTHORIZED", "Nothing was done: send the runner token as Authorization: Bearer rnr_….");
  const [runner] = await db.select().from(runners).where(eq(runners.tokenHash, sha256Hex(token)));
  assertRunnerMayWork(runner, sha256Hex(token));
  return runner;
}

/** Refuses a runner that is gone, revoked, or whose token is no longer `tokenHash` (rotated). */
export function assertRunnerMayWork(runner: RunnerRow | undefined, tokenHash: string): asserts runner is RunnerRow {
  if (!runner || runner.tokenHash !== tokenHash) throw new PlantonError("UNAUTHORIZED", UNKNOWN_TOKEN);
  if (runner.revokedAt) {
    throw new PlantonError(
      "FORBIDDEN",
      `Nothing was done: runner ${runner.name} was revoked at ${runner.revokedAt.toISOString()} and may claim no more work. Stop this runner; an admin registers a new one in Settings → Runners.`,
    );
  }
}

export const bearerOf = (headers: Headers) => headers.get("authorization")?.match(/^Bearer\s+(\S+)$/i)?.[1] ?? null;
