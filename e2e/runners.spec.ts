// A runner of your own, as an admin brings one up in the console: register it, start it with the
// command the page shows (the real `planton` CLI, only its binary path resolved), watch it come online,
// make it the default runner, run a job on it, see the job page name the runner and the rule, and revoke
// it while it holds a job (a test gate keeps that job's apply open), which fails the job with the reason.
// Also: a viewer reads the page without actions, and the default-runner refusal in an organization whose
// state is still on Planton-managed storage. Its own organizations, so other specs' runners and states stay apart.
import { randomUUID } from "node:crypto";
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { eq } from "drizzle-orm";
import { openDatabase } from "../db/client";
import { iacModules, users } from "../db/schema";
import { newId } from "../lib/ids";
import { runnerStartCommand } from "../lib/runner-routing";
import type { Actor } from "../server/actor";
import { draftComponent } from "../test/components";
import { createJob } from "../server/services/jobs/create-job";
import { createOrganization } from "../server/services/organizations/create-organization";
import { plantonStateLeftRefusal, registerOwnRunner } from "../server/services/runners/manage";
import { createConnection, setConnectionAuthorizations } from "../server/services/settings/connections";
import { createStateBackend, setDefaultStateBackend } from "../server/services/state-backends/backends";
import { plantonManagedKey, PlantonManagedStore } from "../server/services/state-backends/planton-managed-store";
import { storedStateOf } from "../state-backends/rules";
import { addMember } from "./db";
import { e2eGates, e2eState, screenshot, signIn } from "./support";

test.describe.configure({ mode: "serial", timeout: 240_000 });

const ORG = "own-runner";
const REFUSAL_ORG = "still-managed";
const RUNNER = "e2e-runner";
// The gated module's gate is named by the site: this one holds the job that is running when the runner is revoked.
const HELD_SITE = "own-runner-held";
const VIEWER = { email: "viewer@own-runner.example", password: "viewer-password-1" };
const gates = e2eGates();
const root = process.cwd();
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "planton-e2e-runner-"));
let heldComponentId = "";
let actor: Actor;
let runner: ChildProcess | undefined;
let runnerLog = "";

const runnersUrl = (org = ORG) => `${e2eState().baseURL}/o/${org}/settings/runners`;
const runnerRow = (page: Page, name = RUNNER) => page.getByRole("table", { name: "Runners" }).getByRole("row").filter({ hasText: name });

/** The platform's static-site module with a test gate named by the site (as e2e/jobs.spec.ts has it). */
function gatedModule(dir: string) {
  fs.mkdirSync(dir, { recursive: true });
  for (const f of fs.readdirSync("catalog/modules/static-site")) fs.copyFileSync(path.join("catalog/modules/static-site", f), path.join(dir, f));
  const main = fs.readFileSync(path.join(dir, "main.tf"), "utf8");
  fs.writeFileSync(path.join(dir, "main.tf"), `resource "plantontest_gate" "settle" {\n  name = var.site_name\n}\n\n` + main.replace(/depends_on\s*=\s*\[local_directory\.site\]/, "depends_on      = [local_directory.site, plantontest_gate.settle]"));
  return dir;
}

