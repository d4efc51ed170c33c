// The router walk: every mutation of the app router is called once, as the console calls it (tRPC
// caller, real context, real database), and must leave exactly one new audit event with the right
// action, actor, target and names (plus, for one that queues a job, that job's job.create, named by its case). A mutation without a case here fails the walk, so a new one cannot
// ship without its audit event. Refusals and queries must leave none.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { isDeepStrictEqual } from "node:util";
import { and, eq, notInArray } from "drizzle-orm";
import { auditEvents, invitations, memberships } from "@/db/schema";
import { AUDIT_ACTIONS, type AuditAction } from "@/lib/audit";
import type { Role } from "@/lib/roles";
import { createTestDatabase, type TestDatabase } from "../test/database";
import { claim, orgWithComponent, runStep, testRunner } from "../test/job-helpers";
import type { AppCaller, TestOrg } from "../test/fixtures";
import { createApiToken } from "./services/settings/api-tokens";
import { cancelJob } from "./services/jobs/cancel-job";
import { createJob } from "./services/jobs/create-job";
import { createComponentAndDeploy } from "./services/components/lifecycle";
import { createConnection } from "./services/settings/connections";
import { lockState, putState, unlockState } from "./services/runners/state";
import { listStateVersions } from "./services/state/state-versions";
import { createStateBackend } from "./services/state-backends/backends";
import { moveRun, startMove } from "./services/state-backends/move";
import { plantonManagedKey, PlantonManagedStore } from "./services/state-backends/planton-managed-store";
import { appRouter } from "./trpc/root";

let t: TestDatabase;
let w: World;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "planton-audit-walk-"));

/** Values that must never appear in any audit event (secrets and credentials sent to the mutations). */
const NEVER_RECORDED = ["walk-secret-value-1", "walk-secret-value-2", "AKIAWALKEXAMPLE", "walk-aws-secret-key", "walk-aws-secret-key-2"];

interface World {
  org: TestOrg;
  components: { id: string; name: string }[];
  runner: Awaited<ReturnType<typeof testRunner>>;
  /** Ids and names the cases hand on to later cases. */
  ids: Record<string, string>;
}

/** What the mutation's own event must say; `targetId` and the names are checked exactly (null included). */
interface Expected {
  action: AuditAction;
  targetId: string;
  targetName: string | null;
  environment?: string | null;
  result?: "success" | "failure";
  changes?: Record<string, unknown>;
}

interface Case {
  /** The role calling; admin when left out. */
  as?: Role;
  /** Anything the case needs first (its own events are not counted), then the input. */
  input: () => Promise<unknown> | unknown;
  expect: (out: any) => Expected | Promise<Expected>;
  /** The other events the mutation records in the same transaction (the job a create queues), each checked for its action, target and actor. */
  with?: (out: any) => { action: AuditAction; targetId: string }[];
  /** Events the system records afterwards as a consequence (awaited by `settle`), by action, with why. */
  then?: { settle: (out: any) => Promise<void>; actions: AuditAction[] };
}

/** A mutation that changes nothing records nothing: the reason is said here. */
interface NoEvent {
  none: string;
  input: () => Promise<unknown> | unknown;
}

const org = () => w.org.slug;
const DIR = (name: string) => path.join(tmp, name);

