// Preflight: before a job is queued, resolve the four essentials (IaC module, provider credentials,
// state backend, flow-control policy) and check the connection may be used in the environment.
import { and, eq, inArray, isNotNull, isNull } from "drizzle-orm";
import { z } from "zod";
import type { Queryable } from "@/db/client";
import { connectionAuthorizations, connections, environments, iacModules, moduleBundles, organizations, stateBackends, stateObjects } from "@/db/schema";
import { CONNECTION_PROVIDERS, type Provisioner } from "@/lib/catalog";
import { bundleSha256 } from "@/lib/module-bundle";
import { readModuleBundle, type ModuleBundle } from "../modules/read-folder";
import { secretReferences, variableReferences } from "@/lib/secrets";
import type { Actor } from "../../actor";
import { getCatalogKind, modulesForKind, type CatalogKind } from "../catalog";
import { environmentByName } from "../organizations/lookup";
import { listEnvironments } from "../settings/environments";
import { resolveFlowControl, type ResolvedPolicy } from "../settings/flow-control";
import { backendRule, backendsAndDefaults } from "../state-backends/served";
import { secretUses, variableUses } from "../settings/secret-access";
import { runnerCheck, type ResolvedRoute } from "../runners/route";
import type { Essential, PreflightCheck, PreflightReport } from "@/lib/preflight";

export type { Essential, PreflightCheck, PreflightReport };

type ModuleRow = typeof iacModules.$inferSelect;
type ConnectionRow = typeof connections.$inferSelect;
type BackendRow = typeof stateBackends.$inferSelect;

export type { ModuleBundle };
export { readModuleBundle };

export interface Resolved {
  module: ModuleRow | null;
  bundle: ModuleBundle | null;
  connection: ConnectionRow | null;
  backend: BackendRow | null;
  /** The backend is the organization's default (the component names none and has no state yet). */
  backendFromDefault: boolean;
  policy: ResolvedPolicy;
  /** The values of the variables the spec references (`$var/NAME`). */
  variableValues: Record<string, string>;
  /** Where the job runs: the runner and the rule that chose it. */
  route: ResolvedRoute;
}


/** A module version's files: a registered version's stored bundle, a builtin one's folder; null when they are not found. */
export async function moduleBundleOf(db: Queryable, m: ModuleRow): Promise<ModuleBundle | null> {
  if (m.sourceKind === "builtin") return readModuleBundle(m.source);
  if (!m.bundleSha256) return null;
  const [row] = await db.select({ files: moduleBundles.files }).from(moduleBundles).where(eq(moduleBundles.sha256, m.bundleSha256));
  return row ? { files: row.files, sha256: bundleSha256(row.files) } : null;
}

export const unauthorizedConnectionMessage = (environment: string, provider: string, connection: string) =>
  `Nothing ran: environment ${environment} may not use the ${provider} connection ${connection}. Authorize it (planton connection auth create --provider ${provider} --connection ${connection} --scope environment --environments ${environment}), or make it the organization's (--scope organization), then run the job again.`;

const RULE_WORDS = { custom: "the component's custom module", organization: "organization registry latest", platform: "platform registry", none: "" } as const;

