// Files and processes, on the built console: the data folder is private after start on Postgres and
// on PGlite (and what was loose is named in the log), a hosted runner inherits none of the console's
// secrets, works in a 0700 workspace, and writes a local connection's files only under its organization's
// folder of the data folder (or a folder the operator allowed).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { connectionAuthorizations, connections } from "../../db/schema";
import { hostedRunnerMayInherit } from "../../lib/hosted-runner-env";
import { newId } from "../../lib/ids";
import { draftComponent } from "../components";
import { startConsoleServer, type ConsoleServer } from "../console-server";
import { createTestGates } from "../gates";
import { startJobStack, type JobStack } from "./harness";

const SECRET_KEY = "5e".repeat(32);
const AUTH_SECRET = "integration-auth-secret-not-for-runners";

/** Every entry under `dir` (and `dir` itself) with group or other permission bits, as "mode path". */
function loose(dir: string): string[] {
  const out: string[] = [];
  const visit = (p: string) => {
    const st = fs.lstatSync(p);
    if (st.mode & 0o077) out.push(`${(st.mode & 0o777).toString(8)} ${path.relative(dir, p) || "."}`);
    if (st.isDirectory()) for (const e of fs.readdirSync(p)) visit(path.join(p, e));
  };
  visit(dir);
  return out;
}

const modeOf = (p: string) => fs.statSync(p).mode & 0o777;

/** The process ids whose command line runs runner/main.ts with a work folder under `workDir`. */
function runnerProcesses(workDir: string): number[] {
  return fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d)).flatMap((d) => {
    try {
      const argv = fs.readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0");
      return argv.some((a) => a.endsWith(path.join("runner", "main.ts"))) && argv.some((a) => a.startsWith(workDir)) ? [Number(d)] : [];
    } catch {
      return [];
    }
  });
}

/** A data folder left loose by hand: the folder 0755, a key 0644, local files 0644 in a 0755 folder. */
function looseDataFolder(): string {
  const dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "planton-files-")), "data");
  fs.mkdirSync(path.join(dataDir, "local-infra", "earlier"), { recursive: true, mode: 0o755 });
  fs.chmodSync(dataDir, 0o755);
  fs.chmodSync(path.join(dataDir, "local-infra"), 0o755);
  fs.chmodSync(path.join(dataDir, "local-infra", "earlier"), 0o755);
  fs.writeFileSync(path.join(dataDir, "secret.key"), "ab".repeat(32), { mode: 0o644 });
  fs.writeFileSync(path.join(dataDir, "local-infra", "earlier", "index.html"), "old", { mode: 0o644 });
  return dataDir;
}