// Ordered: each case may use what earlier ones made.
// A mutation with more than one way through (a create that deploys, one that saves a draft) has a case for each.
const CASES: Record<string, Case | Case[] | NoEvent> = {
  "environments.create": {
    input: () => ({ org: org(), name: "qa", description: "for the walk" }),
    expect: (out) => ((w.ids.qa = out.id), { action: "environment.create", targetId: out.id, targetName: "qa", environment: "qa" }),
  },
  "environments.update": {
    input: () => ({ org: org(), id: w.ids.qa, description: "changed" }),
    expect: () => ({ action: "environment.update", targetId: w.ids.qa, targetName: "qa", environment: "qa", changes: { description: { from: "for the walk", to: "changed" } } }),
  },
  "connections.create": {
    input: () => ({ org: org(), name: "aws-walk", provider: "aws", config: { region: "eu-west-1" }, credentials: { access_key_id: "AKIAWALKEXAMPLE", secret_access_key: "walk-aws-secret-key" } }),
    expect: (out) => ((w.ids.conn = out.id), { action: "connection.create", targetId: out.id, targetName: "aws-walk", changes: { credentials: ["access_key_id", "secret_access_key"] } }),
  },
  "connections.update": {
    input: () => ({ org: org(), id: w.ids.conn, name: "aws-walk", provider: "aws", config: { region: "us-east-1" }, credentials: { access_key_id: "AKIAWALKEXAMPLE", secret_access_key: "walk-aws-secret-key-2" } }),
    expect: () => ({ action: "connection.update", targetId: w.ids.conn, targetName: "aws-walk", changes: { config: { from: { region: "eu-west-1" }, to: { region: "us-east-1" } }, credentials: "replaced" } }),
  },
  "connections.authorize": {
    input: () => ({ org: org(), id: w.ids.conn, organization: false, environments: ["qa"] }),
    expect: () => ({ action: "connection.authorize", targetId: w.ids.conn, targetName: "aws-walk" }),
  },
  "connections.addAuthorization": {
    input: () => ({ org: org(), connection: "aws-walk", provider: "aws", scope: "environment", environments: ["dev"] }),
    expect: () => ({ action: "connection.authorize", targetId: w.ids.conn, targetName: "aws-walk" }),
  },
  "connections.removeAuthorization": {
    input: () => ({ org: org(), connection: "aws-walk", scope: "environment", environments: "dev,qa" }),
    expect: () => ({ action: "connection.authorize", targetId: w.ids.conn, targetName: "aws-walk" }),
  },
  "connections.delete": {
    input: () => ({ org: org(), id: w.ids.conn }),
    expect: () => ({ action: "connection.delete", targetId: w.ids.conn, targetName: "aws-walk" }),
  },
  "environments.delete": {
    input: () => ({ org: org(), id: w.ids.qa }),
    expect: () => ({ action: "environment.delete", targetId: w.ids.qa, targetName: "qa", environment: "qa" }),
  },
  "secrets.create": {
    input: () => ({ org: org(), name: "WALK_TOKEN", value: "walk-secret-value-1" }),
    expect: (out) => ((w.ids.secret = out.id), { action: "secret.create", targetId: out.id, targetName: "WALK_TOKEN" }),
  },
  "secrets.update": {
    input: () => ({ org: org(), id: w.ids.secret, value: "walk-secret-value-2" }),
    expect: () => ({ action: "secret.update", targetId: w.ids.secret, targetName: "WALK_TOKEN", changes: { value: "replaced" } }),
  },
  "secrets.delete": {
    input: () => ({ org: org(), id: w.ids.secret }),
    expect: () => ({ action: "secret.delete", targetId: w.ids.secret, targetName: "WALK_TOKEN" }),
  },
  "variables.create": {
    input: () => ({ org: org(), name: "WALK_REGION", value: "eu-west-1" }),
    expect: (out) => ((w.ids.variable = out.id), { action: "variable.create", targetId: out.id, targetName: "WALK_REGION" }),
  },
  "variables.update": {
    input: () => ({ org: org(), id: w.ids.variable, value: "us-east-1" }),
    expect: () => ({ action: "variable.update", targetId: w.ids.variable, targetName: "WALK_REGION" }),
  },
  "variables.delete": {
    input: () => ({ org: org(), id: w.ids.variable }),
    expect: () => ({ action: "variable.delete", targetId: w.ids.variable, targetName: "WALK_REGION" }),
  },
  "flowControl.set": {
    input: () => ({ org: org(), selector: "environment", target: "staging", toggles: { manualStart: true, skipRefresh: false, previewBeforeApply: true, pauseBeforeApply: true, protectDeletes: true } }),
    expect: (id) => ((w.ids.policy = id), { action: "flow_control.create", targetId: id, targetName: "staging", environment: "staging" }),
  },
  "flowControl.delete": {
    input: () => ({ org: org(), id: w.ids.policy }),
    expect: () => ({ action: "flow_control.delete", targetId: w.ids.policy, targetName: "staging", environment: "staging" }),
  },
  "me.apiTokens.create": {
    as: "engineer",
    input: () => ({ org: org(), name: "walk-laptop" }),
    expect: (out) => ((w.ids.token = out.id), { action: "api_token.create", targetId: out.id, targetName: "walk-laptop" }),
  },
  "me.apiTokens.revoke": {
    as: "engineer",
    input: () => ({ org: org(), id: w.ids.token }),
    expect: () => ({ action: "api_token.revoke", targetId: w.ids.token, targetName: "walk-laptop" }),
  },
  "apiTokens.revoke": {
    input: async () => ({ org: org(), id: (w.ids.ci = (await createApiToken(t.db, w.org.actor("engineer"), { name: "walk-ci" })).id) }),
    expect: () => ({ action: "api_token.revoke", targetId: w.ids.ci, targetName: "walk-ci" }),
  },
  "modules.register": {
    input: () => {
      fs.mkdirSync(DIR("walk-module"), { recursive: true });
      fs.writeFileSync(path.join(DIR("walk-module"), "main.tf"), 'variable "word" {\n  type = string\n}\n');
      execFileSync("tar", ["-czf", DIR("walk-module.tar.gz"), "-C", DIR("walk-module"), "."]);
      const contentBase64 = fs.readFileSync(DIR("walk-module.tar.gz")).toString("base64");
      return { org: org(), name: "walk-module", version: "1.0.0", kind: "WalkThing", provisioner: "builtin", source: { type: "archive", fileName: "walk-module.tar.gz", contentBase64 } };
    },
    expect: (out) => ({ action: "module.register", targetId: out.id, targetName: "walk-module@1.0.0" }),
  },
  "modules.setPolicy": {
    input: () => ({ org: org(), engineersMayRegister: true }),
    expect: () => ({ action: "module.policy_change", targetId: w.org.orgId, targetName: w.org.slug, changes: { engineersMayRegister: { from: false, to: true } } }),
  },
  "runners.register": {
    input: () => ({ org: org(), name: "walk-runner" }),
    expect: (out) => ((w.ids.runner = out.runner.id), { action: "runner.register", targetId: out.runner.id, targetName: "walk-runner" }),
  },
  "runners.rotateToken": {
    input: () => ({ org: org(), runner: "walk-runner" }),
    expect: () => ({ action: "runner.rotate_token", targetId: w.ids.runner, targetName: "walk-runner" }),
  },
  "runners.setDefault": {
    input: () => ({ org: org(), runner: "walk-runner" }),
    expect: () => ({ action: "runner.set_default", targetId: w.ids.runner, targetName: "walk-runner" }),
  },
  "runners.unsetDefault": {
    input: () => ({ org: org() }),
    expect: () => ({ action: "runner.unset_default", targetId: w.org.orgId, targetName: "walk-runner" }),
  },
  "runners.revoke": {
    input: () => ({ org: org(), runner: "walk-runner" }),
    expect: () => ({ action: "runner.revoke", targetId: w.ids.runner, targetName: "walk-runner" }),
  },
  "stateBackends.testAccess": {
    none: "an access probe writes, reads back and deletes a probe state: nothing of the organization changes",
    input: () => ({ org: org(), kind: "local", config: { path: DIR("probe") } }),
  },
  "stateBackends.create": {
    input: () => ({ org: org(), name: "walk-local", kind: "local", config: { path: DIR("a") } }),
    expect: (out) => ((w.ids.backend = out.backend.id), { action: "state_backend.create", targetId: out.backend.id, targetName: "walk-local" }),
  },
  "stateBackends.update": {
    input: () => ({ org: org(), name: "walk-local", config: { path: DIR("b") } }),
    expect: () => ({ action: "state_backend.update", targetId: w.ids.backend, targetName: "walk-local" }),
  },
  "stateBackends.setDefault": {
    input: () => ({ org: org(), provisioner: "tofu", backend: "walk-local" }),
    expect: () => ({ action: "state_backend.set_default", targetId: w.ids.backend, targetName: "walk-local", changes: { provisioner: "tofu", from: "planton-managed", to: "walk-local" } }),
  },
  "stateBackends.unsetDefault": {
    input: () => ({ org: org(), provisioner: "tofu" }),
    expect: () => ({ action: "state_backend.unset_default", targetId: w.ids.backend, targetName: "walk-local" }),
  },
  "jobs.create": {
    as: "engineer",
    input: () => ({ org: org(), componentId: w.components[0].id, operation: "update", versionMessage: "walk" }),
    expect: (out) => ((w.ids.job = out.id), { action: "job.create", targetId: out.id, targetName: w.components[0].name, environment: "dev" }),
  },
  "jobs.cancel": {
    as: "engineer",
    input: () => ({ org: org(), jobId: w.ids.job }),
    expect: () => ({ action: "job.cancel", targetId: w.ids.job, targetName: w.components[0].name, environment: "dev" }),
  },
  "jobs.rerun": {
    as: "engineer",
    input: () => ({ org: org(), jobId: w.ids.job }),
    expect: (out) => ((w.ids.rerun = out.id), { action: "job.rerun", targetId: out.id, targetName: w.components[0].name, environment: "dev", changes: { rerunOf: w.ids.job } }),
  },
  "jobs.resume": {
    as: "engineer",
    // A job paused after its preview (the organization's policy pauses before apply): approved with the plan's checksum.
    input: async () => {
      await cancelJob(t.db, w.org.actor(), { jobId: w.ids.rerun });
      const job = await createJob(t.db, w.org.actor(), { componentId: w.components[1].id, operation: "update" });
      const c = (await claim(t.db, w.runner))!;
      expect(c.claim.job.id).toBe(job.id);
      for (const s of ["init", "refresh"] as const) await runStep(t.db, c, s);
      await runStep(t.db, c, "preview", "succeeded", { plan: { artifactId: "art_walk", sha256: "d".repeat(64), summary: { add: 1 } } });
      w.ids.paused = job.id;
      return { org: org(), jobId: job.id, expectedChecksum: "d".repeat(64), message: "reviewed: one file added" };
    },
    expect: () => ({
      action: "job.approve",
      targetId: w.ids.paused,
      targetName: w.components[1].name,
      environment: "dev",
      changes: { planSha256: "d".repeat(64), message: "reviewed: one file added", step: "apply" },
    }),
  },
  "components.stateRollback": {
    // Two versions of a Planton-managed state, written by a job under its lock; rolled back to the first.
    input: async () => {
      await cancelJob(t.db, w.org.actor(), { jobId: w.ids.paused });
      await createJob(t.db, w.org.actor(), { componentId: w.components[2].id, operation: "refresh" });
      const c = (await claim(t.db, w.runner))!;
      const lock = await lockState(t.db, c.access, { Operation: "OperationTypeApply", Who: "runner@walk" });
      if (!lock.ok) throw new Error(lock.message);
      for (const serial of [1, 2]) await putState(t.db, c.access, lock.lock.ID, { version: 4, terraform_version: "builtin-0.1.0", serial, lineage: "lin-walk", outputs: {}, resources: [] });
      await unlockState(t.db, c.access, lock.lock.ID);
      for (const s of ["init", "refresh"] as const) await runStep(t.db, c, s);
      const versions = await listStateVersions(t.db, w.org.actor(), { componentId: w.components[2].id });
      return { org: org(), id: w.components[2].id, versionId: versions.at(-1)!.id };
    },
    expect: () => ({ action: "state.rollback", targetId: w.components[2].id, targetName: w.components[2].name, environment: "dev" }),
  },
  "stateBackends.forceUnlock": {
    input: async () => {
      await new PlantonManagedStore(t.db, w.org.orgId, "someone").lock(plantonManagedKey(w.org.orgId, w.components[2].id), { ID: "walk-stale-lock", Operation: "OperationTypeApply", Who: "someone@laptop" });
      return { org: org(), componentId: w.components[2].id };
    },
    expect: () => ({ action: "state.force_unlock", targetId: w.components[2].id, targetName: w.components[2].name, environment: "dev" }),
  },
  "stateMoves.dryRun": {
    none: "a dry run says what a move would do and changes nothing",
    input: () => ({ org: org(), to: { builtin: "walk-local" } }),
  },
  "stateMoves.start": {
    input: () => ({ org: org(), to: { builtin: "walk-local" } }),
    expect: (out) => ((w.ids.move = out.id), { action: "state.move.start", targetId: out.id, targetName: out.id }),
    // The move runs in the background; its end is the system's record of the outcome, a second event by design.
    then: { settle: (out) => moveRun(out.id), actions: ["state.move.end"] },
  },
  "stateMoves.rollback": {
    input: async () => {
      const move = await w.org.call("admin").stateMoves.get({ org: org(), id: w.ids.move });
      return { org: org(), id: w.ids.move, itemId: move.items[0].id };
    },
    expect: () => ({ action: "state.move.rollback", targetId: w.components[2].id, targetName: w.components[2].name, environment: "dev" }),
  },
  "stateMoves.retry": {
    // A move whose one item fails (its state is locked by someone), then the lock is released.
    input: async () => {
      const pm = new PlantonManagedStore(t.db, w.org.orgId, "someone");
      const key = plantonManagedKey(w.org.orgId, w.components[2].id);
      await pm.lock(key, { ID: "walk-holder", Operation: "OperationTypeApply", Who: "someone@laptop" });
      const move = await startMove(t.db, w.org.actor(), { to: { builtin: "walk-local" } });
      await moveRun(move.id);
      await pm.unlock(key, "walk-holder");
      w.ids.failedMove = move.id;
      return { org: org(), id: move.id };
    },
    expect: () => ({ action: "state.move.retry", targetId: w.ids.failedMove, targetName: w.ids.failedMove }),
    then: { settle: () => moveRun(w.ids.failedMove), actions: ["state.move.end"] },
  },
  "stateMoves.migrateBackend": {
    input: async () => {
      await createStateBackend(t.db, w.org.actor(), { name: "walk-other", kind: "local", config: { path: DIR("c") } });
      return { org: org(), componentId: w.components[2].id, to: "walk-other" };
    },
    expect: (out) => ({ action: "state.migrate_backend", targetId: w.components[2].id, targetName: w.components[2].name, environment: "dev", changes: { moveId: out.move.id, from: "walk-local", to: "walk-other" } }),
    then: { settle: (out) => moveRun(out.move.id), actions: ["state.move.end"] },
  },
  "stateBackends.delete": {
    input: async () => {
      await createStateBackend(t.db, w.org.actor(), { name: "walk-spare", kind: "local", config: { path: DIR("d") } });
      w.ids.spare = (await w.org.call("admin").stateBackends.get({ org: org(), name: "walk-spare" })).id;
      return { org: org(), name: "walk-spare" };
    },
    expect: () => ({ action: "state_backend.delete", targetId: w.ids.spare, targetName: "walk-spare" }),
  },
  // The direct path: a create, change or delete that queues a job records that job's job.create with it.
  "components.create": [
    {
      as: "engineer",
      input: () => ({ org: org(), environment: "staging", kind: "StaticSite", name: "walk-site", spec: { site_name: "walk" }, connection: "local-sandbox" }),
      expect: (out) => ((w.ids.site = out.component.id), { action: "component.create", targetId: out.component.id, targetName: "walk-site", environment: "staging", changes: { version: 1, deploy: true } }),
      with: (out) => [{ action: "job.create", targetId: out.job.id }],
    },
    {
      as: "engineer",
      input: () => ({ org: org(), environment: "staging", kind: "StaticSite", name: "walk-draft", spec: { site_name: "walk-draft" }, connection: "local-sandbox", deploy: false }),
      expect: (out) => ((w.ids.draft = out.component.id), { action: "component.create", targetId: out.component.id, targetName: "walk-draft", environment: "staging", changes: { deploy: false } }),
    },
  ],
  "components.update": [
    {
      as: "engineer",
      input: () => ({ org: org(), id: w.ids.site, baseVersion: 1, spec: { site_name: "walk-2" }, description: "changed" }),
      expect: () => ({
        action: "component.update",
        targetId: w.ids.site,
        targetName: "walk-site",
        environment: "staging",
        changes: { description: { from: "", to: "changed" }, "spec.site_name": { from: "walk", to: "walk-2" } },
      }),
      with: (out) => [{ action: "job.create", targetId: out.job.id }],
    },
    {
      as: "engineer",
      input: () => ({ org: org(), id: w.ids.draft, description: "still a draft", deploy: false }),
      expect: () => ({ action: "component.update", targetId: w.ids.draft, targetName: "walk-draft", environment: "staging", changes: { description: { from: "", to: "still a draft" } } }),
    },
  ],
  "components.delete": [
    {
      // Its jobs are queued: the destroy job waits behind them.
      as: "engineer",
      input: () => ({ org: org(), id: w.ids.site }),
      expect: () => ({ action: "component.delete", targetId: w.ids.site, targetName: "walk-site", environment: "staging" }),
      with: (out) => [{ action: "job.create", targetId: out.job.id }],
    },
    {
      // A draft no job ever ran for is removed at once.
      as: "engineer",
      input: () => ({ org: org(), id: w.ids.draft }),
      expect: () => ({ action: "component.delete", targetId: w.ids.draft, targetName: "walk-draft", environment: "staging", changes: { jobId: null } }),
    },
  ],
  "components.forget": {
    input: async () => ({ org: org(), id: (w.ids.forgotten = (await createComponentAndDeploy(t.db, w.org.actor(), { environment: "dev", kind: "StaticSite", name: "walk-forgotten", spec: { site_name: "walk-forgotten" }, deploy: false })).component.id), confirmName: "walk-forgotten" }),
    expect: () => ({ action: "component.forget", targetId: w.ids.forgotten, targetName: "walk-forgotten", environment: "dev", changes: { unmanaged: [] } }),
  },
  // Members last: the viewer's role changes, their sign-in is reset, then they are removed.
  "members.add": {
    input: () => ({ org: org(), email: "new-walker@example.test", role: "viewer" }),
    expect: async () => {
      const [inv] = await t.db.select().from(invitations).where(eq(invitations.email, "new-walker@example.test"));
      return { action: "member.invite", targetId: inv.id, targetName: "new-walker@example.test" };
    },
  },
  "members.changeRole": {
    input: async () => ({ org: org(), id: (w.ids.viewerMembership = await membershipId("viewer")), role: "engineer" }),
    expect: () => ({ action: "member.role_change", targetId: w.ids.viewerMembership, targetName: w.org.users.viewer.email, changes: { role: { from: "viewer", to: "engineer" } } }),
  },
  "members.resetSignIn": {
    input: () => ({ org: org(), id: w.ids.viewerMembership }),
    expect: () => ({ action: "member.sign_in_reset", targetId: w.ids.viewerMembership, targetName: w.org.users.viewer.email }),
  },
  "members.remove": {
    input: () => ({ org: org(), id: w.ids.viewerMembership }),
    expect: () => ({ action: "member.remove", targetId: w.ids.viewerMembership, targetName: w.org.users.viewer.email }),
  },
};