async function resolveModule(db: Queryable, orgId: string, kind: string, customModuleId: string | null) {
  const visited: string[] = [];
  const errors: string[] = [];
  let module: ModuleRow | null = null;
  let rule: keyof typeof RULE_WORDS = "none";
  if (customModuleId) {
    const [row] = await db.select().from(iacModules).where(and(eq(iacModules.id, customModuleId), inArray(iacModules.scopeKey, [orgId, "platform"])));
    visited.push(`component's custom module: ${row ? `${row.name}@${row.version}` : `${customModuleId} (not found)`}`);
    if (row) (module = row), (rule = "custom");
    else errors.push(`The component's custom module ${customModuleId} is not registered. Pick a registered version on the component (planton infra component update <id> --module name@version), or follow the registry's latest (--module latest), then run the job again.`);
  } else visited.push("component's custom module: none set");
  if (!module && !errors.length) {
    const rows = await modulesForKind(db, orgId, kind);
    const org = rows.filter((r) => r.scopeKey === orgId);
    visited.push(`organization registry: ${org.length ? org.map((r) => `${r.name}@${r.version}`).join(", ") : "none for " + kind}`);
    const platform = rows.filter((r) => r.scopeKey === "platform");
    if (org[0]) (module = org[0]), (rule = "organization");
    else {
      visited.push(`platform registry: ${platform.length ? platform.map((r) => `${r.name}@${r.version}`).join(", ") : "none for " + kind}`);
      if (platform[0]) (module = platform[0]), (rule = "platform");
    }
    if (!module) {
      errors.push(
        `No IaC module is registered for ${kind}: the component names none, and neither the organization's registry nor the platform registry has one. Register a module for ${kind} in the organization's registry (planton module register --kind ${kind} …), or set a custom module on the component, then run the job again.`,
      );
    }
  }
  let bundle: ModuleBundle | null = null;
  if (module) {
    bundle = await moduleBundleOf(db, module);
    const ref = `${module.name}@${module.version}`;
    if (!bundle) {
      errors.push(
        module.sourceKind === "builtin"
          ? `Nothing ran: the files of module ${ref} were not found at ${module.source}. Restore the module's folder, or register a module whose source exists, then run the job again.`
          : `Nothing ran: the stored bundle of module ${ref} (sha256 ${module.bundleSha256}) was not found. Register the module again as a new version, then run the job again.`,
      );
    } else if (!Object.keys(bundle.files).length) {
      errors.push(`Nothing ran: module ${ref} has no files (its bundle is empty, sha256 ${bundle.sha256}). Register a version with the module's files (planton module register), or pick another on the component, then run the job again.`);
      bundle = null;
    } else if (module.bundleSha256 && module.sourceKind !== "builtin" && bundle.sha256 !== module.bundleSha256) {
      errors.push(`Nothing ran: the stored bundle of module ${ref} does not match the checksum it was registered with (sha256 ${module.bundleSha256}, stored files hash to ${bundle.sha256}). Register the module again as a new version, then run the job again.`);
      bundle = null;
    }
  }
  const check: PreflightCheck = {
    essential: "module",
    passed: !errors.length,
    resolvedTo: module ? `${module.name}@${module.version} (${module.provisioner}, ${RULE_WORDS[rule]}${bundle ? `, sha256 ${bundle.sha256}` : ""})` : null,
    errors,
    visited,
  };
  return { check, module, bundle, rule };
}

/** May jobs in the environment deploy through the connection? Preflight asks before a job is queued, the runner API again when the job reads the connection's credentials. */
export async function isAuthorized(db: Queryable, connectionId: string, environmentId: string) {
  const rows = await db.select().from(connectionAuthorizations).where(eq(connectionAuthorizations.connectionId, connectionId));
  return rows.some((r) => r.scope === "organization" || (r.scope === "environment" && r.environmentId === environmentId));
}

/** What is wrong with using a connection in an environment for a provider, or [] when nothing is. */
async function connectionProblems(db: Queryable, conn: ConnectionRow, provider: string, env: { id: string; name: string }) {
  const errors: string[] = [];
  if (conn.provider !== provider) {
    errors.push(`Connection ${conn.name} is a ${conn.provider} connection, but this kind deploys through a ${provider} connection. Pick a ${provider} connection on the component, then run the job again.`);
  }
  const needed = CONNECTION_PROVIDERS[conn.provider]?.credentialFields ?? [];
  if (conn.mode === "stored" && needed.length && !conn.credentialsEncrypted) {
    errors.push(
      `Connection ${conn.name} has no credentials stored, and ${conn.provider} needs them (${needed.map((f) => f.name).join(", ")}). Add them in Settings → Connections → ${conn.name}, or switch the connection to runner mode, then run the job again.`,
    );
  }
  if (!(await isAuthorized(db, conn.id, env.id))) errors.push(unauthorizedConnectionMessage(env.name, conn.provider, conn.name));
  return errors;
}

async function resolveBackend(db: Queryable, orgId: string, provisioner: string | null, componentBackendId: string | null, componentId: string | null) {
  const org = await backendsAndDefaults(db, orgId);
  const [kept] = componentId
    ? await db
        .select({ id: stateObjects.id })
        .from(stateObjects)
        .where(and(eq(stateObjects.componentId, componentId), isNotNull(stateObjects.state), isNull(stateObjects.movedToBackendId)))
    : [];
  const { backend, rule } = backendRule(org, { stateBackendId: componentBackendId, stateOnPlanton: !!kept, provisioner });
  const name = (id: string | undefined) => org.backends.find((b) => b.id === id)?.name;
  const visited = [componentBackendId ? `component's state backend: ${name(componentBackendId) ?? `${componentBackendId} (not found)`}` : "component's state backend: none set"];
  if (!componentBackendId && componentId) visited.push(`component's existing state: ${kept ? "on Planton-managed storage" : "none"}`);
  if (!componentBackendId && !kept && provisioner) visited.push(`organization default for ${provisioner}: ${name(org.defaults.get(provisioner as Provisioner)) ?? "none"}`);
  if (rule === "planton_managed") visited.push(`Planton-managed: ${backend!.name}`);
  const where: Record<typeof rule, string> = {
    component: "the component's",
    existing_state: "where the component's state is",
    default: `the organization's default for ${provisioner}`,
    planton_managed: "Planton-managed",
    none: "",
  };
  const errors = backend
    ? []
    : [
        componentBackendId
          ? "The component's state backend was deleted, so its state cannot be found. Set the backend that holds it on the component (Infra Components → the component → Edit), then run the job again."
          : "No state backend could be resolved: the component names none, the organization has no default, and its Planton-managed backend is missing. Set a default in Settings → State Backends, then run the job again.",
      ];
  const check: PreflightCheck = { essential: "backend", passed: !!backend, resolvedTo: backend ? `${backend.name} (${backend.kind}, ${where[rule]})` : null, errors, visited };
  return { check, backend, fromDefault: rule === "default" };
}

