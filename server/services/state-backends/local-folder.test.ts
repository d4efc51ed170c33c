// Where a `local` state backend may keep its files: under the organization's own folder of the data folder, or a
// folder the operator allows (PLANTON_STATE_LOCAL_ROOTS), and never another organization's backend's folder.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { count, eq } from "drizzle-orm";
import { stateBackends } from "@/db/schema";
import { newId } from "@/lib/ids";
import { createTestDatabase, testDriver, type TestDatabase } from "../../../test/database";
import { auditCount, refusal, seedSettingsOrg, type SettingsOrg } from "../../../test/settings";
import { openStore } from "./open-store";

process.env.PLANTON_SECRET_KEY ??= "0f".repeat(32);

let t: TestDatabase;
let org: SettingsOrg;
let other: SettingsOrg;
/** The console's data folder, a folder the operator allows, and one it does not. */
let dataDir: string;
let allowed: string;
let elsewhere: string;
let own: string;

beforeAll(async () => {
  t = await createTestDatabase();
  [org, other] = [await seedSettingsOrg(t.db), await seedSettingsOrg(t.db)];
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "planton-local-folder-test-")));
  [dataDir, allowed, elsewhere] = ["data", "allowed", "elsewhere"].map((d) => path.join(tmp, d));
  for (const d of [dataDir, allowed, elsewhere]) fs.mkdirSync(d);
  own = path.join(dataDir, "local-states", org.orgId);
});
beforeEach(() => {
  vi.stubEnv("PLANTON_DATA_DIR", dataDir);
  vi.stubEnv("PLANTON_STATE_LOCAL_ROOTS", allowed);
});
afterEach(() => vi.unstubAllEnvs());
afterAll(async () => {
  await t?.close();
  if (dataDir) fs.rmSync(path.dirname(dataDir), { recursive: true, force: true });
});

const backendCount = async () => (await t.db.select({ n: count() }).from(stateBackends))[0].n;
const create = (o: SettingsOrg, name: string, folder: string) => o.as("admin").stateBackends.create({ org: o.slug, name, kind: "local", config: { path: folder } });
const outside = (folder: string) =>
  `its folder ${folder} is outside ${own}, where this organization's local states are kept (the operator also allows ${allowed}). ` +
  `Choose a folder under ${own}, or have the console's operator allow the folder with PLANTON_STATE_LOCAL_ROOTS.`;

