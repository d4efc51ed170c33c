// The move off Planton-managed storage in the browser, as an admin runs it: destinations with their
// access test, the dry run, the move live (held mid-way so a reload shows it still running), the
// result, and "Nothing left on Planton-managed storage". Its own organization, so the states other
// specs keep on Planton-managed storage stay where they are. The destination is S3 on s3rver.
//
// The hold: the move's test gate state-move.held (server/services/state-backends/move.ts, honoured with
// PLANTON_TEST_GATES_DIR, which e2e/global-setup.ts gives the console) stops every chunk once its
// components' jobs are held, until the test releases it.
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { eq } from "drizzle-orm";
import { openDatabase } from "../db/client";
import { iacModules, organizations, users } from "../db/schema";
import { MOVE_ITEMS_SHOWN } from "../lib/state-moves";
import { newId } from "../lib/ids";
import type { Actor } from "../server/actor";
import { draftComponent } from "../test/components";
import { createJob } from "../server/services/jobs/create-job";
import { getJob } from "../server/services/jobs/queries";
import { createOrganization } from "../server/services/organizations/create-organization";
import { localInfraBase } from "../server/services/runners/hosted";
import { createConnection, setConnectionAuthorizations } from "../server/services/settings/connections";
import { createStateBackend } from "../server/services/state-backends/backends";
import { plantonManagedKey, PlantonManagedStore } from "../server/services/state-backends/planton-managed-store";
import { storedStateOf } from "../state-backends/rules";
import { startS3rver, type S3Server } from "../test/object-stores";
import { addMember } from "./db";
import { e2eGates, e2eState, screenshot, signIn } from "./support";

test.describe.configure({ mode: "serial", timeout: 240_000 });

const ORG = "move-off";
// Sites whose states real update jobs write.
const SITES = ["alpha-site", "beta-site", "gamma-site", "delta-site"];
// More states, written through the Planton-managed store, so the move works in several chunks.
const BULK = 236;
const TOTAL = SITES.length + BULK;
const SHOWN = Math.min(TOTAL, MOVE_ITEMS_SHOWN);
const VIEWER = { email: "viewer@move-off.example", password: "viewer-password-1" };
const SECOND_ADMIN = { email: "second-admin@move-off.example", password: "second-admin-password-1" };
let s3: S3Server;

const wizardUrl = () => `${e2eState().baseURL}/o/${ORG}/settings/state-backends/move`;

test.beforeAll(async () => {
  const s = e2eState();
  // Credentials are sealed with the console's key, which lives in its data folder.
  process.env.PLANTON_DATA_DIR = s.dataDir;
  s3 = await startS3rver();
  const h = await openDatabase({ url: s.dbUrl, migrate: false });
  try {
    const [admin] = await h.db.select().from(users).where(eq(users.email, s.email));
    const org = await createOrganization(h.db, { slug: ORG, name: "Move Off Inc", environments: ["dev", "staging"], adminUserId: admin.id, adminLabel: s.email });
    const actor: Actor = { userId: admin.id, label: s.email, orgId: org.id, role: "admin" };
    const local = await createConnection(h.db, actor, { name: "local-files", provider: "local", config: { root: path.join(localInfraBase(s.dataDir), ORG) } });
    await setConnectionAuthorizations(h.db, actor, { id: local.id, organization: true });
    await createConnection(h.db, actor, { name: "s3rver", provider: "aws", config: { region: s3.region }, credentials: { access_key_id: "S3RVER", secret_access_key: "S3RVER" } });
    await createStateBackend(h.db, actor, { name: "own-s3", kind: "s3", config: { bucket: s3.bucket, endpoint: s3.endpoint, key_prefix: "planton/" }, connection: "s3rver" });
    // Real states on Planton-managed storage: each site's update job runs on the hosted runner.
    const jobs: string[] = [];
    for (const [i, name] of SITES.entries()) {
      const component = await draftComponent(h.db, actor, { environment: i % 2 ? "staging" : "dev", kind: "StaticSite", name, spec: { site_name: name, title: name }, connection: "local-files" });
      jobs.push((await createJob(h.db, actor, { componentId: component.id, operation: "update" })).id);
    }
    const store = new PlantonManagedStore(h.db, org.id, "e2e seed");
    for (let i = 0; i < BULK; i++) {
      const component = await draftComponent(h.db, actor, { environment: "dev", kind: "StaticSite", name: `bulk-${String(i).padStart(3, "0")}`, spec: { site_name: `bulk-${i}`, title: `bulk ${i}` }, connection: "local-files" });
      const doc = { version: 4, terraform_version: "1.9.0", serial: 1, lineage: randomUUID(), outputs: {}, resources: [], check_results: null };
      await store.write(plantonManagedKey(org.id, component.id), storedStateOf(new Uint8Array(Buffer.from(JSON.stringify(doc)))));
    }
    for (const id of jobs) {
      await expect.poll(async () => (await getJob(h.db, org.id, id)).result, { timeout: 120_000, message: `update job ${id} succeeds` }).toBe("succeeded");
    }
  } finally {
    await h.close();
  }
  await addMember(ORG, "viewer", VIEWER.email, VIEWER.password);
  await addMember(ORG, "admin", SECOND_ADMIN.email, SECOND_ADMIN.password);
});

