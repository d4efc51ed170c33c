import { and, eq, inArray, or } from "drizzle-orm";
import { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { environments, flowControlPolicies, infraComponents } from "@/db/schema";
import { newId } from "@/lib/ids";
import { diffFields, recordAudit } from "../../audit";
import { badRequest, notFound } from "../../errors";
import type { Actor } from "../../actor";
import { environmentByName } from "../organizations/lookup";

import { PLATFORM_DEFAULT, POLICY_SELECTORS, togglesOf as toggles, type PolicySelector, type PolicyToggles } from "@/lib/flow-control";

export async function ensurePlatformPolicy(db: Queryable): Promise<void> {
  await db
    .insert(flowControlPolicies)
    .values({ id: newId("flowControlPolicy"), selector: "platform", orgId: null, selectorId: "platform", ...PLATFORM_DEFAULT })
    .onConflictDoNothing();
}

export interface ResolvedPolicy {
  policyId: string | null;
  selector: PolicySelector;
  /** What the policy is attached to: the component's or environment's name, the org, or "platform". */
  target: string;
  toggles: PolicyToggles;
  /** Each selector looked at, most specific first, and whether a policy was found there. */
  visited: { selector: PolicySelector; target: string; found: boolean }[];
}

/** The policy for a component: the most specific of component → environment → organization → platform wins; no merging. */
export async function resolveFlowControl(
  db: Queryable,
  scope: { orgId: string; orgSlug: string; environmentId: string; environmentName: string; componentId?: string; componentName?: string },
): Promise<ResolvedPolicy> {
  const chain: { selector: PolicySelector; id: string; target: string }[] = [];
  if (scope.componentId) chain.push({ selector: "component", id: scope.componentId, target: scope.componentName ?? scope.componentId });
  chain.push({ selector: "environment", id: scope.environmentId, target: scope.environmentName });
  chain.push({ selector: "organization", id: scope.orgId, target: scope.orgSlug });
  chain.push({ selector: "platform", id: "platform", target: "platform" });
  const rows = await db
    .select()
    .from(flowControlPolicies)
    .where(or(...chain.map((c) => and(eq(flowControlPolicies.selector, c.selector), eq(flowControlPolicies.selectorId, c.id)))));
  const visited: ResolvedPolicy["visited"] = [];
  for (const c of chain) {
    const row = rows.find((r) => r.selector === c.selector && r.selectorId === c.id);
    visited.push({ selector: c.selector, target: c.target, found: !!row });
    if (row) return { policyId: row.id, selector: c.selector, target: c.target, toggles: toggles(row), visited };
  }
  return { policyId: null, selector: "platform", target: "platform", toggles: PLATFORM_DEFAULT, visited };
}

export async function listFlowControlPolicies(db: Queryable, orgId: string) {
  const envs = await db.select({ id: environments.id, name: environments.name }).from(environments).where(eq(environments.orgId, orgId));
  const comps = await db
    .select({ id: infraComponents.id, name: infraComponents.name, environmentId: infraComponents.environmentId })
    .from(infraComponents)
    .innerJoin(flowControlPolicies, and(eq(flowControlPolicies.selector, "component"), eq(flowControlPolicies.selectorId, infraComponents.id)))
    .where(eq(infraComponents.orgId, orgId));
  const ids = ["platform", orgId, ...envs.map((e) => e.id), ...comps.map((c) => c.id)];
  const rows = await db.select().from(flowControlPolicies).where(inArray(flowControlPolicies.selectorId, ids));
  const order: readonly PolicySelector[] = POLICY_SELECTORS;
  return rows
    .map((r) => {
      const comp = comps.find((c) => c.id === r.selectorId);
      const target =
        r.selector === "platform" ? "platform"
        : r.selector === "organization" ? "organization"
        : r.selector === "environment" ? envs.find((e) => e.id === r.selectorId)?.name ?? r.selectorId
        : `${comp?.name} (${envs.find((e) => e.id === comp?.environmentId)?.name})`;
      return { id: r.id, selector: r.selector, selectorId: r.selectorId, target, ...toggles(r), updatedAt: r.updatedAt };
    })
    .sort((a, b) => order.indexOf(a.selector) - order.indexOf(b.selector) || a.target.localeCompare(b.target));
}

const togglesInput = z.object({
  manualStart: z.boolean(),
  skipRefresh: z.boolean(),
  previewBeforeApply: z.boolean(),
  pauseBeforeApply: z.boolean(),
  protectDeletes: z.boolean(),
});

export const setPolicyInput = z.object({
  selector: z.enum(["organization", "environment", "component"], { error: "The selector must be organization, environment or component; the platform policy is fixed." }),
  /** Environment name, or component id; ignored for organization. */
  target: z.string().optional(),
  toggles: togglesInput,
});

async function selectorIdFor(db: Queryable, orgId: string, selector: PolicySelector, target?: string) {
  if (selector === "organization") return { id: orgId, label: "the organization", name: "organization", environment: null };
  if (!target) throw badRequest(`Name the ${selector} this policy is for.`, "target");
  if (selector === "environment") {
    const env = await environmentByName(db, orgId, target);
    return { id: env.id, label: `environment ${env.name}`, name: env.name, environment: env.name };
  }
  const [comp] = await db
    .select({ id: infraComponents.id, name: infraComponents.name, environment: environments.name })
    .from(infraComponents)
    .innerJoin(environments, eq(environments.id, infraComponents.environmentId))
    .where(and(eq(infraComponents.orgId, orgId), eq(infraComponents.id, target)));
  if (!comp) throw notFound(`Infra Component ${target}`, "Pick a component from the list.");
  return { id: comp.id, label: `component ${comp.name}`, name: comp.name, environment: comp.environment };
}

/** What a stored policy applies to, by name, for its audit events. */
async function selectorOfPolicy(db: Queryable, row: typeof flowControlPolicies.$inferSelect): Promise<{ name: string; environment: string | null }> {
  if (row.selector === "environment") {
    const [env] = await db.select({ name: environments.name }).from(environments).where(eq(environments.id, row.selectorId));
    return { name: env?.name ?? row.selectorId, environment: env?.name ?? null };
  }
  if (row.selector === "component") {
    const [comp] = await db
      .select({ name: infraComponents.name, environment: environments.name })
      .from(infraComponents)
      .innerJoin(environments, eq(environments.id, infraComponents.environmentId))
      .where(eq(infraComponents.id, row.selectorId));
    return { name: comp?.name ?? row.selectorId, environment: comp?.environment ?? null };
  }
  return { name: row.selector, environment: null };
}

/** Creates or replaces the policy for one selector. */
export async function setFlowControlPolicy(db: Database, actor: Actor, raw: z.input<typeof setPolicyInput>) {
  const input = setPolicyInput.parse(raw);
  const sel = await selectorIdFor(db, actor.orgId, input.selector, input.target);
  return db.transaction(async (tx) => {
    const [existing] = await tx
      .select()
      .from(flowControlPolicies)
      .where(and(eq(flowControlPolicies.selector, input.selector), eq(flowControlPolicies.selectorId, sel.id)));
    if (existing) {
      const changes = diffFields(toggles(existing), input.toggles);
      await tx.update(flowControlPolicies).set({ ...input.toggles, updatedAt: new Date() }).where(eq(flowControlPolicies.id, existing.id));
      await recordAudit(tx, actor, {
        action: "flow_control.update",
        targetId: existing.id,
        targetName: sel.name,
        environment: sel.environment,
        summary: `Changed the flow-control policy of ${sel.label}: ${Object.keys(changes).join(", ") || "no change"}`,
        changes,
      });
      return existing.id;
    }
    const id = newId("flowControlPolicy");
    await tx.insert(flowControlPolicies).values({ id, selector: input.selector, orgId: actor.orgId, selectorId: sel.id, ...input.toggles });
    await recordAudit(tx, actor, {
      action: "flow_control.create",
      targetId: id,
      targetName: sel.name,
      environment: sel.environment,
      summary: `Set a flow-control policy on ${sel.label}`,
      changes: input.toggles,
    });
    return id;
  });
}

export async function deleteFlowControlPolicy(db: Database, actor: Actor, id: string) {
  return db.transaction(async (tx) => {
    const [row] = await tx.select().from(flowControlPolicies).where(and(eq(flowControlPolicies.id, id), eq(flowControlPolicies.orgId, actor.orgId)));
    if (!row) throw notFound(`Flow-control policy ${id}`, "It may have been removed already; reload the list.");
    const sel = await selectorOfPolicy(tx, row);
    await tx.delete(flowControlPolicies).where(eq(flowControlPolicies.id, id));
    await recordAudit(tx, actor, {
      action: "flow_control.delete",
      targetId: id,
      targetName: sel.name,
      environment: sel.environment,
      summary: `Removed the ${row.selector} flow-control policy; the next less specific policy now applies`,
      changes: toggles(row),
    });
  });
}