function flowControlCheck(policy: ResolvedPolicy): PreflightCheck {
  return {
    essential: "flow_control",
    passed: true,
    resolvedTo: policy.selector === "platform" ? "platform default" : `${policy.selector} policy (${policy.target})`,
    errors: [],
    visited: policy.visited.map((v) => `${v.selector} ${v.target}: ${v.found ? "policy found" : "none"}`),
  };
}

/**
 * Every `$secret/NAME` and `$var/NAME` the spec references exists and may be used in the component's
 * environment; answers the variables' values too, which the job's input carries in place of their references.
 */
async function secretsCheck(db: Queryable, orgId: string, env: { id: string; name: string }, spec: unknown): Promise<{ check: PreflightCheck; variableValues: Record<string, string> }> {
  const secretNames = secretReferences(spec);
  const variableNames = variableReferences(spec);
  const [secretAnswers, variableAnswers] = await Promise.all([secretUses(db, orgId, env, secretNames), variableUses(db, orgId, env, variableNames)]);
  const uses = [
    ...secretNames.map((n) => ({ kind: "secret", name: n, use: secretAnswers.get(n)! })),
    ...variableNames.map((n) => ({ kind: "variable", name: n, use: variableAnswers.get(n)! })),
  ];
  const errors = uses.flatMap(({ use }) => (use.ok ? [] : [use.reason]));
  const variableValues: Record<string, string> = {};
  for (const [name, use] of variableAnswers) if (use.ok) variableValues[name] = use.entry.value;
  return {
    check: {
      essential: "secrets",
      passed: !errors.length,
      resolvedTo: uses.length ? uses.map((u) => `${u.kind === "secret" ? "$secret" : "$var"}/${u.name}`).join(", ") : "the spec references none",
      errors,
      visited: uses.map((u) => `${u.kind} ${u.name}: ${u.use.ok ? `usable in ${env.name}` : "refused"}`),
    },
    variableValues,
  };
}

function report(checks: PreflightCheck[]): PreflightReport {
  const passed = checks.every((c) => c.passed);
  return { passed, checks, reason: passed ? null : (checks.find((c) => !c.passed)?.errors[0] ?? null) };
}

export interface PreflightComponent {
  id: string;
  name: string;
  kind: string;
  orgId: string;
  environmentId: string;
  connectionId: string | null;
  customModuleId: string | null;
  stateBackendId: string | null;
  /** The component's spec: the `$secret/…` references it holds are checked against their scope. */
  spec?: unknown;
}

/** Preflight for one component: the report plus what was resolved, for the IaC input. */
export async function preflightForComponent(db: Queryable, component: PreflightComponent): Promise<{ report: PreflightReport; resolved: Resolved; kind: CatalogKind }> {
  const [org] = await db.select().from(organizations).where(eq(organizations.id, component.orgId));
  const [env] = await db.select().from(environments).where(eq(environments.id, component.environmentId));
  const kind = await getCatalogKind(db, component.orgId, component.kind);
  const mod = await resolveModule(db, component.orgId, component.kind, component.customModuleId);

  let connection: ConnectionRow | null = null;
  const cred: PreflightCheck = { essential: "credentials", passed: false, resolvedTo: null, errors: [], visited: [] };
  if (!component.connectionId) {
    cred.visited.push("component's connection: none set");
    cred.errors.push(
      `Component ${component.name} has no connection, and ${kind.kind} deploys through a ${kind.provider} connection. Set one on the component (Infra Components → ${component.name} → Edit), then run the job again.`,
    );
  } else {
    [connection = null] = await db.select().from(connections).where(eq(connections.id, component.connectionId));
    cred.visited.push(`component's connection: ${connection ? connection.name : `${component.connectionId} (not found)`}`);
    if (!connection) cred.errors.push(`Component ${component.name}'s connection was deleted. Set another on the component, then run the job again.`);
    else {
      cred.errors.push(...(await connectionProblems(db, connection, kind.provider, env)));
      cred.resolvedTo = `${connection.name} (${connection.provider}, ${connection.mode === "runner" ? "credentials from the runner" : "stored credentials"})`;
    }
  }
  cred.passed = !cred.errors.length;

  const be = await resolveBackend(db, component.orgId, mod.module?.provisioner ?? null, component.stateBackendId, component.id);
  const run = await runnerCheck(db, component.orgId, { component, connection, provisioner: mod.module?.provisioner ?? null, backend: be.backend });
  const policy = await resolveFlowControl(db, {
    orgId: org.id,
    orgSlug: org.slug,
    environmentId: env.id,
    environmentName: env.name,
    componentId: component.id,
    componentName: component.name,
  });
  const store = await secretsCheck(db, component.orgId, env, component.spec ?? {});
  return {
    report: report([mod.check, cred, be.check, run.check, flowControlCheck(policy), store.check]),
    resolved: { module: mod.module, bundle: mod.bundle, connection, backend: be.backend, backendFromDefault: be.fromDefault, policy, variableValues: store.variableValues, route: run.route },
    kind,
  };
}