test.beforeAll(async () => {
  const s = e2eState();
  const h = await openDatabase({ url: s.dbUrl, migrate: false });
  try {
    const [admin] = await h.db.select().from(users).where(eq(users.email, s.email));
    // An organization whose state lives in a backend of its own (a local directory the console reaches):
    // nothing is on Planton-managed storage, so a default runner of its own is accepted.
    const org = await createOrganization(h.db, { slug: ORG, name: "Own Runner Inc", environments: ["dev"], adminUserId: admin.id, adminLabel: s.email });
    actor = { userId: admin.id, label: s.email, orgId: org.id, role: "admin" };
    await createStateBackend(h.db, actor, { name: "local-states", kind: "local", config: { path: path.join(scratch, "states") } });
    await setDefaultStateBackend(h.db, actor, { provisioner: "builtin", backend: "local-states" });
    const files = await createConnection(h.db, actor, { name: "site-files", provider: "local", config: { root: path.join(scratch, "sites") } });
    await setConnectionAuthorizations(h.db, actor, { id: files.id, organization: true });
    await h.db.insert(iacModules).values({ id: newId("iacModule"), orgId: org.id, scopeKey: org.id, kind: "StaticSite", name: "static-site-gated-runner", provisioner: "builtin" as const, version: "1.0.1", source: gatedModule(path.join(scratch, "module")) });
    await draftComponent(h.db, actor, { environment: "dev", kind: "StaticSite", name: "runner-site", spec: { site_name: "own-runner-site", title: "own runner" }, connection: "site-files" });
    heldComponentId = (await draftComponent(h.db, actor, { environment: "dev", kind: "StaticSite", name: "held-site", spec: { site_name: HELD_SITE, title: "held" }, connection: "site-files" })).id;

    // An organization with one state on Planton-managed storage and a runner of its own.
    const managed = await createOrganization(h.db, { slug: REFUSAL_ORG, name: "Still Managed Inc", environments: ["staging"], adminUserId: admin.id, adminLabel: s.email });
    const managedActor: Actor = { ...actor, orgId: managed.id };
    const legacy = await draftComponent(h.db, managedActor, { environment: "staging", kind: "StaticSite", name: "legacy-site", spec: { site_name: "legacy-site", title: "legacy" } });
    const doc = { version: 4, terraform_version: "1.9.0", serial: 1, lineage: randomUUID(), outputs: {}, resources: [], check_results: null };
    await new PlantonManagedStore(h.db, managed.id, "e2e seed").write(plantonManagedKey(managed.id, legacy.id), storedStateOf(new Uint8Array(Buffer.from(JSON.stringify(doc)))));
    await registerOwnRunner(h.db, managedActor, { name: "edge-runner" });
  } finally {
    await h.close();
  }
  await addMember(ORG, "viewer", VIEWER.email, VIEWER.password);
});

test.afterAll(async () => {
  gates.release(HELD_SITE);
  if (runner && runner.exitCode === null && runner.signalCode === null) {
    const closed = new Promise((r) => runner!.once("close", r));
    runner.kill("SIGTERM");
    // A runner that does not stop within its grace period is killed rather than left behind.
    const stuck = setTimeout(() => runner!.kill("SIGKILL"), 10_000);
    await closed;
    clearTimeout(stuck);
  }
  fs.rmSync(scratch, { recursive: true, force: true });
});

/** Runs the command the page shows, with only `planton` resolved to this checkout's bin/planton.mjs; resolves once it says it started. */
async function startShownCommand(command: string) {
  const [bin, ...args] = command.split(" ");
  expect(bin).toBe("planton");
  const env: NodeJS.ProcessEnv = { ...process.env, ...gates.env, PLANTON_CONFIG_DIR: path.join(scratch, "config"), PLANTON_RUNNER_HEARTBEAT_MS: "1000", NO_COLOR: "1" };
  for (const k of ["PLANTON_URL", "PLANTON_TOKEN", "PLANTON_RUNNER_TOKEN"]) delete env[k];
  fs.mkdirSync(path.join(scratch, "work"), { recursive: true });
  const child = spawn(process.execPath, [path.join(root, "bin/planton.mjs"), ...args], { cwd: path.join(scratch, "work"), env, stdio: ["ignore", "pipe", "pipe"] });
  runner = child;
  child.stdout!.on("data", (d) => (runnerLog += d));
  child.stderr!.on("data", (d) => (runnerLog += d));
  await expect.poll(() => (child.exitCode === null ? runnerLog : `exited ${child.exitCode}: ${runnerLog}`), { timeout: 60_000, message: "the runner says it started" }).toContain("started against");
}