async function membershipId(role: Role): Promise<string> {
  const [m] = await t.db.select({ id: memberships.id }).from(memberships).where(and(eq(memberships.orgId, w.org.orgId), eq(memberships.userId, w.org.users[role].userId)));
  return m.id;
}

type Procedures = Record<string, { _def: { type: string } }>;
const procedures = () => Object.entries(appRouter._def.procedures as unknown as Procedures);
const mutations = () => procedures().filter(([, p]) => p._def.type === "mutation").map(([n]) => n);

/** The procedure at `name` ("me.apiTokens.create") on a caller. */
function procedureOf(caller: AppCaller, name: string): (input: unknown) => Promise<unknown> {
  return name.split(".").reduce((o: any, k) => o[k], caller);
}

/** The organization's events so far, to tell the new ones apart. */
async function eventIds(): Promise<string[]> {
  return (await t.db.select({ id: auditEvents.id }).from(auditEvents).where(eq(auditEvents.orgId, w.org.orgId))).map((r) => r.id);
}

async function newEvents(seen: string[]) {
  return t.db
    .select()
    .from(auditEvents)
    .where(seen.length ? and(eq(auditEvents.orgId, w.org.orgId), notInArray(auditEvents.id, seen)) : eq(auditEvents.orgId, w.org.orgId));
}