describe("files and processes, on Postgres with a hosted runner", () => {
  let stack: JobStack;
  let dataDir: string;
  let orgBase: string;
  const allowed = fs.mkdtempSync(path.join(os.tmpdir(), "planton-allowed-"));
  const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), "planton-elsewhere-"));
  const gates = createTestGates();

  beforeAll(async () => {
    dataDir = looseDataFolder();
    stack = await startJobStack({
      env: {
        ...gates.env,
        PLANTON_DATA_DIR: dataDir,
        PLANTON_HOSTED_RUNNERS: "1",
        PLANTON_RUNNER_HEARTBEAT_MS: "1000",
        PLANTON_SECRET_KEY: SECRET_KEY,
        BETTER_AUTH_SECRET: AUTH_SECRET,
        PLANTON_LOCAL_ROOTS: allowed,
      },
    });
    const { t, org } = stack;
    orgBase = path.join(dataDir, "local-infra", org.slug);
    await stack.registerKind("TestSlow", "slow", [{ name: "name", type: "string", required: true, description: "folder" }]);
    // A relative root: a hosted runner places it under the organization's folder.
    await t.db.update(connections).set({ config: { root: "sites" } }).where(eq(connections.id, org.connectionId));
    for (const [name, root] of [["elsewhere", elsewhere], ["allowed", path.join(allowed, "www")]]) {
      const id = newId("connection");
      await t.db.insert(connections).values({ id, orgId: org.orgId, name, provider: "local", config: { root } });
      await t.db.insert(connectionAuthorizations).values({ id: newId("connectionAuthorization"), connectionId: id, scope: "organization" });
    }
  });

  afterAll(async () => {
    await stack?.close();
    for (const d of [path.dirname(dataDir), allowed, elsewhere, gates.dir]) fs.rmSync(d, { recursive: true, force: true });
  });

  it("the data folder is 0700 and nothing in it is readable by others after start; the log names what was repaired", () => {
    expect(loose(dataDir)).toEqual([]);
    expect(modeOf(dataDir)).toBe(0o700);
    expect(modeOf(path.join(dataDir, "secret.key"))).toBe(0o600);
    expect(modeOf(path.join(dataDir, "local-infra", "earlier", "index.html"))).toBe(0o600);
    const lines = stack.server.output().split("\n").filter((l) => l.startsWith("[data-folder]"));
    expect(lines).toEqual([
      `[data-folder] The data folder ${dataDir} had entries that group or others could read; they are private again (folders 0700, files 0600): the folder itself, local-infra (3 entries), secret.key.`,
    ]);
  });

  it("a hosted runner's environment holds the allow-list only: none of the console's secrets", async () => {
    const [pid] = await vi.waitFor(() => {
      const pids = runnerProcesses(path.join(dataDir, "work"));
      if (pids.length !== 1) throw new Error(`hosted runner processes: ${pids.length}`);
      return pids;
    });
    const environ = fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean);
    const names = environ.map((kv) => kv.slice(0, kv.indexOf("=")));
    expect(names).toEqual(expect.arrayContaining(["PATH", "PLANTON_RUNNER_TOKEN", "PLANTON_RUNNER_NAME", "PLANTON_RUNNER_LOCAL_BASE", "PLANTON_TEST_GATES_DIR"]));
    expect(names.filter((n) => !hostedRunnerMayInherit(n))).toEqual([]);
    for (const secret of ["PLANTON_SECRET_KEY", "DATABASE_URL", "BETTER_AUTH_SECRET", "PLANTON_ADMIN_PASSWORD"]) expect(names).not.toContain(secret);
    const text = environ.join("\n");
    for (const value of [SECRET_KEY, AUTH_SECRET, stack.t.url!, "integration-admin-pw"]) expect(text).not.toContain(value);
  });

  it("a hosted runner works in a 0700 workspace and writes the organization's local files under its folder of the data folder, private", async () => {
    await stack.component("slow", "dev", "TestSlow", { name: "one" });
    gates.hold("one");
    const job = await stack.run("slow", "update");
    await gates.held("one");
    const work = path.join(dataDir, "work", "hosted-1", "planton-runner");
    const [workspace] = fs.readdirSync(work);
    expect(workspace).toContain(job.id);
    for (const d of [path.join(dataDir, "work", "hosted-1"), work, path.join(work, workspace!), path.join(work, workspace!, "module")]) expect(modeOf(d)).toBe(0o700);
    gates.release("one");
    const done = await stack.finished(job.id);
    expect(done.result, done.reason ?? "").toBe("succeeded");
    const site = path.join(orgBase, "sites", "slow", "one");
    expect(fs.readFileSync(path.join(site, "after.txt"), "utf8")).toMatch(/^after /);
    expect(loose(path.join(dataDir, "local-infra"))).toEqual([]);
    expect(modeOf(path.join(site, "first.txt"))).toBe(0o600);
    // The workspace, with everything the job resolved, is gone after the attempt. The job can read as
    // completed a moment before its runner has ended the attempt, so wait for the runner's word that it has
    // (it logs "attempt ended" once the workspace is removed).
    await stack.server.waitForOutput(new RegExp(`"msg":"attempt ended"[^\\n]*"job":"${job.id}"`), `the runner ending job ${job.id}'s attempt`);
    expect(fs.readdirSync(work)).toEqual([]);
  });

  it("a local root outside the organization's folder is refused on a hosted runner, naming the folder; one the operator allowed works", async () => {
    const { t, org } = stack;
    stack.ids.outside = (await draftComponent(t.db, org.actor(), { environment: "dev", kind: "TestSlow", name: "outside", spec: { name: "two" }, connection: "elsewhere" })).id;
    stack.ids.permitted = (await draftComponent(t.db, org.actor(), { environment: "dev", kind: "TestSlow", name: "permitted", spec: { name: "three" }, connection: "allowed" })).id;
    const refused = await stack.finished((await stack.run("outside", "update")).id);
    expect(refused.result).toBe("failed");
    expect(refused.steps.find((s) => s.step === "init")).toMatchObject({
      result: "failed",
      reason: expect.stringContaining(`Nothing ran: the local connection elsewhere has the root ${elsewhere}, which is outside ${orgBase}, where Planton-hosted runners keep organization ${org.slug}'s local files`),
    });
    expect(fs.readdirSync(elsewhere)).toEqual([]);
    const ok = await stack.finished((await stack.run("permitted", "update")).id);
    expect(ok.result, ok.reason ?? "").toBe("succeeded");
    expect(fs.readFileSync(path.join(allowed, "www", "slow", "three", "after.txt"), "utf8")).toMatch(/^after /);
  });
});

describe("files on PGlite", () => {
  let server: ConsoleServer | undefined;
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), "planton-files-pglite-"));
  const dataDir = path.join(parent, "data");
  // An empty DATABASE_URL counts as unset: the console opens the embedded database in the data folder.
  const start = () => startConsoleServer({ databaseUrl: "", env: { DATABASE_URL: "", PLANTON_DATA_DIR: dataDir } });

  afterAll(async () => {
    await server?.stop();
    fs.rmSync(parent, { recursive: true, force: true });
  });

  it("the data folder is created 0700 and PGlite's files are private once it has opened; a file loosened later is repaired at the next start", async () => {
    server = await start();
    expect(modeOf(dataDir)).toBe(0o700);
    expect(fs.readdirSync(path.join(dataDir, "pglite")).length).toBeGreaterThan(5);
    expect(loose(dataDir)).toEqual([]);
    // PGlite's own files, made private right after it opened, are not reported as found loose.
    expect(server.output()).not.toContain("[data-folder]");
    await server.stop();
    fs.chmodSync(path.join(dataDir, "pglite", "PG_VERSION"), 0o644);
    server = await start();
    expect(loose(dataDir)).toEqual([]);
    expect(server.output().split("\n").filter((l) => l.startsWith("[data-folder]"))).toEqual([
      `[data-folder] The data folder ${dataDir} had entries that group or others could read; they are private again (folders 0700, files 0600): pglite (1 entry).`,
    ]);
  });
});
