// The audit record's vocabulary, defined once: every action the product records (with the words the
// Audit page, the CLI and exports show), the kinds of target and where each one's page is, and the
// results. `recordAudit` accepts only these actions, so a new mutation must name its action here.

export const AUDIT_TARGET_KINDS = {
  organization: { title: "Organization" },
  infra_component: { title: "Component" },
  infra_job: { title: "Job" },
  connection: { title: "Connection" },
  secret: { title: "Secret" },
  variable: { title: "Variable" },
  environment: { title: "Environment" },
  flow_control_policy: { title: "Flow-control policy" },
  membership: { title: "Member" },
  invitation: { title: "Invitation" },
  user: { title: "User" },
  session: { title: "Session" },
  api_token: { title: "API token" },
  runner: { title: "Runner" },
  state_backend: { title: "State backend" },
  state: { title: "State" },
  state_move: { title: "State move" },
  state_move_item: { title: "State move item" },
  iac_module: { title: "Module" },
} as const;
export type AuditTargetKind = keyof typeof AUDIT_TARGET_KINDS;
export const AUDIT_TARGET_KIND_NAMES = Object.keys(AUDIT_TARGET_KINDS) as [AuditTargetKind, ...AuditTargetKind[]];

/** Every action, with its words ("approved a job") and the kind of target it names. */
export const AUDIT_ACTIONS = {
  "organization.create": { title: "created the organization", target: "organization" },
  "component.create": { title: "created a component", target: "infra_component" },
  "component.update": { title: "changed a component", target: "infra_component" },
  "component.delete": { title: "asked to delete a component", target: "infra_component" },
  "component.remove": { title: "removed a deleted component", target: "infra_component" },
  "component.delete_failed": { title: "failed to delete a component", target: "infra_component" },
  "component.forget": { title: "forgot a component", target: "infra_component" },
  "job.create": { title: "ran a job", target: "infra_job" },
  "job.rerun": { title: "reran a job", target: "infra_job" },
  "job.approve": { title: "approved a job", target: "infra_job" },
  "job.cancel": { title: "cancelled a job", target: "infra_job" },
  "job.preflight_failed": { title: "was refused a job by preflight", target: "infra_job" },
  "connection.create": { title: "created a connection", target: "connection" },
  "connection.update": { title: "changed a connection", target: "connection" },
  "connection.delete": { title: "deleted a connection", target: "connection" },
  "connection.authorize": { title: "changed a connection's authorizations", target: "connection" },
  "secret.create": { title: "created a secret", target: "secret" },
  "secret.update": { title: "changed a secret", target: "secret" },
  "secret.write": { title: "wrote a secret's value", target: "secret" },
  "secret.delete": { title: "deleted a secret", target: "secret" },
  "variable.create": { title: "created a variable", target: "variable" },
  "variable.update": { title: "changed a variable", target: "variable" },
  "variable.delete": { title: "deleted a variable", target: "variable" },
  "environment.create": { title: "created an environment", target: "environment" },
  "environment.update": { title: "changed an environment", target: "environment" },
  "environment.delete": { title: "deleted an environment", target: "environment" },
  "flow_control.create": { title: "created a flow-control policy", target: "flow_control_policy" },
  "flow_control.update": { title: "changed a flow-control policy", target: "flow_control_policy" },
  "flow_control.delete": { title: "deleted a flow-control policy", target: "flow_control_policy" },
  "member.invite": { title: "invited a member", target: "invitation" },
  "member.add": { title: "added a member", target: "user" },
  "member.role_change": { title: "changed a member's role", target: "membership" },
  "member.remove": { title: "removed a member", target: "membership" },
  "member.sign_in_reset": { title: "issued a sign-in reset", target: "membership" },
  "member.password_reset": { title: "reset a password", target: "user" },
  "session.sign_in": { title: "signed in", target: "session" },
  "session.sign_in_failed": { title: "failed to sign in", target: "user" },
  "session.sign_out": { title: "signed out", target: "session" },
  "api_token.create": { title: "created an API token", target: "api_token" },
  "api_token.revoke": { title: "revoked an API token", target: "api_token" },
  "runner.register": { title: "registered a runner", target: "runner" },
  "runner.rotate_token": { title: "rotated a runner's token", target: "runner" },
  "runner.revoke": { title: "revoked a runner", target: "runner" },
  "runner.set_default": { title: "set the default runner", target: "runner" },
  "runner.unset_default": { title: "cleared the default runner", target: "organization" },
  "state_backend.create": { title: "created a state backend", target: "state_backend" },
  "state_backend.update": { title: "changed a state backend", target: "state_backend" },
  "state_backend.delete": { title: "deleted a state backend", target: "state_backend" },
  "state_backend.set_default": { title: "set a default state backend", target: "state_backend" },
  "state_backend.unset_default": { title: "cleared a default state backend", target: "state_backend" },
  "state.rollback": { title: "rolled back a state", target: "infra_component" },
  "state.force_unlock": { title: "force-unlocked a state", target: "infra_component" },
  "state.migrate_backend": { title: "moved a component's state", target: "infra_component" },
  "state.move.start": { title: "started a state move", target: "state_move" },
  "state.move.retry": { title: "retried a state move", target: "state_move" },
  "state.move.rollback": { title: "moved a component's state back to Planton-managed storage", target: "infra_component" },
  "state.move.item_failed": { title: "had a state fail to move", target: "state_move_item" },
  "state.move.end": { title: "finished a state move", target: "state_move" },
  "audit.archive": { title: "archived audit events", target: "organization" },
  "module.register": { title: "registered a module version", target: "iac_module" },
  "module.policy_change": { title: "changed who may register modules", target: "organization" },
} as const satisfies Record<string, { title: string; target: AuditTargetKind }>;
export type AuditAction = keyof typeof AUDIT_ACTIONS;
export const AUDIT_ACTION_NAMES = Object.keys(AUDIT_ACTIONS) as [AuditAction, ...AuditAction[]];