describe(`a local state backend's folder (${testDriver})`, () => {
  it("outside the organization's folder and the operator's is refused before anything is written, saved or recorded", async () => {
    const before = { backends: await backendCount(), audit: await auditCount(t.db, org.orgId, "state_backend.create") };
    const escapes = [path.join(elsewhere, "states"), path.join(allowed, "..", "elsewhere", "states")];
    // A link inside an allowed folder that leads out of it is outside too.
    fs.symlinkSync(elsewhere, path.join(allowed, "link-out"));
    escapes.push(path.join(allowed, "link-out", "states"));
    for (const folder of escapes) {
      const r = await refusal(create(org, "escape", folder));
      expect(r).toMatchObject({ code: "BAD_REQUEST", field: "config.path" });
      expect(r.message).toBe(`State backend escape was not created: ${outside(folder)}`);
    }
    // The root, and another organization's own folder, are the console's files: refused in those words.
    for (const folder of ["/", path.join(dataDir, "local-states", other.orgId, "states")]) {
      const r = await refusal(create(org, "escape", folder));
      expect(r.message).toBe(
        `State backend escape was not created: its folder ${folder} is, holds or lies inside the console's data folder, outside ${own}, where this organization's local states are kept. ` +
          `Choose a folder under ${own}, or have the console's operator allow the folder with PLANTON_STATE_LOCAL_ROOTS.`,
      );
    }
    expect(fs.readdirSync(elsewhere)).toEqual([]);
    expect({ backends: await backendCount(), audit: await auditCount(t.db, org.orgId, "state_backend.create") }).toEqual(before);
    // The same words when only testing access, or changing a saved backend's folder.
    const tested = await refusal(org.as("admin").stateBackends.testAccess({ org: org.slug, kind: "local", config: { path: escapes[0] } }));
    expect(tested.message).toBe(`The access test of state backend (unsaved) did not run: ${outside(escapes[0])}`);
    await create(org, "movable", path.join(allowed, "movable"));
    const changed = await refusal(org.as("admin").stateBackends.update({ org: org.slug, name: "movable", config: { path: escapes[0] } }));
    expect(changed.message).toBe(`State backend movable was not changed: ${outside(escapes[0])}`);
    const [row] = await t.db.select().from(stateBackends).where(eq(stateBackends.name, "movable"));
    expect(row.config).toEqual({ path: path.join(allowed, "movable") });
  });

  it("the console's data folder, or one holding it, is refused even when the operator allows a folder around it", async () => {
    vi.stubEnv("PLANTON_STATE_LOCAL_ROOTS", path.dirname(dataDir));
    for (const folder of [dataDir, path.join(dataDir, "pglite"), path.dirname(dataDir)]) {
      const r = await refusal(create(org, "console-files", folder));
      expect(r).toMatchObject({ code: "BAD_REQUEST", field: "config.path" });
      expect(r.message).toBe(
        `State backend console-files was not created: its folder ${folder} is, holds or lies inside the console's data folder, outside ${own}, where this organization's local states are kept. ` +
          `Choose a folder under ${own}, or have the console's operator allow the folder with PLANTON_STATE_LOCAL_ROOTS.`,
      );
    }
    // Beside it, in the folder the operator allows, is fine.
    expect((await create(org, "beside-data", path.join(path.dirname(dataDir), "states-beside"))).access.ok).toBe(true);
  });

  it("under the organization's own folder it is kept owner-only; under a folder the operator allows it is kept as given", async () => {
    const mine = await create(org, "own-states", path.join(own, "states"));
    expect(mine.access.ok).toBe(true);
    for (const d of [path.join(dataDir, "local-states"), own, path.join(own, "states")]) expect(fs.statSync(d).mode & 0o777).toBe(0o700);
    expect((await create(org, "team-a", path.join(allowed, "team-a"))).access.ok).toBe(true);
  });

  it("in an allowed folder, another organization's backend's folder — the same, one inside it or one holding it — is refused without naming it", async () => {
    await create(org, "team-secret", path.join(allowed, "shared-a"));
    for (const folder of [path.join(allowed, "shared-a"), path.join(allowed, "shared-a", "inner"), allowed]) {
      const r = await refusal(create(other, "grab", folder));
      expect(r).toMatchObject({ code: "BAD_REQUEST", field: "config.path" });
      expect(r.message).toBe(
        `State backend grab was not created: its folder ${folder} is, holds or lies inside the folder of another organization's state backend. ` +
          `Choose a folder under ${path.join(dataDir, "local-states", other.orgId)}, or have the console's operator allow the folder with PLANTON_STATE_LOCAL_ROOTS.`,
      );
      expect(r.message).not.toContain(org.slug);
      expect(r.message).not.toContain("team-secret");
    }
    // A folder of its own beside it is fine, and the same organization may keep two backends in one folder.
    expect((await create(other, "beside", path.join(allowed, "shared-b"))).access.ok).toBe(true);
    expect((await create(org, "shared-a-again", path.join(allowed, "shared-a"))).access.ok).toBe(true);
  });

  it("two organizations saving backends in one shared folder at the same moment: one is saved, the other refused", async () => {
    const sameFolder = "another organization's state backend";
    // Two creates at once.
    const created = await Promise.allSettled([create(org, "race-a", path.join(allowed, "race-1")), create(other, "race-b", path.join(allowed, "race-1"))]);
    expect(created.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const lost = created.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(lost.reason.message).toContain(sameFolder);
    // A create and a change at once.
    await create(other, "race-c", path.join(allowed, "race-c"));
    const saved = await Promise.allSettled([
      create(org, "race-d", path.join(allowed, "race-2")),
      other.as("admin").stateBackends.update({ org: other.slug, name: "race-c", config: { path: path.join(allowed, "race-2") } }),
    ]);
    expect(saved.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect((saved.find((r) => r.status === "rejected") as PromiseRejectedResult).reason.message).toContain(sameFolder);
    // Whichever won, the folder is one organization's.
    const rows = await t.db.select({ orgId: stateBackends.orgId, config: stateBackends.config }).from(stateBackends);
    for (const folder of ["race-1", "race-2"]) {
      const owners = new Set(rows.filter((r) => (r.config as { path?: string }).path === path.join(allowed, folder)).map((r) => r.orgId));
      expect(owners.size, folder).toBe(1);
    }
  });

  it("a backend saved outside before the rule (or before the operator narrowed it) is not opened", async () => {
    const folder = path.join(elsewhere, "legacy");
    const id = newId("stateBackend");
    await t.db.insert(stateBackends).values({ id, orgId: org.orgId, name: "legacy", kind: "local", config: { path: folder } });
    const [row] = await t.db.select().from(stateBackends).where(eq(stateBackends.id, id));
    const r = await refusal(openStore(t.db, row));
    expect(r).toMatchObject({ code: "PRECONDITION_FAILED" });
    expect(r.message).toBe(`State backend legacy could not be opened: ${outside(folder)}`);
    const check = await org.as("admin").stateBackends.testAccess({ org: org.slug, name: "legacy" });
    expect(check).toMatchObject({ ok: false, steps: [{ step: "open", ok: false }] });
    expect(check.error).toContain(`its folder ${folder} is outside ${own}`);
    expect(fs.existsSync(folder)).toBe(false);
    // Once the operator allows it, it opens.
    vi.stubEnv("PLANTON_STATE_LOCAL_ROOTS", `${allowed}:${elsewhere}`);
    expect((await org.as("admin").stateBackends.testAccess({ org: org.slug, name: "legacy" })).ok).toBe(true);
  });
});
