import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { and, count, eq } from "drizzle-orm";
import { connections, stateBackends, stateObjects } from "@/db/schema";
import { newId } from "@/lib/ids";
import { defaultStateKey } from "@/lib/state-backend-kinds";
import { storedStateOf } from "@/state-backends/rules";
import { createTestDatabase, testDriver, type TestDatabase } from "../../../test/database";
import { startS3rver, type S3Server } from "../../../test/object-stores";
import { auditCount, auditOf, refusal, seedSettingsOrg, type SettingsOrg } from "../../../test/settings";
import { draftComponent } from "../../../test/components";
import { preflightForKind } from "../jobs/preflight";
import { withBackend } from "./open-store";
import { PlantonManagedStore, plantonManagedKey, plantonStateBytes } from "./planton-managed-store";

process.env.PLANTON_SECRET_KEY ??= "0f".repeat(32);

let t: TestDatabase;
let org: SettingsOrg;
let s3: S3Server;
let dir: string;

beforeAll(async () => {
  [t, s3] = await Promise.all([createTestDatabase(), startS3rver()]);
  org = await seedSettingsOrg(t.db);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "planton-backends-test-"));
  await org.as("admin").connections.create({
    org: org.slug,
    name: "s3rver",
    provider: "aws",
    config: { region: s3.region },
    credentials: { access_key_id: s3.credentials.accessKeyId, secret_access_key: s3.credentials.secretAccessKey },
  });
});
afterAll(async () => {
  await Promise.all([t?.close(), s3?.stop()]);
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const backendCount = async () => (await t.db.select({ n: count() }).from(stateBackends).where(eq(stateBackends.orgId, org.orgId)))[0].n;
const s3Config = (bucket = s3.bucket) => ({ bucket, endpoint: s3.endpoint, key_prefix: "planton/" });

/** A v4 state document with this serial. */
const v4 = (serial: number, lineage = "lin-usage") => ({ version: 4, terraform_version: "builtin-0.1.0", serial, lineage, outputs: {}, resources: [] });

describe(`state backends (${testDriver})`, () => {
  it("an admin creates a local backend after the access test wrote, read back, compared and deleted a probe", async () => {
    const saved = await org.as("admin").stateBackends.create({ org: org.slug, name: "files", kind: "local", config: { path: path.join(dir, "states") } });
    expect(saved.access).toMatchObject({ ok: true, error: null });
    expect(saved.access.steps.map((s) => [s.step, s.ok])).toEqual([["open", true], ["write", true], ["read", true], ["compare", true], ["delete", true]]);
    expect(saved.backend).toMatchObject({ name: "files", kind: "local", connection: null, components: 0, defaultFor: [] });
    // The probe is gone: no state file is left in the folder.
    const left = (fs.readdirSync(path.join(dir, "states"), { recursive: true }) as string[]).filter((f) => f.endsWith(".tfstate") || /[0-9a-f-]{36}$/.test(f));
    expect(left).toEqual([]);
    const [event] = await auditOf(t.db, org.orgId, "state_backend.create");
    expect(event.summary).toBe("Created Local directory state backend files (access test passed)");
  });

  it("an endpoint with a user name or password in it is refused beside the field, before anything is tried or saved", async () => {
    const before = await backendCount();
    const r = await refusal(org.as("admin").stateBackends.create({ org: org.slug, name: "leaky", kind: "s3", connection: "s3rver", config: { ...s3Config(), endpoint: s3.endpoint.replace("://", "://AKIAEXAMPLE:in-url-secret@") } }));
    expect(r).toMatchObject({ code: "BAD_REQUEST", field: "config.endpoint" });
    expect(r.message).toBe(
      "State backend leaky was not created: endpoint must be an http:// or https:// URL with no user name or password in it (credentials go in the connection's secret fields). Set it with --config endpoint=… (or in Settings → State Backends).",
    );
    expect(await backendCount()).toBe(before);
  });

  it("an admin creates an S3 backend on s3rver through an aws connection; no credential is on the row or in any answer", async () => {
    const admin = org.as("admin");
    const saved = await admin.stateBackends.create({ org: org.slug, name: "prod-s3", kind: "s3", connection: "s3rver", config: s3Config() });
    expect(saved.access.ok).toBe(true);
    expect(saved.backend).toMatchObject({ kind: "s3", connection: "s3rver", config: { bucket: s3.bucket, endpoint: s3.endpoint, key_prefix: "planton/", region: "" } });
    const [row] = await t.db.select().from(stateBackends).where(and(eq(stateBackends.orgId, org.orgId), eq(stateBackends.name, "prod-s3")));
    const list = await org.as("viewer").stateBackends.list({ org: org.slug });
    for (const text of [JSON.stringify(row), JSON.stringify(list), JSON.stringify(saved)]) expect(text).not.toContain(s3.credentials.secretAccessKey);
    expect(list.backends.map((b) => b.name)).toEqual(["files", "planton-managed", "prod-s3"]);
    expect(await org.as("viewer").stateBackends.get({ org: org.slug, name: "prod-s3" })).toMatchObject({ id: row.id, connection: "s3rver" });
  });

  it("a bucket that does not exist fails the access test at the write, in one sentence, and nothing is saved", async () => {
    const admin = org.as("admin");
    const before = { rows: await backendCount(), audit: await auditCount(t.db, org.orgId) };
    const check = await admin.stateBackends.testAccess({ org: org.slug, kind: "s3", connection: "s3rver", config: s3Config("no-such-bucket") });
    expect(check.ok).toBe(false);
    expect(check.steps.map((s) => [s.step, s.ok])).toEqual([["open", true], ["write", false]]);
    expect(check.error).toBe("The access test of Amazon S3 backend (unsaved) failed at writing a probe state: the bucket does not exist; create it, or correct the bucket name.");
    const r = await refusal(admin.stateBackends.create({ org: org.slug, name: "missing-bucket", kind: "s3", connection: "s3rver", config: s3Config("no-such-bucket") }));
    expect(r.code).toBe("PRECONDITION_FAILED");
    expect(r.message).toBe(
      "State backend missing-bucket was not created: The access test of Amazon S3 backend missing-bucket failed at writing a probe state: the bucket does not exist; create it, or correct the bucket name. Fix that, then create it again (the access test runs each time).",
    );
    expect(r.message).not.toMatch(/\n|at .*\.js|S3RVER/);
    // An update to a bucket that does not exist is refused the same way, and the backend keeps its settings.
    const u = await refusal(admin.stateBackends.update({ org: org.slug, name: "prod-s3", config: s3Config("no-such-bucket") }));
    expect(u.message).toMatch(/^State backend prod-s3 was not changed: The access test .* failed at writing a probe state: the bucket does not exist/);
    expect((await admin.stateBackends.get({ org: org.slug, name: "prod-s3" })).config.bucket).toBe(s3.bucket);
    expect({ rows: await backendCount(), audit: await auditCount(t.db, org.orgId) }).toEqual(before);
  });

  it("refuses bad input beside its field, with the fix, and writes nothing", async () => {
    const admin = org.as("admin");
    const before = { rows: await backendCount(), audit: await auditCount(t.db, org.orgId) };
    const create = (input: { name: string; kind: string; config?: Record<string, unknown>; connection?: string | null }) => refusal(admin.stateBackends.create({ org: org.slug, ...input }));

    expect(await create({ name: "x-kind", kind: "ftp" })).toMatchObject({ code: "BAD_REQUEST", field: "kind", message: "State backend x-kind was not created: there is no state backend kind ftp. Pick one of the kinds planton infra state-backend create --help lists, or choose one in Settings → State Backends." });
    const pm = await create({ name: "x-pm", kind: "planton_managed" });
    expect(pm).toMatchObject({ code: "BAD_REQUEST", field: "kind" });
    expect(pm.message).toContain("Planton-managed storage always exists, one per organization, and cannot be created, edited or deleted");
    expect(await create({ name: "x-rel", kind: "local", config: { path: "states" } })).toMatchObject({
      field: "config.path",
      message: "State backend x-rel was not created: path must be an absolute path. Set it with --config path=… (or in Settings → State Backends).",
    });
    expect(await create({ name: "x-req", kind: "s3", connection: "s3rver" })).toMatchObject({ field: "config.bucket", message: expect.stringContaining("bucket is required") });
    expect(await create({ name: "x-unknown", kind: "local", config: { path: "/tmp/x", access_key: "AKIA" } })).toMatchObject({ field: "config", message: expect.stringContaining("Unknown field access_key") });
    expect(await create({ name: "x-noconn", kind: "s3", config: s3Config() })).toMatchObject({
      field: "connection",
      message: "State backend x-noconn was not created: the Amazon S3 kind takes its credentials from an AWS connection, and none was named. Name one (--connection <name>), or create an aws connection in Settings → Connections first.",
    });
    expect(await create({ name: "x-wrong", kind: "s3", connection: "local-sandbox", config: s3Config() })).toMatchObject({
      field: "connection",
      message: "State backend x-wrong was not created: connection local-sandbox is a local connection, and the Amazon S3 kind needs an aws one. Pick an aws connection, or create one in Settings → Connections.",
    });
    expect(await create({ name: "x-gone", kind: "s3", connection: "nope", config: s3Config() })).toMatchObject({ field: "connection", message: expect.stringContaining("there is no connection named nope") });
    expect(await create({ name: "x-extra", kind: "local", connection: "s3rver", config: { path: "/tmp/x" } })).toMatchObject({ field: "connection", message: expect.stringContaining("needs no credentials, so it takes no connection") });
    expect(await create({ name: "Bad Name", kind: "local", config: { path: "/tmp/x" } })).toMatchObject({ field: "name", message: expect.stringContaining("Name must be 2–63 lower-case letters") });
    expect(await create({ name: "files", kind: "local", config: { path: "/tmp/x" } })).toMatchObject({ code: "CONFLICT", field: "name" });

    for (const r of [
      await refusal(admin.stateBackends.update({ org: org.slug, name: "planton-managed", config: {} })),
      await refusal(admin.stateBackends.delete({ org: org.slug, name: "planton-managed" })),
    ]) expect(r.message).toMatch(/^State backend planton-managed was not (changed|deleted): Planton-managed storage always exists/);
    expect((await refusal(admin.stateBackends.delete({ org: org.slug, name: "nothing-here" }))).code).toBe("NOT_FOUND");

    // Engineers and viewers read; only admins act.
    const e = await refusal(org.as("engineer").stateBackends.create({ org: org.slug, name: "x-eng", kind: "local", config: { path: "/tmp/x" } }));
    expect([e.code, e.message]).toEqual(["FORBIDDEN", expect.stringContaining("this needs the admin role")]);
    expect((await refusal(org.as("viewer").stateBackends.testAccess({ org: org.slug, name: "files" }))).code).toBe("FORBIDDEN");
    expect({ rows: await backendCount(), audit: await auditCount(t.db, org.orgId) }).toEqual(before);
  });

  it("a default per provisioner: new components keep their state there; a default cannot be deleted; unset goes back to Planton-managed", async () => {
    const admin = org.as("admin");
    const initial = await admin.stateBackends.list({ org: org.slug });
    expect(initial.defaults).toEqual({ builtin: "planton-managed", tofu: "planton-managed", terraform: "planton-managed", pulumi: "planton-managed" });

    const after = await admin.stateBackends.setDefault({ org: org.slug, provisioner: "builtin", backend: "prod-s3" });
    expect(after.defaults.builtin).toBe("prod-s3");
    expect(after.backends.find((b) => b.name === "prod-s3")!.defaultFor).toEqual(["builtin"]);
    const report = await preflightForKind(t.db, org.actor(), { kind: "StaticSite", environment: "dev" });
    expect(report.checks.find((c) => c.essential === "backend")!.resolvedTo).toBe("prod-s3 (s3, the organization's default for builtin)");
    expect((await auditOf(t.db, org.orgId, "state_backend.set_default"))[0].summary).toBe("Made prod-s3 the default state backend for builtin: new components keep their state there");

    // A store of bytes keeps Pulumi's checkpoints too; Pulumi Cloud keeps nothing but Pulumi's.
    expect((await admin.stateBackends.setDefault({ org: org.slug, provisioner: "pulumi", backend: "prod-s3" })).defaults.pulumi).toBe("prod-s3");
    await admin.stateBackends.unsetDefault({ org: org.slug, provisioner: "pulumi" });
    await t.db.insert(stateBackends).values({ id: newId("stateBackend"), orgId: org.orgId, name: "stacks", kind: "pulumi_cloud", config: { organization: "acme" } });
    const builtinOnPulumi = await refusal(admin.stateBackends.setDefault({ org: org.slug, provisioner: "builtin", backend: "stacks" }));
    expect(builtinOnPulumi.message).toBe(
      "stacks was not made the default for builtin: the Pulumi Cloud kind keeps state for pulumi only. Pick a backend that serves builtin (Planton-managed, Local directory, PostgreSQL, Amazon S3, Cloudflare R2, Azure Blob Storage, Google Cloud Storage, HCP Terraform / Terraform Cloud).",
    );
    await t.db.delete(stateBackends).where(and(eq(stateBackends.orgId, org.orgId), eq(stateBackends.name, "stacks")));
    expect((await refusal(admin.stateBackends.setDefault({ org: org.slug, provisioner: "ansible", backend: "prod-s3" }))).message).toBe(
      "No default was set: there is no provisioner ansible. Pick one of builtin, tofu, terraform, pulumi.",
    );

    const del = await refusal(admin.stateBackends.delete({ org: org.slug, name: "prod-s3" }));
    expect(del.message).toBe(
      "State backend prod-s3 was not deleted: it is the organization's default for builtin, so new components keep their state there. Make another backend the default first (planton infra state-backend set-default <backend> --provisioner builtin), or unset it (planton infra state-backend unset-default --provisioner builtin).",
    );

    const unset = await admin.stateBackends.unsetDefault({ org: org.slug, provisioner: "builtin" });
    expect(unset.defaults.builtin).toBe("planton-managed");
    // Two unsets recorded: pulumi's above and builtin's.
    expect(await auditCount(t.db, org.orgId, "state_backend.unset_default")).toBe(2);
  });

  it("delete is refused while the backend keeps components' state, naming the first ten and a count", async () => {
    const admin = org.as("admin");
    for (let i = 0; i < 11; i++) {
      await draftComponent(t.db, org.actor(), { environment: "dev", kind: "StaticSite", name: `on-files-${String(i).padStart(2, "0")}`, spec: { site_name: `f${i}` }, connection: "local-sandbox", stateBackend: "files" });
    }
    expect((await admin.stateBackends.get({ org: org.slug, name: "files" })).components).toBe(11);
    const r = await refusal(admin.stateBackends.delete({ org: org.slug, name: "files" }));
    expect(r.message).toBe(
      `State backend files was not deleted: it keeps the state of 11 components: ${Array.from({ length: 10 }, (_, i) => `on-files-${String(i).padStart(2, "0")} (dev)`).join(", ")} and 1 more. Move their state to another backend first (planton tofu state migrate-backend <component> --to <backend>), then delete it.`,
    );
    const c = await refusal(admin.stateBackends.update({ org: org.slug, name: "files", config: { path: path.join(dir, "elsewhere") } }));
    expect(c.message).toMatch(/^State backend files was not changed: it keeps the state of 11 components \(on-files-00 \(dev\), .* and 1 more\), and a new kind or settings would leave those states behind/);

    // One that serves nothing and is no default is deleted, and the deletion is recorded.
    await admin.stateBackends.create({ org: org.slug, name: "scratch", kind: "local", config: { path: path.join(dir, "scratch") } });
    expect(await admin.stateBackends.delete({ org: org.slug, name: "scratch" })).toEqual({ name: "scratch", deleted: true });
    expect((await auditOf(t.db, org.orgId, "state_backend.delete"))[0].summary).toBe("Deleted Local directory state backend scratch");
  });

  it("lists what is on Planton-managed storage (not what was moved), with provisioner, size, serial, totals and per environment", async () => {
    const store = new PlantonManagedStore(t.db, org.orgId);
    const made = [];
    for (const [env, name, serial] of [["dev", "pm-a", 3], ["prod", "pm-b", 7], ["prod", "pm-c", 1], ["dev", "pm-moved", 2]] as const) {
      const c = await draftComponent(t.db, org.actor(), { environment: env, kind: "StaticSite", name, spec: { site_name: name }, connection: "local-sandbox" });
      await store.write(plantonManagedKey(org.orgId, c.id), storedStateOf(plantonStateBytes(v4(serial))));
      made.push(c);
    }
    const [prodS3] = await t.db.select().from(stateBackends).where(and(eq(stateBackends.orgId, org.orgId), eq(stateBackends.name, "prod-s3")));
    await t.db.update(stateObjects).set({ movedToBackendId: prodS3.id, movedAt: new Date() }).where(eq(stateObjects.componentId, made[3].id));

    const usage = await org.as("viewer").stateBackends.plantonManaged({ org: org.slug });
    const size = (serial: number) => plantonStateBytes(v4(serial)).byteLength;
    expect(usage.states.map((s) => [s.environment, s.component, s.provisioner, s.serial, s.size])).toEqual([
      ["dev", "pm-a", "builtin", 3, size(3)],
      ["prod", "pm-b", "builtin", 7, size(7)],
      ["prod", "pm-c", "builtin", 1, size(1)],
    ]);
    expect(usage.states[0]).toMatchObject({ componentId: made[0].id, kind: "StaticSite", key: plantonManagedKey(org.orgId, made[0].id) });
    expect(usage.totals).toEqual({ count: 3, size: size(3) + size(7) + size(1) });
    expect(usage.byEnvironment).toEqual([{ environment: "dev", count: 1, size: size(3) }, { environment: "prod", count: 2, size: size(7) + size(1) }]);
    const list = await org.as("viewer").stateBackends.list({ org: org.slug });
    expect(list.backends.find((b) => b.name === "planton-managed")!.components).toBeGreaterThanOrEqual(3);
  });

  it("an admin force-unlocks a component's state on the backend that keeps it; the removed lock is recorded", async () => {
    const admin = org.as("admin");
    // Planton-managed: the component's state row.
    const [pm] = (await org.as("viewer").stateBackends.plantonManaged({ org: org.slug })).states;
    const store = new PlantonManagedStore(t.db, org.orgId);
    const held = await store.lock(pm.key, { Operation: "OperationTypeApply", Who: "runner@lost-host" });
    expect((await refusal(org.as("engineer").stateBackends.forceUnlock({ org: org.slug, componentId: pm.componentId }))).code).toBe("FORBIDDEN");
    const res = await admin.stateBackends.forceUnlock({ org: org.slug, componentId: pm.componentId });
    expect(res).toEqual({ componentId: pm.componentId, released: held });
    expect(await store.lockHolder(pm.key)).toBeNull();
    const [event] = await auditOf(t.db, org.orgId, "state.force_unlock");
    expect(event.summary).toBe(`Force-unlocked the state of ${pm.component} (${pm.environment}) in planton-managed: lock ${held.ID} held by runner@lost-host for OperationTypeApply since ${held.Created}`);
    expect(event.changes).toMatchObject({ backend: "planton-managed", key: pm.key, released: held });

    // A local directory: under the component's default key there.
    const [files] = await t.db.select().from(stateBackends).where(and(eq(stateBackends.orgId, org.orgId), eq(stateBackends.name, "files")));
    const c = await draftComponent(t.db, org.actor(), { environment: "staging", kind: "StaticSite", name: "locked-site", spec: { site_name: "locked" }, connection: "local-sandbox", stateBackend: "files" });
    const key = defaultStateKey("staging", "locked-site");
    const lock = await withBackend(t.db, files, (b) => b.lock(key, { Operation: "OperationTypePlan", Who: "me@laptop" }));
    expect((await admin.stateBackends.forceUnlock({ org: org.slug, componentId: c.id })).released).toMatchObject({ ID: lock.ID, Who: "me@laptop" });
    expect(await withBackend(t.db, files, (b) => b.store.lockHolder(key))).toBeNull();
    // Nothing locked: nothing removed, nothing recorded.
    expect((await admin.stateBackends.forceUnlock({ org: org.slug, componentId: c.id })).released).toBeNull();
    expect(await auditCount(t.db, org.orgId, "state.force_unlock")).toBe(2);
    expect((await refusal(admin.stateBackends.forceUnlock({ org: org.slug, componentId: "cmp_nope" }))).code).toBe("NOT_FOUND");
  });
  it("a backend saved with credentials in its endpoint before that was refused answers and records them as ***, and is not saved again until fixed", async () => {
    const leaky = s3.endpoint.replace("://", "://AKIAEXAMPLE:legacy-in-url-secret@");
    const [conn] = await t.db.select().from(connections).where(and(eq(connections.orgId, org.orgId), eq(connections.name, "s3rver")));
    await t.db.insert(stateBackends).values({ id: newId("stateBackend"), orgId: org.orgId, name: "legacy-s3", kind: "s3", connectionId: conn.id, config: { ...s3Config(), endpoint: leaky } });
    const shown = await org.as("viewer").stateBackends.get({ org: org.slug, name: "legacy-s3" });
    expect(shown.config.endpoint).toBe(s3.endpoint.replace("://", "://***@"));
    expect(JSON.stringify(await org.as("viewer").stateBackends.list({ org: org.slug }))).not.toContain("legacy-in-url-secret");
    // Saved again as it stands (a connection change alone), it is refused beside the field; with the address fixed it saves, and the record keeps ***.
    const r = await refusal(org.as("admin").stateBackends.update({ org: org.slug, name: "legacy-s3", connection: "s3rver" }));
    expect(r).toMatchObject({ code: "BAD_REQUEST", field: "config.endpoint" });
    await org.as("admin").stateBackends.update({ org: org.slug, name: "legacy-s3", config: s3Config() });
    // Another such row deleted as it stands.
    await t.db.insert(stateBackends).values({ id: newId("stateBackend"), orgId: org.orgId, name: "legacy-s3-2", kind: "s3", connectionId: conn.id, config: { ...s3Config(), endpoint: leaky } });
    await org.as("admin").stateBackends.delete({ org: org.slug, name: "legacy-s3-2" });
    for (const action of ["state_backend.update", "state_backend.delete"]) {
      const recorded = JSON.stringify((await auditOf(t.db, org.orgId, action)).filter((e) => e.targetName?.startsWith("legacy-s3")));
      expect(recorded, action).toContain("***@");
      expect(recorded, action).not.toContain("legacy-in-url-secret");
    }
  });
});