test("an admin registers a runner, starts it with the shown command, sees it online, makes it the default and runs a job on it", async ({ page }) => {
  const s = e2eState();
  await signIn(page, s.email, s.password);
  await page.goto(`${s.baseURL}/o/${ORG}/settings/environments`);
  await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Runners" }).click();
  await expect(page.getByRole("heading", { name: "Runners", exact: true })).toBeVisible();
  await expect(page.getByTestId("default-runner")).toContainText("Planton-hosted");

  // Register: a bad name is refused beside its field; then the token and its command, shown once.
  await page.getByRole("button", { name: "Register runner" }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByLabel("Name").fill("9-lives");
  await dialog.getByRole("button", { name: "Register runner" }).click();
  await expect(dialog.getByRole("alert")).toHaveText("Name must be 2–63 lower-case letters, digits and dashes, starting with a letter (e.g. prod-runner)");
  await dialog.getByLabel("Name").fill(RUNNER);
  await dialog.getByLabel("Labels").fill("network=office, purpose=e2e");
  await dialog.getByRole("button", { name: "Register runner" }).click();
  await expect(dialog.getByRole("heading", { name: `Runner ${RUNNER} registered` })).toBeVisible();
  await expect(dialog).toContainText("shown only once");
  const token = await dialog.getByRole("textbox", { name: "Runner token" }).inputValue();
  const command = await dialog.getByRole("textbox", { name: "Start command" }).inputValue();
  expect(token).toMatch(/^rnr_/);
  expect(command).toBe(runnerStartCommand(s.baseURL, token));
  await screenshot(page, "runners-registered", [dialog.getByRole("textbox", { name: "Runner token" }), dialog.getByRole("textbox", { name: "Start command" })]);
  await dialog.getByRole("button", { name: "I have copied it" }).click();
  await expect(dialog).toBeHidden();
  await expect(runnerRow(page).getByTestId("runner-status")).toHaveText("offline");

  // The shown command, run for real: the row turns online without a reload.
  await startShownCommand(command);
  await expect(runnerRow(page).getByTestId("runner-status")).toHaveText("online");
  await expect(runnerRow(page)).toContainText("network=office");
  await expect(runnerRow(page)).toContainText("0 of 2");

  // The default runner: accepted, since nothing is on Planton-managed storage.
  await page.getByLabel("Default runner").selectOption(RUNNER);
  await page.getByRole("button", { name: "Make default" }).click();
  await expect(page.getByTestId("default-runner")).toContainText(`${RUNNER}: Deploys and live cloud operations of connections that name no runner run on ${RUNNER}.`);
  await expect(runnerRow(page)).toContainText("default");
  await screenshot(page, "runners-list");

  // A job from the console's run button: it runs on the runner, and the job page says which rule chose it.
  await page.goto(`${s.baseURL}/o/${ORG}/components`);
  await page.getByRole("link", { name: "runner-site", exact: true }).click();
  await page.getByRole("button", { name: "Run job" }).first().click();
  await page.getByRole("dialog").getByRole("radio", { name: /^Update/ }).check();
  await page.getByRole("dialog").getByRole("button", { name: /^Run update/ }).click();
  await expect(page).toHaveURL(/\/jobs\/job_/);
  const jobId = page.url().split("/").pop()!;
  await expect(page.getByTestId("job-result")).toHaveText("Succeeded", { timeout: 120_000 });
  await expect(page.getByTestId("job-route")).toHaveText(`Runs on ${RUNNER}: the organization's default runner`);
  await expect(page.getByRole("table", { name: "Runner attempts" })).toContainText(RUNNER);
  await screenshot(page, "job-route");

  // The runner's page lists the job, linking to it.
  await page.getByTestId("job-route").getByRole("link", { name: RUNNER }).click();
  await expect(page.getByRole("heading", { name: new RegExp(`^${RUNNER}`) })).toBeVisible();
  await page.getByRole("table", { name: "Recent jobs" }).getByRole("link", { name: jobId }).click();
  await expect(page).toHaveURL(new RegExp(`/jobs/${jobId}$`));
});

test("a viewer sees the runners, the default and the runner's jobs, with no way to change them", async ({ page }) => {
  await signIn(page, VIEWER.email, VIEWER.password);
  await page.goto(runnersUrl());
  await expect(page.getByText("Registering, rotating and revoking runners and choosing the default runner needs the admin role")).toBeVisible();
  await expect(runnerRow(page).getByTestId("runner-status")).toHaveText("online");
  await expect(page.getByTestId("default-runner")).toContainText(RUNNER);
  for (const name of ["Register runner", "Make default", "Use Planton-hosted runners", `Revoke ${RUNNER}`, `Rotate the token of ${RUNNER}`]) await expect(page.getByRole("button", { name })).toHaveCount(0);
  await expect(page.getByLabel("Default runner")).toHaveCount(0);
  await screenshot(page, "runners-viewer");
  await runnerRow(page).getByRole("link", { name: RUNNER }).click();
  await expect(page.getByRole("table", { name: "Recent jobs" }).getByRole("row")).toHaveCount(2);
  await screenshot(page, "runner-detail");
  await expect(page.getByRole("button", { name: `Revoke ${RUNNER}` })).toHaveCount(0);
});

test("revoking the runner while it runs a job fails that job with the reason and shows the runner revoked", async ({ page }) => {
  const s = e2eState();
  gates.hold(HELD_SITE);
  const h = await openDatabase({ url: s.dbUrl, migrate: false });
  let jobId: string;
  try {
    jobId = (await createJob(h.db, actor, { componentId: heldComponentId, operation: "update" })).id;
  } finally {
    await h.close();
  }
  await gates.held(HELD_SITE);

  await signIn(page, s.email, s.password);
  await page.goto(runnersUrl());
  await expect(runnerRow(page)).toContainText("1 of 2");
  // Reached by keyboard, as every settings page's actions are; Cancel has focus first.
  await runnerRow(page).getByRole("button", { name: `Revoke ${RUNNER}` }).focus();
  await page.keyboard.press("Enter");
  const dialog = page.getByRole("dialog");
  await expect(dialog.getByRole("heading", { name: `Revoke ${RUNNER}?` })).toBeVisible();
  await expect(dialog).toContainText("its running job fails with that reason");
  await expect(dialog.getByRole("button", { name: "Cancel" })).toBeFocused();
  await page.keyboard.press("Tab");
  await expect(dialog.getByRole("button", { name: "Revoke runner" })).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(dialog).toBeHidden();
  await expect(page.getByText(`Revoked ${RUNNER}; its running job ${jobId} failed`)).toBeVisible();
  await expect(runnerRow(page).getByTestId("runner-status")).toHaveText("revoked");
  // It is no longer the default: deploys return to a Planton-hosted runner.
  await expect(page.getByTestId("default-runner")).toContainText("Planton-hosted");
  await screenshot(page, "runners-revoked");

  await page.goto(`${s.baseURL}/o/${ORG}/jobs/${jobId}`);
  await expect(page.getByTestId("job-result")).toHaveText("Failed");
  await expect(page.getByRole("table", { name: "Runner attempts" })).toContainText(`runner ${RUNNER} was revoked by ${s.email}`);
});

test("the default runner is refused while state is on Planton-managed storage, saying what is left and where to move it", async ({ page }) => {
  const s = e2eState();
  await signIn(page, s.email, s.password);
  await page.goto(runnersUrl(REFUSAL_ORG));
  await page.getByLabel("Default runner").selectOption("edge-runner");
  await page.getByRole("button", { name: "Make default" }).click();
  const expected = plantonStateLeftRefusal([{ component: "legacy-site", environment: "staging" }], "edge-runner").message;
  await expect(page.getByRole("alert").filter({ hasText: "Nothing was changed" })).toHaveText(expected);
  await expect(page.getByTestId("default-runner")).toContainText("Planton-hosted");
  await screenshot(page, "runners-default-refused");

  // Rotating the token of a runner that runs nothing: the new token and its command, shown once.
  await page.getByRole("button", { name: "Rotate the token of edge-runner" }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog).toContainText("The current token stops working at once");
  await dialog.getByRole("button", { name: "Rotate token" }).click();
  await expect(dialog.getByRole("heading", { name: "New token for edge-runner" })).toBeVisible();
  await expect(dialog.getByTestId("rotate-failed-jobs")).toContainText("It was running no jobs.");
  const token = await dialog.getByRole("textbox", { name: "Runner token" }).inputValue();
  await expect(dialog.getByRole("textbox", { name: "Start command" })).toHaveValue(runnerStartCommand(s.baseURL, token));
  await dialog.getByRole("button", { name: "I have copied it" }).click();
  await expect(dialog).toBeHidden();

  await page.getByRole("link", { name: /Move off Planton-managed storage/ }).click();
  await expect(page).toHaveURL(`${s.baseURL}/o/${REFUSAL_ORG}/settings/state-backends/move`);
});