beforeAll(async () => {
  t = await createTestDatabase();
  // Every job pauses after its preview, so one can be approved with its plan's checksum.
  const setup = await orgWithComponent(t.db, { components: 3, policy: { pauseBeforeApply: true } });
  w = { org: setup.org, components: setup.components, runner: await testRunner(t.db, setup.org, "walk-hosted"), ids: {} };
});
afterAll(async () => {
  await t?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe("the router walk", () => {
  it("has a case for every mutation of the app router, and no case for one that is gone", () => {
    const missing = mutations().filter((m) => !(m in CASES)).map((m) => `add a case for ${m} to server/audit-walk.test.ts (a valid input and the audit event it must record)`);
    const stale = Object.keys(CASES).filter((m) => !mutations().includes(m)).map((m) => `${m} is no longer a mutation: remove its case`);
    expect([...missing, ...stale]).toEqual([]);
  });

  it("every mutation records exactly its audit events (one, or the job it queues too) with action, actor, target and names; none records a secret's value", async () => {
    const failures: string[] = [];
    const runs = Object.entries(CASES).flatMap(([name, c]) => (Array.isArray(c) ? c.map((one, i) => [name, one, `${name} (case ${i + 1})`] as const) : [[name, c, name] as const]));
    for (const [name, c, label] of runs) {
      const role = "none" in c ? "admin" : (c.as ?? "admin");
      const input = await c.input();
      const seen = await eventIds();
      const out = await procedureOf(w.org.call(role), name)(input).catch((e: Error) => {
        throw new Error(`${label} was refused: ${e.message}`);
      });
      if ("none" in c) {
        const events = await newEvents(seen);
        if (events.length) failures.push(`${label} records nothing (${c.none}), but recorded ${events.map((e) => e.action).join(", ")}`);
        continue;
      }
      const want = await c.expect(out);
      const alongside = c.with?.(out) ?? [];
      await c.then?.settle(out);
      const events = await newEvents(seen);
      const mine = events.filter((e) => !c.then?.actions.includes(e.action as AuditAction));
      const followers = events.filter((e) => c.then?.actions.includes(e.action as AuditAction));
      const expectedActions = [want.action, ...alongside.map((a) => a.action)].sort();
      if (JSON.stringify(mine.map((e) => e.action).sort()) !== JSON.stringify(expectedActions)) {
        failures.push(`${label} recorded ${mine.length} events (${mine.map((e) => e.action).join(", ") || "none"}), not exactly ${expectedActions.join(" + ")}`);
        continue;
      }
      if (c.then && followers.length !== c.then.actions.length) failures.push(`${label}: expected its consequence ${c.then.actions.join(", ")}, saw ${followers.map((e) => e.action).join(", ") || "none"}`);
      const byActor = { actorLabel: w.org.users[role].email, actorId: w.org.users[role].userId, clientAddress: "127.0.0.1" };
      for (const other of alongside) {
        const e = mine.find((m) => m.action === other.action)!;
        const got = { targetId: e.targetId, actorLabel: e.actorLabel, actorId: e.actorId, clientAddress: e.clientAddress, result: e.result };
        const expected = { targetId: other.targetId, ...byActor, result: "success" };
        if (JSON.stringify(got) !== JSON.stringify(expected)) failures.push(`${label}: its ${other.action} is ${JSON.stringify(got)}, expected ${JSON.stringify(expected)}`);
      }
      const e = mine.find((m) => m.action === want.action)!;
      const got = {
        action: e.action,
        actorLabel: e.actorLabel,
        actorId: e.actorId,
        clientAddress: e.clientAddress,
        targetType: e.targetType,
        targetId: e.targetId,
        targetName: e.targetName,
        environment: e.environment,
        result: e.result,
      };
      const expected = {
        action: want.action,
        ...byActor,
        targetType: AUDIT_ACTIONS[want.action].target,
        targetId: want.targetId,
        targetName: want.targetName,
        environment: want.environment ?? null,
        result: want.result ?? "success",
      };
      if (JSON.stringify(got) !== JSON.stringify(expected)) failures.push(`${label}: recorded ${JSON.stringify(got)}, expected ${JSON.stringify(expected)}`);
      for (const [k, v] of Object.entries(want.changes ?? {})) {
        const recorded = (e.changes as Record<string, unknown> | null)?.[k];
        if (!isDeepStrictEqual(recorded, v)) failures.push(`${label}: changes.${k} is ${JSON.stringify(recorded)}, expected ${JSON.stringify(v)}`);
      }
      for (const m of mine) if (!m.summary || m.summary.endsWith("..")) failures.push(`${label}: ${m.action} summary ${JSON.stringify(m.summary)}`);
    }
    expect(failures).toEqual([]);
    const all = JSON.stringify(await t.db.select().from(auditEvents));
    expect(NEVER_RECORDED.filter((secret) => all.includes(secret))).toEqual([]);
  });

  it("refused mutations record nothing; a job refused by preflight records one failure naming the failed checks", async () => {
    const admin = w.org.call("admin");
    const engineer = w.org.call("engineer");
    const refusals: [string, () => Promise<unknown>][] = [
      ["a duplicate environment", () => admin.environments.create({ org: org(), name: "dev" })],
      ["an engineer changing a role", () => engineer.members.changeRole({ org: org(), id: w.ids.viewerMembership, role: "admin" })],
      ["cancelling a completed job", () => engineer.jobs.cancel({ org: org(), jobId: w.ids.job })],
      ["approving with another plan's checksum", () => engineer.jobs.resume({ org: org(), jobId: w.ids.job, expectedChecksum: "e".repeat(64) })],
      ["deleting an unknown secret", () => admin.secrets.delete({ org: org(), id: "sec_none" })],
      ["a component of an unknown kind", () => engineer.components.create({ org: org(), environment: "dev", kind: "NoSuchKind", name: "nope" })],
      ["an unknown operation", () => engineer.jobs.create({ org: org(), componentId: w.components[0].id, operation: "explode" })],
      ["a change based on a version replaced since", () => engineer.components.update({ org: org(), id: w.components[0].id, baseVersion: 7, description: "stale" })],
      ["deleting a component being deleted", () => engineer.components.delete({ org: org(), id: w.ids.site })],
      ["a job for a deleted component", () => engineer.jobs.create({ org: org(), componentId: w.ids.draft, operation: "refresh" })],
      ["forgetting without the name as confirmation", () => admin.components.forget({ org: org(), id: w.components[0].id })],
      ["an engineer forgetting", () => engineer.components.forget({ org: org(), id: w.components[0].id, confirmName: w.components[0].name })],
    ];
    for (const [what, call] of refusals) {
      const seen = await eventIds();
      await expect(call(), what).rejects.toThrow();
      expect((await newEvents(seen)).map((e) => e.action), what).toEqual([]);
    }

    // A component whose connection nobody authorized: the job ends failed at preflight, and that is its one event.
    const conn = await createConnection(t.db, w.org.actor(), { name: "local-unauthorized", provider: "local", config: { root: DIR("unauth") } });
    const comp = (await createComponentAndDeploy(t.db, w.org.actor(), { deploy: false, environment: "prod", kind: "StaticSite", name: "walk-refused", spec: { site_name: "walk-refused" }, connection: conn.name })).component;
    const seen = await eventIds();
    const job = await engineer.jobs.create({ org: org(), componentId: comp.id });
    expect(job.specVersion).toBe(1);
    expect(job).toMatchObject({ status: "completed", result: "failed" });
    const events = await newEvents(seen);
    expect(events.map((e) => [e.action, e.result, e.targetType, e.targetId, e.targetName, e.environment])).toEqual([["job.preflight_failed", "failure", "infra_job", job.id, "walk-refused", "prod"]]);
    const failed = (events[0].changes as { failedChecks: { essential: string; errors: string[] }[] }).failedChecks;
    expect(failed.map((c) => c.essential)).toContain("credentials");
    expect(events[0].summary).toMatch(/refused by preflight \(.*credentials.*\); nothing ran$/);
  });

  it("queries record nothing", async () => {
    const seen = await eventIds();
    const admin = w.org.call("admin");
    await admin.components.list({ org: org() });
    await admin.components.get({ org: org(), id: w.components[0].id });
    await admin.jobs.get({ org: org(), id: w.ids.job });
    await admin.jobs.list({ org: org() });
    await admin.audit.list({ org: org() });
    await admin.stateBackends.plantonManaged({ org: org() });
    // Every other query with no more than the organization: answered or refused, it records nothing either.
    for (const [name, p] of procedures()) if (p._def.type === "query") await procedureOf(admin, name)({ org: org() }).catch(() => undefined);
    expect((await newEvents(seen)).map((e) => e.action)).toEqual([]);
  });
});
