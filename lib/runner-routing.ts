// Where a job runs, and what a runner's state is called: the one place the console, the CLI, the
// claim and preflight read these rules from (spec/runners-and-state-backends.md, "Where Your Work Runs").
//
// A job runs on the runner its connection names, else on the organization's default runner, else on a
// Planton-hosted runner: the first step that names a runner wins. The job records which rule chose it.
import type { Provisioner } from "./catalog";

export const ROUTE_RULES = ["connection", "default", "hosted"] as const;
export type RouteRule = (typeof ROUTE_RULES)[number];

/** A job's route as the pages and the CLI show it. `runner` is null for a Planton-hosted runner. */
export interface JobRoute {
  rule: RouteRule;
  runner: string | null;
  /** The connection that named the runner (rule `connection`). */
  connection: string | null;
}

/** "on prod-runner: named by connection aws-prod", the job page's and the CLI's words for a route. */
export function routeSentence(route: JobRoute): string {
  switch (route.rule) {
    case "connection":
      return `on ${route.runner}: named by connection ${route.connection}`;
    case "default":
      return `on ${route.runner}: the organization's default runner`;
    case "hosted":
      return "on a Planton-hosted runner: neither the connection nor the organization names a runner";
  }
}

/** The engine a module's provisioner needs on the runner; the builtin engine ships with every runner. */
export const ENGINE_TITLES: Record<Provisioner, string> = { builtin: "builtin engine", tofu: "OpenTofu", terraform: "Terraform", pulumi: "Pulumi" };

/** A runner is online while it has been seen within this window (a runner long-polls every 25 s at most). */
export const RUNNER_ONLINE_SECONDS = 60;

export const RUNNER_STATUSES = ["online", "busy", "offline", "revoked"] as const;
export type RunnerStatus = (typeof RUNNER_STATUSES)[number];

/** online: seen lately with room for work; busy: seen lately and running as many jobs as its capacity; offline: not seen lately, or never. */
export function runnerStatus(r: { lastSeenAt: Date | string | null; revokedAt: Date | string | null; running: number; capacity: number }, now = Date.now()): RunnerStatus {
  if (r.revokedAt) return "revoked";
  const seen = r.lastSeenAt ? new Date(r.lastSeenAt).getTime() : 0;
  if (!seen || now - seen > RUNNER_ONLINE_SECONDS * 1000) return "offline";
  return r.running >= r.capacity ? "busy" : "online";
}

/** The command that starts a registered runner, as the console and `planton runner register` print it. */
export const runnerStartCommand = (url: string, token: string) => `planton runner start --token ${token} --url ${url}`;