const gates = e2eGates();

test.afterAll(async () => {
  gates.release("state-move.held");
  gates.release("late-site");
  await s3?.stop();
});

/** The destination step: choose own-s3 for builtin states and wait for its access test to pass. */
async function chooseDestination(page: Page) {
  const builtin = page.getByTestId("destination-builtin");
  await builtin.getByLabel("Destination for builtin states").selectOption("own-s3");
  await expect(builtin.getByTestId("access-test")).toContainText("passed");
}

test("a viewer sees the wizard read-only, with a note saying who can move states", async ({ page }) => {
  await signIn(page, VIEWER.email, VIEWER.password);
  await page.goto(wizardUrl());
  await expect(page.getByRole("heading", { name: "Move off Planton-managed storage" })).toBeVisible();
  await expect(page.getByText("Moving states, retrying and rolling back needs the admin role")).toBeVisible();
  await expect(page.getByLabel("Destination for builtin states")).toBeDisabled();
  await expect(page.getByRole("button", { name: /Review the dry run/ })).toHaveCount(0);
  await screenshot(page, "state-move-wizard-viewer");
});

test("an admin moves every state off Planton-managed storage to S3, watching it live through a reload", async ({ page, browser }) => {
  const s = e2eState();
  await signIn(page, s.email, s.password);
  await page.goto(`${s.baseURL}/o/${ORG}/settings/state-backends`);
  await page.getByRole("link", { name: "Move off Planton-managed storage" }).click();
  await expect(page).toHaveURL(wizardUrl());

  // 1) Destination, with its access test's steps.
  await expect(page.getByTestId("destination-builtin")).toContainText(`${TOTAL} states`);
  await chooseDestination(page);
  await expect(page.getByTestId("access-test")).toContainText("Read it back");
  await screenshot(page, "state-move-wizard-1-destinations");

  // 2) The dry run: one row per state, its keys and totals; nothing moved yet. Reached by keyboard.
  await page.getByLabel("Destination for builtin states").focus();
  await page.keyboard.press("Tab");
  await expect(page.getByRole("button", { name: "Review the dry run" })).toBeFocused();
  await page.keyboard.press("Enter");
  const dryRun = page.getByRole("table", { name: "Dry run" });
  await expect(dryRun.getByTestId("dry-run-item")).toHaveCount(TOTAL);
  for (const [i, name] of SITES.entries()) {
    const row = dryRun.getByRole("row").filter({ hasText: name });
    await expect(row).toContainText("planton-managed");
    await expect(row).toContainText(`own-s3${i % 2 ? "staging" : "dev"}/${name}/terraform.tfstate`);
  }
  // The long Planton-managed keys wrap: the table fits the page without scrolling sideways.
  expect(await dryRun.evaluate((t) => t.parentElement!.scrollWidth - t.parentElement!.clientWidth)).toBeLessThanOrEqual(1);
  await expect(page.getByTestId("dry-run-totals")).toHaveText(`Total: ${TOTAL} states`);
  await screenshot(page, "state-move-wizard-2-review");

  // A second admin reaches the same review, to try a second start while the first move runs.
  const second = await browser.newPage();
  await signIn(second, SECOND_ADMIN.email, SECOND_ADMIN.password);
  await second.goto(wizardUrl());
  await chooseDestination(second);
  await second.getByRole("button", { name: "Review the dry run" }).click();
  await expect(second.getByTestId("dry-run-item")).toHaveCount(TOTAL);

  // 3) The move, held at the gate once every component's jobs are held.
  gates.hold("state-move.held");
  await page.getByRole("button", { name: /Start the move/ }).click();
  // A refused start says why on the review; the test reports those words rather than a missing heading.
  const moving = page.getByRole("heading", { name: "3. Moving" });
  const refused = page.getByRole("alert").filter({ hasText: "Nothing was" });
  await expect(moving.or(refused)).toBeVisible();
  expect(await refused.allInnerTexts(), "the start was refused").toEqual([]);
  await expect(moving).toBeVisible();
  await gates.held("state-move.held");
  const bar = page.getByTestId("move-progress");
  // More states than a live view carries: the table shows MOVE_ITEMS_SHOWN of them, the counts and the bar cover all.
  await expect(page.locator('[data-testid="move-item"][data-step="held"]')).toHaveCount(SHOWN);
  await expect(page.getByTestId("move-items-shown")).toHaveText(`Showing ${SHOWN} of ${TOTAL} components, then those in progress; the counts above cover every one.`);
  await expect(bar).toHaveAttribute("aria-valuenow", "0");
  await expect(page.getByTestId("move-counts")).toContainText(`0 of ${TOTAL} moved · ${TOTAL} in progress`);
  await screenshot(page, "state-move-wizard-3-moving");

  // Reloading mid-move shows the same move still running, where it stood.
  await page.reload();
  await expect(page.getByRole("heading", { name: "3. Moving" })).toBeVisible();
  await expect(page.getByTestId("move-item")).toHaveCount(SHOWN);
  await expect(page.locator('[data-testid="move-item"][data-step="held"]')).toHaveCount(SHOWN);
  await expect(page.getByTestId("move-progress")).toHaveAttribute("aria-valuenow", "0");

  // The second admin is told a move runs; starting another is refused with the server's words.
  await expect(second.getByRole("status").filter({ hasText: "is running" })).toBeVisible();
  await second.getByRole("button", { name: /Start the move/ }).click();
  await expect(second.getByRole("alert").filter({ hasText: "Nothing was started: state move" })).toBeVisible();
  await screenshot(second, "state-move-wizard-second-start-refused");
  await second.getByRole("button", { name: "Show the running move" }).click();
  await expect(second.getByRole("heading", { name: "3. Moving" })).toBeVisible();

  // The gate opens: the bar runs to the end as the watch reports each step, with no reload.
  gates.release("state-move.held");
  await expect(page.getByTestId("move-progress")).toHaveAttribute("aria-valuenow", String(TOTAL), { timeout: 60_000 });

  // 4) The result, on both admins' pages.
  await expect(page.getByTestId("move-result")).toContainText(`${TOTAL} of ${TOTAL} states moved`);
  await expect(page.getByText("Nothing left on Planton-managed storage")).toBeVisible();
  await expect(page.locator('[data-testid="move-item"][data-step="done"]')).toHaveCount(SHOWN);
  await expect(second.getByText("Nothing left on Planton-managed storage")).toBeVisible();
  await screenshot(page, "state-move-wizard-4-result");
  await second.close();

  // Leaving and coming back shows where it stands.
  await page.goto(`${s.baseURL}/o/${ORG}/settings/connections`);
  await page.goto(wizardUrl());
  await expect(page.getByText("Nothing left on Planton-managed storage")).toBeVisible();

  // A moved component's State tab reads its state from S3 now; the versions kept from before cannot be rolled back to.
  await page.goto(`${s.baseURL}/o/${ORG}/components`);
  await page.getByRole("link", { name: SITES[0], exact: true }).click();
  await page.getByRole("tab", { name: "State" }).click();
  await expect(page.getByText("own-s3 (s3)")).toBeVisible();
  await expect(page.getByText(`dev/${SITES[0]}/terraform.tfstate`)).toBeVisible();
  await expect(page.getByText("This state lives on own-s3 now")).toBeVisible();
  await expect(page.getByTestId("state-version").first()).toBeVisible();
  await expect(page.getByRole("button", { name: "Roll back to this version" })).toHaveCount(0);
  await expect(page.getByRole("table", { name: "Resources in state" }).locator("tbody tr")).not.toHaveCount(0);
});