export const preflightForKindInput = z.object({ kind: z.string().min(1), environment: z.string().min(1) });
export const preflightReportsInput = z.object({
  kind: z.string().min(1).meta({ description: "The catalog kind" }),
  environment: z.string().min(1).optional().meta({ description: "One environment's name; every environment when left out" }),
});

/** `GET /api/v1/preflight`: the four checks for a kind in one environment, or in every one. */
export async function preflightReports(db: Queryable, actor: Actor, raw: z.input<typeof preflightReportsInput>) {
  const input = preflightReportsInput.parse(raw);
  const envs = input.environment ? [input.environment] : (await listEnvironments(db, actor.orgId)).map((e) => e.name);
  const reports: (PreflightReport & { environment: string })[] = [];
  for (const environment of envs) reports.push({ environment, ...(await preflightForKind(db, actor, { kind: input.kind, environment })) });
  return { kind: input.kind, reports };
}

/** `planton infra job preflight-checks --catalog-kind <kind>`: the four checks for a kind in an environment, without a component. */
export async function preflightForKind(db: Queryable, actor: Actor, raw: z.input<typeof preflightForKindInput>): Promise<PreflightReport> {
  const input = preflightForKindInput.parse(raw);
  const env = await environmentByName(db, actor.orgId, input.environment);
  const kind = await getCatalogKind(db, actor.orgId, input.kind);
  const [org] = await db.select().from(organizations).where(eq(organizations.id, actor.orgId));
  const mod = await resolveModule(db, actor.orgId, kind.kind, null);

  const cred: PreflightCheck = { essential: "credentials", passed: false, resolvedTo: null, errors: [], visited: [] };
  const candidates = await db.select().from(connections).where(and(eq(connections.orgId, actor.orgId), eq(connections.provider, kind.provider))).orderBy(connections.name);
  let chosen: ConnectionRow | null = null;
  for (const c of candidates) {
    const problems = await connectionProblems(db, c, kind.provider, env);
    cred.visited.push(`connection ${c.name}: ${problems.length ? problems[0] : "usable"}`);
    if (!problems.length && !cred.resolvedTo) (cred.resolvedTo = `${c.name} (${c.provider})`), (chosen = c);
    if (problems.length && candidates.length === 1) cred.errors.push(...problems);
  }
  if (!candidates.length) {
    cred.errors.push(`The organization has no ${kind.provider} connection, and ${kind.kind} deploys through one. Create one in Settings → Connections, authorize it for ${env.name}, then run the check again.`);
  } else if (!cred.resolvedTo && candidates.length > 1) {
    cred.errors.push(`None of the organization's ${kind.provider} connections (${candidates.map((c) => c.name).join(", ")}) can be used in ${env.name}; each one's reason is listed. Fix one, then run the check again.`);
  }
  cred.passed = !!cred.resolvedTo;
  if (cred.passed) cred.errors = [];

  const be = await resolveBackend(db, actor.orgId, mod.module?.provisioner ?? null, null, null);
  const run = await runnerCheck(db, actor.orgId, { component: null, connection: chosen, provisioner: mod.module?.provisioner ?? null, backend: be.backend });
  const policy = await resolveFlowControl(db, { orgId: org.id, orgSlug: org.slug, environmentId: env.id, environmentName: env.name });
  return report([mod.check, cred, be.check, run.check, flowControlCheck(policy)]);
}
