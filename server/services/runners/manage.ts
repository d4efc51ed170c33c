// Settings → Runners and `planton runner …`: the organization's runners (and the Planton-hosted ones
// that serve it) with their state, registering, rotating and revoking by name, and the default runner,
// which is refused while any of the organization's state is still on Planton-managed storage.
import { and, desc, eq, inArray, isNull, or, sql } from "drizzle-orm";
import type { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { connections, environments, infraComponents, infraJobs, organizations, runners } from "@/db/schema";
import type { registerRunnerBody, runnerRefInput } from "@/lib/api/runner-schemas";
import { runnerStatus } from "@/lib/runner-routing";
import type { Actor } from "../../actor";
import { recordAudit } from "../../audit";
import { conflict, notFound, PlantonError } from "../../errors";
import { unmovedPlantonStates } from "../state-backends/planton-managed-usage";
import { registerRunner, type RunnerRow } from "./register-runner";
import { revokeRunner as revokeById } from "./revoke-runner";
import { rotateRunnerToken as rotateById } from "./rotate-runner-token";
import { firstAndMore } from "@/lib/display";

type RunnerRef = z.input<typeof runnerRefInput>;

/** The organization's own runner by name or id; Planton-hosted runners are not an organization's to change. */
export async function ownRunner(db: Queryable, actor: Actor, ref: string): Promise<RunnerRow> {
  const [runner] = await db
    .select()
    .from(runners)
    .where(and(eq(runners.orgId, actor.orgId), or(eq(runners.name, ref), eq(runners.id, ref))));
  if (!runner) throw notFound(`Runner ${ref}`, "List the organization's runners with planton runner list (or Settings → Runners); Planton-hosted runners are not an organization's to change.");
  return runner;
}

/** The runners an organization sees: its own (revoked ones too, for their history) and the Planton-hosted ones. */
async function visibleRunners(db: Queryable, orgId: string) {
  return db
    .select()
    .from(runners)
    .where(or(eq(runners.orgId, orgId), and(isNull(runners.orgId), eq(runners.kind, "hosted"))))
    .orderBy(runners.kind, runners.name);
}

async function view(db: Queryable, orgId: string, rows: RunnerRow[]) {
  const [org] = await db.select({ defaultRunnerId: organizations.defaultRunnerId }).from(organizations).where(eq(organizations.id, orgId));
  const ids = rows.map((r) => r.id);
  const running = ids.length
    ? await db
        .select({ runnerId: infraJobs.runnerId, n: sql<number>`count(*)::int` })
        .from(infraJobs)
        // This organization's jobs only: a Planton-hosted runner's work for others is not theirs to see.
        .where(and(inArray(infraJobs.runnerId, ids), eq(infraJobs.status, "running"), eq(infraJobs.orgId, orgId)))
        .groupBy(infraJobs.runnerId)
    : [];
  const named = ids.length
    ? await db.select({ runnerId: connections.runnerId, name: connections.name }).from(connections).where(and(eq(connections.orgId, orgId), inArray(connections.runnerId, ids))).orderBy(connections.name)
    : [];
  const count = new Map(running.map((r) => [r.runnerId, Number(r.n)]));
  return rows.map((r) => {
    const n = count.get(r.id) ?? 0;
    return {
      id: r.id,
      name: r.name,
      kind: r.kind,
      status: runnerStatus({ lastSeenAt: r.lastSeenAt, revokedAt: r.revokedAt, running: n, capacity: r.capacity }),
      lastSeenAt: r.lastSeenAt,
      version: r.version,
      labels: (r.labels ?? {}) as Record<string, string>,
      engines: r.engines ?? {},
      capacity: r.capacity,
      running: n,
      isDefault: org?.defaultRunnerId === r.id,
      connections: named.filter((c) => c.runnerId === r.id).map((c) => c.name),
      revokedAt: r.revokedAt,
      createdAt: r.createdAt,
    };
  });
}

export async function listRunners(db: Queryable, actor: Actor) {
  const rows = await visibleRunners(db, actor.orgId);
  const list = await view(db, actor.orgId, rows);
  return { runners: list, default: list.find((r) => r.isDefault)?.name ?? null };
}

async function jobsOf(db: Queryable, orgId: string, runnerId: string, running: boolean) {
  return db
    .select({
      id: infraJobs.id,
      component: infraComponents.name,
      environment: environments.name,
      operation: infraJobs.operation,
      status: infraJobs.status,
      result: infraJobs.result,
      createdAt: infraJobs.createdAt,
    })
    .from(infraJobs)
    .innerJoin(infraComponents, eq(infraComponents.id, infraJobs.componentId))
    .innerJoin(environments, eq(environments.id, infraComponents.environmentId))
    .where(and(eq(infraJobs.orgId, orgId), eq(infraJobs.runnerId, runnerId), running ? eq(infraJobs.status, "running") : sql`true`))
    .orderBy(desc(infraJobs.createdAt))
    .limit(running ? 64 : 10);
}

export async function getRunner(db: Queryable, actor: Actor, input: RunnerRef) {
  const rows = await visibleRunners(db, actor.orgId);
  const row = rows.find((r) => r.name === input.runner || r.id === input.runner);
  if (!row) throw notFound(`Runner ${input.runner}`, "List the runners with planton runner list (or Settings → Runners).");
  const [one] = await view(db, actor.orgId, [row]);
  return { ...one, runningJobs: await jobsOf(db, actor.orgId, row.id, true), recentJobs: await jobsOf(db, actor.orgId, row.id, false) };
}

export async function registerOwnRunner(db: Database, actor: Actor, input: z.input<typeof registerRunnerBody>) {
  const { runner, token } = await registerRunner(db, actor, input);
  const [one] = await view(db, actor.orgId, [{ ...runner, tokenHash: "" } as RunnerRow]);
  return { runner: one, token, failedJobs: [] as string[] };
}

export async function rotateOwnRunnerToken(db: Database, actor: Actor, input: RunnerRef) {
  const found = await ownRunner(db, actor, input.runner);
  const { runner, token, failedJobs } = await rotateById(db, actor, { id: found.id });
  const [one] = await view(db, actor.orgId, [{ ...runner, tokenHash: "" } as RunnerRow]);
  return { runner: one, token, failedJobs };
}

export async function revokeOwnRunner(db: Database, actor: Actor, input: RunnerRef) {
  const found = await ownRunner(db, actor, input.runner);
  const { runner, failedJobs } = await revokeById(db, actor, { id: found.id });
  const [one] = await view(db, actor.orgId, [{ ...runner, tokenHash: "" } as RunnerRow]);
  return { runner: one, failedJobs };
}

const HOSTED_DEFAULT = "Deploys and live cloud operations of connections that name no runner run on a Planton-hosted runner.";

export async function getDefaultRunner(db: Queryable, actor: Actor) {
  const [row] = await db
    .select({ name: runners.name })
    .from(organizations)
    .innerJoin(runners, eq(runners.id, organizations.defaultRunnerId))
    .where(eq(organizations.id, actor.orgId));
  return row
    ? { runner: row.name, description: `Deploys and live cloud operations of connections that name no runner run on ${row.name}.` }
    : { runner: null, description: HOSTED_DEFAULT };
}

/** The refusal of a default runner while state is on Planton-managed storage: what is left, by environment, and the command that moves it. */
export function plantonStateLeftRefusal(left: { component: string; environment: string }[], runner: string): PlantonError {
  const byEnv = new Map<string, string[]>();
  for (const s of left) byEnv.set(s.environment, [...(byEnv.get(s.environment) ?? []), s.component]);
  const listed = [...byEnv.entries()].map(([env, names]) => `${env}: ${firstAndMore(names, 5)}`).join("; ");
  return new PlantonError(
    "PRECONDITION_FAILED",
    `Nothing was changed: ${runner} cannot be the default runner while ${left.length} state${left.length === 1 ? " is" : "s are"} on Planton-managed storage (${listed}), which only Planton-hosted runners can reach. Move ${left.length === 1 ? "it" : "them"} off first: planton infra state-backend move-off-planton --to <backend> (or Settings → State Backends → Move off Planton-managed storage), then set the default again.`,
  );
}

export async function setDefaultRunner(db: Database, actor: Actor, input: RunnerRef) {
  return db.transaction(async (tx) => {
    // The organization's row, locked: a second set-default or a move's switch waits for this one.
    await tx.select({ id: organizations.id }).from(organizations).where(eq(organizations.id, actor.orgId)).for("update");
    const runner = await ownRunner(tx, actor, input.runner);
    if (runner.revokedAt) throw conflict(`Nothing was changed: runner ${runner.name} was revoked at ${runner.revokedAt.toISOString()}. Register a new runner, then make it the default.`);
    const left = await unmovedPlantonStates(tx, actor.orgId, false);
    if (left.length) throw plantonStateLeftRefusal(left, runner.name);
    const before = await getDefaultRunner(tx, actor);
    await tx.update(organizations).set({ defaultRunnerId: runner.id }).where(eq(organizations.id, actor.orgId));
    await recordAudit(tx, actor, {
      action: "runner.set_default",
      targetId: runner.id,
      targetName: runner.name,
      summary: `Made ${runner.name} the default runner${before.runner ? ` (was ${before.runner})` : " (was Planton-hosted)"}`,
      changes: { before: before.runner, after: runner.name },
    });
    return getDefaultRunner(tx, actor);
  });
}

export async function unsetDefaultRunner(db: Database, actor: Actor) {
  return db.transaction(async (tx) => {
    const before = await getDefaultRunner(tx, actor);
    if (!before.runner) return before;
    await tx.update(organizations).set({ defaultRunnerId: null }).where(eq(organizations.id, actor.orgId));
    await recordAudit(tx, actor, {
      action: "runner.unset_default",
      targetId: actor.orgId,
      targetName: before.runner,
      summary: `Cleared the default runner (was ${before.runner}); deploys return to a Planton-hosted runner`,
      changes: { before: before.runner, after: null },
    });
    return getDefaultRunner(tx, actor);
  });
}