test("a state locked by a running job fails its move with the reason; Retry failed moves it once the job ends, and a rollback puts it back", async ({ page }) => {
  const s = e2eState();
  const h = await openDatabase({ url: s.dbUrl, migrate: false });
  try {
    const [org] = await h.db.select().from(organizations).where(eq(organizations.slug, ORG));
    const [admin] = await h.db.select().from(users).where(eq(users.email, s.email));
    const actor: Actor = { userId: admin.id, label: s.email, orgId: org.id, role: "admin" };
    // A new component keeps its state on Planton-managed storage (the organization's default is unchanged).
    const late = await draftComponent(h.db, actor, { environment: "dev", kind: "StaticSite", name: "late-site", spec: { site_name: "late-site", title: "late" }, connection: "local-files" });
    const first = await createJob(h.db, actor, { componentId: late.id, operation: "update" });
    await expect.poll(async () => (await getJob(h.db, org.id, first.id)).result, { timeout: 120_000 }).toBe("succeeded");
    // Then the platform's static-site module with a test gate named by the site (as e2e/jobs.spec.ts has
    // it): the next update creates the gate and waits there, holding the state's lock, while the test holds it.
    const dir = path.join(s.dataDir, "modules", "static-site-gated-move");
    fs.mkdirSync(dir, { recursive: true });
    for (const f of fs.readdirSync("catalog/modules/static-site")) fs.copyFileSync(path.join("catalog/modules/static-site", f), path.join(dir, f));
    const main = fs.readFileSync(path.join(dir, "main.tf"), "utf8");
    fs.writeFileSync(path.join(dir, "main.tf"), `resource "plantontest_gate" "settle" {\n  name = var.site_name\n}\n\n` + main.replace(/depends_on\s*=\s*\[local_directory\.site\]/, "depends_on      = [local_directory.site, plantontest_gate.settle]"));
    await h.db.insert(iacModules).values({ id: newId("iacModule"), orgId: org.id, scopeKey: org.id, kind: "StaticSite", name: "static-site-gated-move", provisioner: "builtin" as const, version: "1.0.1", source: dir });
    gates.hold("late-site");
    const second = await createJob(h.db, actor, { componentId: late.id, operation: "update", versionMessage: "the job the move meets" });
    await gates.held("late-site");

    await signIn(page, s.email, s.password);
    await page.goto(wizardUrl());
    await expect(page.getByTestId("move-result")).toContainText("1 state is still on Planton-managed storage");
    await page.getByRole("button", { name: "Move the rest" }).click();
    await chooseDestination(page);
    await page.getByRole("button", { name: "Review the dry run" }).click();
    await expect(page.getByTestId("dry-run-item")).toHaveCount(1);
    await page.getByRole("button", { name: /Start the move/ }).click();

    // The job holds the state's lock: the move leaves it where it is and says why.
    const result = page.getByTestId("move-result");
    await expect(result).toContainText("1 of 1 states did not move");
    const item = page.getByTestId("move-item").filter({ hasText: "late-site" });
    await expect(item).toHaveAttribute("data-step", "failed");
    await expect(item).toContainText(`Nothing was moved for component late-site: its state is locked by job ${second.id}; retry when it ends.`);
    await screenshot(page, "state-move-wizard-4-failed");

    gates.release("late-site");
    await expect.poll(async () => (await getJob(h.db, org.id, second.id)).result, { timeout: 120_000 }).toBe("succeeded");
    await page.getByRole("button", { name: "Retry failed" }).click();
    await expect(item).toHaveAttribute("data-step", "done", { timeout: 60_000 });
    await expect(page.getByText("Nothing left on Planton-managed storage")).toBeVisible();

    // Per-component rollback while the old copy exists: the state goes back to Planton-managed storage.
    await item.getByRole("button", { name: "Roll back late-site (dev)" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Roll back" }).click();
    await expect(page.getByRole("dialog")).toBeHidden();
    await expect(item).toHaveAttribute("data-step", "rolled_back");
    await expect(result).toContainText("1 state is still on Planton-managed storage");
    await screenshot(page, "state-move-wizard-rolled-back");
  } finally {
    gates.release("late-site");
    await h.close();
  }
});
