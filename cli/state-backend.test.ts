// `planton infra state-backend …`: the real binary against the built console on a real Postgres (no
// runner: the states on Planton-managed storage are written through its store, as a job's would be).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { storedStateOf } from "../state-backends/rules";
import { buildProgram } from "./main";
import { PlantonManagedStore, plantonManagedKey, plantonStateBytes } from "../server/services/state-backends/planton-managed-store";
import { startJobStack, type JobStack } from "../test/integration/harness";

const root = path.resolve(import.meta.dirname, "..");
let stack: JobStack;
let adminToken: string;
let engineerToken: string;
let states: string;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function planton(args: string[], token = adminToken): Promise<Run> {
  const env = { ...process.env, PLANTON_URL: stack.server.url, PLANTON_TOKEN: token, PLANTON_CONFIG_DIR: path.join(stack.infraRoot, "config"), NO_COLOR: "1" };
  const child = spawn(process.execPath, [path.join(root, "bin/planton.mjs"), ...args], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  const run: Run = { code: null, stdout: "", stderr: "" };
  child.stdout.on("data", (d) => (run.stdout += d));
  child.stderr.on("data", (d) => (run.stderr += d));
  return new Promise((resolve) => child.on("close", (code) => resolve({ ...run, code })));
}

beforeAll(async () => {
  stack = await startJobStack();
  [adminToken, engineerToken] = await Promise.all([stack.tokenFor("admin"), stack.tokenFor("engineer")]);
  states = path.join(stack.infraRoot, "states");
  const store = new PlantonManagedStore(stack.t.db, stack.org.orgId);
  for (const [name, env, serial] of [["web", "dev", 3], ["api", "prod", 12]] as const) {
    const id = await stack.component(name, env, "StaticSite", { site_name: name });
    const doc = { version: 4, terraform_version: "builtin-0.1.0", serial, lineage: `lin-${name}`, outputs: {}, resources: [] };
    await store.write(plantonManagedKey(stack.org.orgId, id), storedStateOf(plantonStateBytes(doc)));
  }
}, 180_000);

afterAll(async () => {
  await stack?.close();
});

const SUBCOMMANDS: [string, string][] = [
  ["create", "<name>"],
  ["list", "[options]"],
  ["get", "<name>"],
  ["delete", "<name>"],
  ["set-default", "<backend>"],
  ["unset-default", "[options]"],
  ["list-planton-managed", "[options]"],
  ["force-unlock", "<infra-component-id>"],
];

describe("planton infra state-backend", () => {
  it("every subcommand's --help has its usage line and an example", () => {
    // The program's own help, in this process: one spawn per subcommand would cost seconds for the same text.
    const group = buildProgram().commands.find((x) => x.name() === "infra")!.commands.find((x) => x.name() === "state-backend")!;
    for (const [sub, arg] of SUBCOMMANDS) {
      let help = "";
      const cmd = group.commands.find((x) => x.name() === sub)!;
      cmd.configureOutput({ writeOut: (text) => (help += text) });
      cmd.outputHelp();
      expect(help).toContain(`Usage: planton infra state-backend ${sub} `);
      expect(help.split("\n")[0]).toContain(arg);
      expect(help).toMatch(new RegExp(`Examples?:\\n  \\$ planton infra state-backend ${sub}`));
    }
  });

  it("create (after the access test), list, get, set-default for every provisioner the kind serves, a refused delete, then delete", async () => {
    const created = await planton(["infra", "state-backend", "create", "laptop", "--kind", "local", "--config", `path=${states}`]);
    expect(created.stderr).toBe("");
    expect(created.stdout).toContain("Created Local directory state backend laptop.");
    expect(created.stdout).toContain("Access test: open ✓  write ✓  read ✓  compare ✓  delete ✓");

    const setDefault = await planton(["infra", "state-backend", "set-default", "laptop"]);
    expect(setDefault.stdout).toContain("laptop is now the default for builtin, tofu, terraform, pulumi: new components keep their state there.");
    expect(setDefault.stdout).toContain("Defaults: builtin → laptop, tofu → laptop, terraform → laptop, pulumi → laptop");

    const list = await planton(["infra", "state-backend", "list"], engineerToken);
    const lines = list.stdout.split("\n");
    expect(lines[0]).toMatch(/^NAME\s+KIND\s+CONNECTION\s+COMPONENTS\s+DEFAULT FOR$/);
    expect(lines.find((l) => l.startsWith("laptop"))).toMatch(/^laptop\s+Local directory\s+-\s+0\s+builtin, tofu, terraform, pulumi$/);
    expect(lines.find((l) => l.startsWith("planton-managed"))).toMatch(/^planton-managed\s+Planton-managed\s+-\s+2\s+-$/);

    const get = await planton(["infra", "state-backend", "get", "laptop", "--output", "json"], engineerToken);
    expect(JSON.parse(get.stdout)).toMatchObject({ name: "laptop", kind: "local", config: { path: states }, defaultFor: ["builtin", "tofu", "terraform", "pulumi"] });

    const refused = await planton(["infra", "state-backend", "delete", "laptop"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe(
      "State backend laptop was not deleted: it is the organization's default for builtin, tofu, terraform, pulumi, so new components keep their state there. Make another backend the default first (planton infra state-backend set-default <backend> --provisioner builtin), or unset it (planton infra state-backend unset-default --provisioner builtin).",
    );
    const unset = await planton(["infra", "state-backend", "unset-default", "--provisioner", "builtin"]);
    expect(unset.stdout).toContain("The default for builtin is planton-managed now");
    const back = await planton(["infra", "state-backend", "set-default", "planton-managed"]);
    expect(back.stdout).toContain("planton-managed is now the default for builtin, tofu, terraform, pulumi");
    expect((await planton(["infra", "state-backend", "delete", "laptop"])).stdout).toBe("Deleted state backend laptop.\n");
  });

  it("refusals are the server's words on stderr with exit 1: an unknown kind, an engineer creating", async () => {
    const kind = await planton(["infra", "state-backend", "create", "odd", "--kind", "ftp"]);
    expect([kind.code, kind.stdout]).toEqual([1, ""]);
    expect(kind.stderr).toBe("State backend odd was not created: there is no state backend kind ftp. Pick one of the kinds planton infra state-backend create --help lists, or choose one in Settings → State Backends.\n");
    const engineer = await planton(["infra", "state-backend", "create", "mine", "--kind", "local", "--config", `path=${states}`], engineerToken);
    expect(engineer.code).toBe(1);
    expect(engineer.stderr).toContain("this needs the admin role");
    expect(fs.existsSync(states) ? fs.readdirSync(states, { recursive: true }).filter((f) => String(f).endsWith(".tfstate")) : []).toEqual([]);
  });

  it("list-planton-managed shows component, environment, provisioner, size and serial, as a table or JSON", async () => {
    const table = await planton(["infra", "state-backend", "list-planton-managed"], engineerToken);
    const lines = table.stdout.split("\n");
    expect(lines[0]).toMatch(/^COMPONENT\s+ENVIRONMENT\s+PROVISIONER\s+SIZE\s+SERIAL$/);
    expect(lines[1]).toMatch(/^web\s+dev\s+builtin\s+\d+ B\s+3$/);
    expect(lines[2]).toMatch(/^api\s+prod\s+builtin\s+\d+ B\s+12$/);
    expect(table.stdout).toMatch(/2 states, \d+ B \(dev: 1, \d+ B; prod: 1, \d+ B\)/);
    const json = JSON.parse((await planton(["infra", "state-backend", "list-planton-managed", "--output", "json"], engineerToken)).stdout);
    expect(json.totals.count).toBe(2);
    expect(json.states.map((s: { component: string; serial: number }) => [s.component, s.serial])).toEqual([["web", 3], ["api", 12]]);
  });

  it("force-unlock removes a lost holder's lock and prints it; engineers may not", async () => {
    const store = new PlantonManagedStore(stack.t.db, stack.org.orgId);
    const key = plantonManagedKey(stack.org.orgId, stack.ids.web);
    const held = await store.lock(key, { Operation: "OperationTypeApply", Who: "runner@gone" });
    const engineer = await planton(["infra", "state-backend", "force-unlock", stack.ids.web], engineerToken);
    expect([engineer.code, engineer.stderr]).toEqual([1, expect.stringContaining("this needs the admin role")]);
    expect(await store.lockHolder(key)).toEqual(held);
    const r = await planton(["infra", "state-backend", "force-unlock", stack.ids.web]);
    expect(r.stdout).toContain(`Removed the lock on the state of ${stack.ids.web}:`);
    expect(r.stdout).toMatch(new RegExp(`ID\\s+${held.ID}`));
    expect(r.stdout).toMatch(/Who\s+runner@gone/);
    expect(await store.lockHolder(key)).toBeNull();
    expect((await planton(["infra", "state-backend", "force-unlock", stack.ids.web])).stdout).toContain("was not locked; nothing was changed.");
  });
});
