// Where a job runs (spec/runners-and-state-backends.md, "Where Your Work Runs"): the runner its
// connection names, else the organization's default runner, else a Planton-hosted runner. Preflight
// resolves it once, with what makes the route unusable; create-job records it on the job and the claim
// hands the job only to that runner (or to a hosted one).
import { and, eq, isNull } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { organizations, runners, type connections } from "@/db/schema";
import { CONNECTION_PROVIDERS, type Provisioner } from "@/lib/catalog";
import type { PreflightCheck } from "@/lib/preflight";
import { ENGINE_TITLES, routeSentence, type JobRoute, type RouteRule } from "@/lib/runner-routing";
import { PLANTON_MANAGED_KIND } from "@/lib/state-backend-kinds";
import type { RunnerRow } from "./register-runner";

type ConnectionRow = typeof connections.$inferSelect;

export interface ResolvedRoute {
  rule: RouteRule;
  /** The runner named; null for a Planton-hosted one. */
  runner: RunnerRow | null;
  connection: string | null;
}

export const jobRouteOf = (r: ResolvedRoute): JobRoute => ({ rule: r.rule, runner: r.runner?.name ?? null, connection: r.rule === "connection" ? r.connection : null });

/** The first step that names a runner wins: the connection's, then the organization's default, then Planton-hosted. */
export async function resolveRoute(db: Queryable, orgId: string, connection: ConnectionRow | null): Promise<ResolvedRoute> {
  if (connection?.runnerId) {
    const [runner] = await db.select().from(runners).where(and(eq(runners.id, connection.runnerId), eq(runners.orgId, orgId)));
    if (runner) return { rule: "connection", runner, connection: connection.name };
  }
  const [org] = await db.select({ runner: runners }).from(organizations).innerJoin(runners, eq(runners.id, organizations.defaultRunnerId)).where(eq(organizations.id, orgId));
  if (org) return { rule: "default", runner: org.runner, connection: connection?.name ?? null };
  return { rule: "hosted", runner: null, connection: connection?.name ?? null };
}

/** The variables a runner-mode connection's credentials are read from on the runner (its settings still come from the connection). */
const credentialVarsOf = (provider: string) => {
  const p = CONNECTION_PROVIDERS[provider];
  const env: Record<string, string> = p?.env ?? {};
  return (p?.credentialFields ?? []).map((f) => env[f.name]).filter(Boolean);
};

/**
 * Preflight's runner check: the route, and what refuses it — a revoked runner, Planton-managed state on a
 * runner of the organization's own, a runner-mode connection on a Planton-hosted runner, an engine no
 * runner of the route has.
 */
export async function runnerCheck(
  db: Queryable,
  orgId: string,
  c: {
    component: { id: string; name: string } | null;
    connection: ConnectionRow | null;
    provisioner: Provisioner | null;
    backend: { name: string; kind: string } | null;
  },
): Promise<{ check: PreflightCheck; route: ResolvedRoute }> {
  const route = await resolveRoute(db, orgId, c.connection);
  const visited: string[] = [];
  if (c.connection) visited.push(`connection ${c.connection.name}'s runner: ${c.connection.runnerId ? (route.rule === "connection" ? route.runner!.name : `${c.connection.runnerId} (not found)`) : "none named"}`);
  if (route.rule !== "connection") visited.push(`organization's default runner: ${route.rule === "default" ? route.runner!.name : "none"}`);
  if (route.rule === "hosted") visited.push("Planton-hosted runners");
  const errors: string[] = [];
  const where = route.runner ? `runner ${route.runner.name} (${route.rule === "connection" ? `named by connection ${route.connection}` : "the organization's default runner"})` : "a Planton-hosted runner";
  const runnerName = route.runner?.name ?? "";
  if (route.runner?.revokedAt) {
    errors.push(
      route.rule === "connection"
        ? `Connection ${route.connection} names runner ${runnerName}, which was revoked at ${route.runner.revokedAt.toISOString()}. Name another runner on the connection (Settings → Connections → ${route.connection}), or clear its runner, then run the job again.`
        : `The organization's default runner ${runnerName} was revoked at ${route.runner.revokedAt.toISOString()}. Choose another (planton runner set-default <runner>) or clear it (planton runner unset-default), then run the job again.`,
    );
  }
  if (route.runner && c.backend?.kind === PLANTON_MANAGED_KIND && c.component) {
    const tool = c.provisioner === "pulumi" ? "pulumi" : "tofu";
    errors.push(
      `Component ${c.component.name}'s state is on Planton-managed storage, which only Planton-hosted runners can reach, and this job would run on ${where}. Move its state to a backend of your own first (planton ${tool} state migrate-backend ${c.component.id} --to <backend>, or every state at once: planton infra state-backend move-off-planton --to <backend>), then run the job again.`,
    );
  }
  if (route.runner && c.backend?.kind === PLANTON_MANAGED_KIND && !c.component) {
    errors.push(
      `A new component's state would be kept on Planton-managed storage (the organization has no default backend for ${c.provisioner ?? "its provisioner"}), which only Planton-hosted runners can reach, and its jobs would run on ${where}. Make a backend of your own the default (planton infra state-backend set-default <backend>), then run the check again.`,
    );
  }
  if (!route.runner && c.connection?.mode === "runner") {
    const vars = credentialVarsOf(c.connection.provider);
    errors.push(
      `Connection ${c.connection.name} is in runner mode: its credentials come from the environment of a runner of the organization's own${vars.length ? ` (${vars.join(", ")})` : ""}, and this job would run on a Planton-hosted runner, which has none of them. Name a runner on the connection (Settings → Connections → ${c.connection.name}), or make one the organization's default (planton runner set-default <runner>), then run the job again.`,
    );
  }
  if (c.provisioner && c.provisioner !== "builtin") {
    const engine = ENGINE_TITLES[c.provisioner];
    const candidates = route.runner ? [route.runner] : await db.select().from(runners).where(and(eq(runners.kind, "hosted"), isNull(runners.orgId), isNull(runners.revokedAt)));
    // A runner that never claimed since it started has not said what it has: it may have the engine.
    const reported = candidates.filter((r) => Object.keys(r.engines ?? {}).length > 0);
    const having = reported.filter((r) => r.engines?.[c.provisioner!]);
    visited.push(`${engine} on ${route.runner ? runnerName : "Planton-hosted runners"}: ${having.length ? having.map((r) => `${r.name} ${r.engines[c.provisioner!]}`).join(", ") : reported.length ? "none" : "not reported yet"}`);
    if (candidates.length && reported.length === candidates.length && !having.length) {
      errors.push(
        route.runner
          ? `The module needs ${engine}, and runner ${runnerName} does not have it (it reported ${Object.keys(route.runner.engines).join(", ")}). Install ${engine} where ${runnerName} runs and restart it, or run the job on another runner, then run the job again.`
          : `The module needs ${engine}, and no Planton-hosted runner has it. Run the job on a runner of your own that has ${engine} (name it on the connection, or planton runner set-default <runner>), then run the job again.`,
      );
    }
  }
  return {
    check: { essential: "runner", passed: !errors.length, resolvedTo: routeSentence(jobRouteOf(route)).replace(/^on /, ""), errors, visited },
    route,
  };
}