export const AUDIT_RESULTS = ["success", "failure"] as const;
export type AuditResult = (typeof AUDIT_RESULTS)[number];

/** The hash a chain starts from (the previous hash of its first event). */
export const AUDIT_GENESIS_HASH = "0".repeat(64);

/** The console page of an event's target, or null where it has none (or it is gone). */
export function auditTargetHref(org: string, kind: string, targetId: string | null): string | null {
  if (!targetId) return null;
  const o = `/o/${encodeURIComponent(org)}`;
  switch (kind as AuditTargetKind) {
    case "infra_component":
      return `${o}/components/${encodeURIComponent(targetId)}`;
    case "infra_job":
      return `${o}/jobs/${encodeURIComponent(targetId)}`;
    case "runner":
      return `${o}/settings/runners/${encodeURIComponent(targetId)}`;
    case "connection":
      return `${o}/settings/connections`;
    case "secret":
    case "variable":
      return `${o}/settings/secrets`;
    case "environment":
      return `${o}/settings/environments`;
    case "flow_control_policy":
      return `${o}/settings/flow-control`;
    case "membership":
    case "invitation":
      return `${o}/settings/members`;
    case "api_token":
      return `${o}/settings/api-tokens`;
    case "state_backend":
      return `${o}/settings/state-backends`;
    case "state_move":
    case "state_move_item":
      return `${o}/settings/state-backends/move`;
    case "iac_module":
      return `${o}/settings/modules`;
    default:
      return null;
  }
}

/** Whether `a` names an action the record keeps ("job.approve") or a family of them ("job"): the filters' one rule. */
export const isAuditActionOrFamily = (a: string) => (AUDIT_ACTION_NAMES as string[]).includes(a) || AUDIT_ACTION_NAMES.some((n) => n.startsWith(`${a}.`));

/** "approved a job", or the action's own name for one recorded before it had words. */
export function auditActionTitle(action: string): string {
  return (AUDIT_ACTIONS as Record<string, { title: string }>)[action]?.title ?? action;
}

/**
 * The cursor that lists events older than `seq` (a page's nextCursor; the console's "Show event #n"
 * starts at `seq + 1`). Here, not beside the API schemas, so the console's pages take it without them.
 */
export const encodeAuditCursor = (seq: number) => btoa(`seq:${seq}`).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
