// The direct path in the browser (issue 13), as an engineer lives it: create a component and watch its
// first deploy, edit it and read the diff and the second job, delete it and watch the destroy, find it
// under Deleted components. Then a draft, an edit refused for being based on an old version (nothing
// typed is lost), a prod delete that pauses, is cancelled into "Delete failed" and retried, and Forget.
// Its own organization, with the static-site module behind a test gate named by the site, so a test
// sees a job running before it lets it finish.
import fs from "node:fs";
import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { eq } from "drizzle-orm";
import { openDatabase } from "../db/client";
import { iacModules, users } from "../db/schema";
import { newId } from "../lib/ids";
import type { Actor } from "../server/actor";
import { createOrganization } from "../server/services/organizations/create-organization";
import { localInfraBase } from "../server/services/runners/hosted";
import { createConnection, setConnectionAuthorizations } from "../server/services/settings/connections";
import { setFlowControlPolicy } from "../server/services/settings/flow-control";
import { addMember } from "./db";
import { e2eGates, e2eState, gatedStaticSiteModule, screenshot, signIn } from "./support";

test.describe.configure({ mode: "serial", timeout: 240_000 });

const ORG = "lifecycle";
const ENGINEER = { email: "engineer@lifecycle.example", password: "engineer-password-1" };
const gates = e2eGates();
let siteRoot = "";

test.beforeAll(async () => {
  const s = e2eState();
  process.env.PLANTON_DATA_DIR = s.dataDir;
  const h = await openDatabase({ url: s.dbUrl, migrate: false });
  try {
    const [admin] = await h.db.select().from(users).where(eq(users.email, s.email));
    const org = await createOrganization(h.db, { slug: ORG, name: "Lifecycle Inc", environments: ["dev", "prod"], adminUserId: admin.id, adminLabel: s.email });
    const actor: Actor = { userId: admin.id, label: s.email, orgId: org.id, role: "admin" };
    siteRoot = path.join(localInfraBase(s.dataDir), ORG);
    const local = await createConnection(h.db, actor, { name: "local-files", provider: "local", config: { root: siteRoot } });
    await setConnectionAuthorizations(h.db, actor, { id: local.id, organization: true });
    // prod's policy: update and destroy jobs pause after their preview for approval of the plan.
    await setFlowControlPolicy(h.db, actor, { selector: "environment", target: "prod", toggles: { manualStart: false, skipRefresh: false, previewBeforeApply: true, pauseBeforeApply: true, protectDeletes: false } });
    // The platform's static-site module with a test gate named by the site, which passes unless held.
    const dir = gatedStaticSiteModule(s.dataDir, "static-site-lifecycle");
    await h.db.insert(iacModules).values({ id: newId("iacModule"), orgId: org.id, scopeKey: org.id, kind: "StaticSite", name: "static-site-lifecycle", provisioner: "builtin" as const, version: "1.0.2", source: dir });
  } finally {
    await h.close();
  }
  await addMember(ORG, "engineer", ENGINEER.email, ENGINEER.password);
});

test.afterAll(() => {
  for (const g of ["shop", "shop.refresh", "prod"]) gates.release(g);
});

const base = () => `${e2eState().baseURL}/o/${ORG}`;
const step = (page: Page, name: string) => page.getByTestId(`step-state-${name}`);
const row = (page: Page, name: string) => page.locator(`tr[data-component="${name}"]`);
/** The site folders the static-site module wrote under the connection's root. */
const sitesOn = (name: string) => (fs.existsSync(path.join(siteRoot, "sites")) ? fs.readdirSync(path.join(siteRoot, "sites")).filter((d) => d.startsWith(`${name}-`)) : []);

async function fillNewComponent(page: Page, env: string, name: string, siteName: string, title: string) {
  await page.goto(`${base()}/components`);
  await page.getByRole("link", { name: "New component" }).click();
  await page.getByRole("radio", { name: /Static site/ }).click();
  await page.getByLabel("Environment").selectOption(env);
  await page.getByLabel("Name", { exact: true }).fill(name);
  await page.getByLabel("site_name *").fill(siteName);
  await page.getByLabel("title").fill(title);
}

test("an engineer creates a component in dev and watches its first deploy, edits it and sees the diff and the second job, deletes it and watches the destroy, then finds it in Deleted components", async ({ page }) => {
  await signIn(page, ENGINEER.email, ENGINEER.password);
  await expect(page.getByText("No Infra Components yet")).toBeVisible();
  await screenshot(page, "components-empty");

  // Create and deploy: the console lands on the queued job, which runs while the page watches.
  await fillNewComponent(page, "dev", "shop-site", "shop", "Shop v1");
  await expect(page.getByRole("button", { name: "Save as draft" })).toBeVisible();
  gates.hold("shop");
  await page.getByRole("button", { name: "Create and deploy" }).click();
  await expect(page).toHaveURL(/\/o\/lifecycle\/jobs\/job_/);
  const firstJob = page.url().split("/").pop()!;
  await expect(page.getByTestId("job-spec-version")).toHaveText("Spec version 1");
  await gates.held("shop");
  await expect(step(page, "apply")).toHaveText("Running");
  await expect(page.getByTestId("job-status")).toHaveText("Running");
  gates.release("shop");
  await expect(page.getByTestId("job-result")).toHaveText("Succeeded", { timeout: 90_000 });
  await expect(step(page, "apply")).toHaveText("Succeeded");
  expect(sitesOn("shop")).toHaveLength(1);
  await screenshot(page, "component-first-deploy");

  // The list: Active, version 1, its last job.
  await page.goto(`${base()}/components`);
  await expect(row(page, "shop-site").getByTestId("component-status")).toHaveText("Active");
  await expect(row(page, "shop-site")).toContainText("v1");
  await expect(row(page, "shop-site")).toContainText("Succeeded");
  await screenshot(page, "components-list-statuses");

  // Edit: the form is based on version 1; saving records version 2 and queues its update job.
  await row(page, "shop-site").getByRole("link", { name: "shop-site" }).click();
  await page.getByRole("button", { name: "Edit" }).click();
  await expect(page.getByText("Editing version 1: saving records version 2.")).toBeVisible();
  await page.getByLabel("title").fill("Shop v2");
  await page.getByLabel("Version message").fill("New title for the sale");
  await page.getByRole("button", { name: "Save and deploy" }).click();
  const saved = page.getByTestId("saved-notice");
  await expect(saved).toContainText("Saved version 2. Its update job");
  await expect(page.getByRole("heading", { name: /shop-site/ })).toBeVisible();
  await expect(page.getByText('"Shop v2"')).toBeVisible();
  await screenshot(page, "component-saved");

  // Versions: the diff from version 1, field by field, and the job that runs it.
  await page.getByRole("tab", { name: /Versions/ }).click();
  await expect(page).toHaveURL(/tab=versions/);
  await expect(page.getByTestId("version-title")).toHaveText("Version 2");
  const diff = page.locator('tr[data-field="spec.title"]');
  await expect(diff).toContainText("Shop v1");
  await expect(diff).toContainText("Shop v2");
  await expect(page.getByRole("list", { name: "Jobs of version 2" }).getByRole("link")).toHaveCount(1);
  await screenshot(page, "component-versions");
  await page.getByRole("link", { name: /Version 1/ }).click();
  await expect(page).toHaveURL(/version=1/);
  await expect(page.getByTestId("version-title")).toHaveText("Version 1");
  await expect(page.getByRole("list", { name: "Jobs of version 1" })).toContainText(firstJob);

  // The second job ran version 2, and its page links back to that version's diff.
  await page.getByRole("link", { name: /Version 2/ }).click();
  await page.getByRole("list", { name: "Jobs of version 2" }).getByRole("link").click();
  await expect(page).toHaveURL(/\/jobs\/job_/);
  expect(page.url()).not.toContain(firstJob);
  await expect(page.getByText("New title for the sale")).toBeVisible();
  await expect(page.getByTestId("job-result")).toHaveText("Succeeded", { timeout: 90_000 });
  await page.getByTestId("job-spec-version").click();
  await expect(page).toHaveURL(/tab=versions&version=2/);
  await expect(page.locator('tr[data-field="spec.title"]')).toContainText("Shop v2");

  // Delete: the dialog says a destroy job runs, under which policy, and what it destroys.
  await page.getByRole("button", { name: "Delete" }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog.getByRole("heading", { name: "Delete shop-site" })).toBeVisible();
  await expect(dialog).toContainText("A destroy job runs for shop-site");
  await expect(dialog.getByTestId("delete-flow-control")).toContainText("no approval is asked");
  await expect(dialog.getByRole("list", { name: "Resources that will be destroyed" })).toContainText("local_file.index");
  await expect(dialog.getByRole("button", { name: "Cancel" })).toBeFocused();
  await screenshot(page, "component-delete-dialog");
  // The gate holds the destroy's refresh, so the page is seen while the component is being deleted.
  gates.hold("shop.refresh");
  await dialog.getByRole("button", { name: "Delete and destroy" }).click();
  await expect(page).toHaveURL(/\/jobs\/job_/);
  await gates.held("shop.refresh");
  await expect(page.getByTestId("job-deletes-component")).toContainText("This job deletes the component shop-site");
  await expect(step(page, "refresh")).toHaveText("Running");
  await screenshot(page, "component-destroying");
  gates.release("shop.refresh");
  await expect(page.getByTestId("job-result")).toHaveText("Succeeded", { timeout: 90_000 });
  await expect(step(page, "destroy")).toHaveText("Succeeded");
  await expect(page.getByTestId("job-deletes-component")).toContainText("This job deleted the component shop-site");
  expect(sitesOn("shop")).toHaveLength(0);
  await screenshot(page, "component-destroyed");

  // Gone from the list, found under Deleted components with who and when; its page is read-only.
  await page.goto(`${base()}/components`);
  await expect(page.getByText("No Infra Components yet")).toBeVisible();
  await page.getByRole("tab", { name: "Deleted components" }).click();
  await expect(page).toHaveURL(/show=gone/);
  await expect(row(page, "shop-site").getByTestId("component-status")).toHaveText("Deleted");
  await expect(row(page, "shop-site")).toContainText(ENGINEER.email);
  await screenshot(page, "components-deleted");
  await row(page, "shop-site").getByRole("link", { name: "shop-site" }).click();
  await expect(page.getByTestId("component-banner")).toContainText(`Deleted by ${ENGINEER.email}`);
  await expect(page.getByTestId("component-banner")).toContainText("This page is read-only.");
  for (const name of ["Delete", "Forget", "Run job"]) await expect(page.getByRole("button", { name, exact: true })).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Edit" })).toHaveAttribute("aria-disabled", "true");
  await page.getByRole("tab", { name: /Versions/ }).click();
  await expect(page.getByTestId("version-title")).toHaveText("Version 2");
  await screenshot(page, "component-deleted-page");
});

test("a draft says so in the list and on its page and deploys from its banner; an edit based on an older version is refused with Reload, and nothing typed is lost", async ({ page, browser }) => {
  const s = e2eState();
  await signIn(page, ENGINEER.email, ENGINEER.password);
  await fillNewComponent(page, "dev", "draft-site", "draft", "Draft v1");
  await page.getByRole("button", { name: "Save as draft" }).click();
  await expect(page).toHaveURL(/\/o\/lifecycle\/components\/cmp_/);
  const componentUrl = page.url();
  await expect(page.getByTestId("component-status")).toHaveText("Draft");
  await expect(page.getByTestId("component-banner")).toContainText("Draft: version 1 is not deployed");
  await screenshot(page, "component-draft");
  await page.goto(`${base()}/components`);
  await expect(row(page, "draft-site").getByTestId("component-status")).toHaveText("Draft");
  await expect(row(page, "draft-site")).toContainText("none yet");

  // Deploy from the banner: an update job for version 1.
  await page.goto(componentUrl);
  await page.getByTestId("component-banner").getByRole("button", { name: "Deploy" }).click();
  await expect(page).toHaveURL(/\/jobs\/job_/);
  await expect(page.getByTestId("job-spec-version")).toHaveText("Spec version 1");
  await expect(page.getByTestId("job-result")).toHaveText("Succeeded", { timeout: 90_000 });
  await page.goto(componentUrl);
  await expect(page.getByTestId("component-status")).toHaveText("Active");

  // The engineer starts editing at version 1 while the admin, in another browser, saves version 2.
  await page.getByRole("button", { name: "Edit" }).click();
  await page.getByLabel("title").fill("Mine");
  const other = await browser.newContext();
  const admin = await other.newPage();
  await signIn(admin, s.email, s.password);
  await admin.goto(componentUrl);
  await admin.getByRole("button", { name: "Edit" }).click();
  await admin.getByLabel("title").fill("Theirs");
  await admin.getByRole("button", { name: "Save without deploying" }).click();
  await expect(admin.getByTestId("saved-notice")).toContainText("Saved version 2. It is not deployed");
  await other.close();

  await page.getByRole("button", { name: "Save and deploy" }).click();
  const conflict = page.getByTestId("edit-conflict");
  await expect(conflict).toBeVisible();
  await expect(conflict).toContainText("version 1");
  await expect(page.getByLabel("title")).toHaveValue("Mine");
  await screenshot(page, "component-edit-conflict");
  await conflict.getByRole("button", { name: "Reload" }).click();
  await expect(page.getByText("Reloaded: the component is at version 2.")).toBeVisible();
  await expect(page.getByLabel("title")).toHaveValue("Mine");
  await expect(page.getByText("Editing version 2: saving records version 3.")).toBeVisible();
  await page.getByRole("button", { name: "Save and deploy" }).click();
  await expect(page.getByTestId("saved-notice")).toContainText("Saved version 3. Its update job");

  await page.getByRole("tab", { name: /Versions/ }).click();
  await expect(page.getByTestId("version-title")).toHaveText("Version 3");
  await expect(page.locator('tr[data-field="spec.title"]')).toContainText("Theirs");
  await expect(page.locator('tr[data-field="spec.title"]')).toContainText("Mine");
  await page.getByRole("link", { name: /Version 2/ }).click();
  await expect(page.getByText(`by ${s.email}`).first()).toBeVisible();
  await expect(page.getByText("No job ran this version.")).toBeVisible();
  // Version 3's update job runs to its end.
  await page.getByRole("link", { name: /Version 3/ }).click();
  await page.getByRole("list", { name: "Jobs of version 3" }).getByRole("link").click();
  await expect(page.getByTestId("job-spec-version")).toHaveText("Spec version 3");
  await expect(page.getByTestId("job-result")).toHaveText("Succeeded", { timeout: 90_000 });
});

test("in prod the first deploy and the delete pause for approval; a cancelled destroy leaves the component marked Delete failed with a retry, which deletes it", async ({ page }) => {
  await signIn(page, ENGINEER.email, ENGINEER.password);
  await fillNewComponent(page, "prod", "prod-site", "prod", "Prod v1");
  await page.getByRole("button", { name: "Create and deploy" }).click();
  await expect(page).toHaveURL(/\/jobs\/job_/);
  await expect(page.getByTestId("job-status")).toHaveText("Awaiting approval", { timeout: 60_000 });
  await page.getByRole("button", { name: "Approve", exact: true }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Approve and apply" }).click();
  await expect(page.getByTestId("job-result")).toHaveText("Succeeded", { timeout: 90_000 });
  await page.getByRole("link", { name: "prod-site" }).first().click();

  // The delete dialog says prod's policy pauses the destroy for approval of its plan.
  await page.getByRole("button", { name: "Delete" }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog.getByTestId("delete-flow-control")).toContainText("Under the environment policy on prod, the destroy job pauses after its preview for approval of the plan");
  await dialog.getByLabel("Reason").fill("Retiring the prod site");
  await dialog.getByRole("button", { name: "Delete and destroy" }).click();
  await expect(page).toHaveURL(/\/jobs\/job_/);
  await expect(page.getByTestId("job-status")).toHaveText("Awaiting approval", { timeout: 60_000 });
  await expect(page.getByTestId("job-deletes-component")).toContainText("This job deletes the component prod-site");
  await screenshot(page, "component-destroy-paused");

  // Cancelled: the component stays, marked Delete failed with the reason, and offers a retry.
  await page.getByRole("button", { name: "Cancel job" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Cancel job" }).click();
  await expect(page.getByTestId("job-result")).toHaveText("Cancelled");
  await expect(page.getByTestId("job-deletes-component")).toContainText("did not succeed");
  await page.getByTestId("job-deletes-component").getByRole("link", { name: "prod-site" }).click();
  const banner = page.getByTestId("component-banner");
  await expect(banner).toContainText("Delete failed");
  await expect(page.getByTestId("component-status")).toHaveText("Delete failed");
  await screenshot(page, "component-delete-failed");
  expect(sitesOn("prod")).toHaveLength(1);

  await banner.getByRole("button", { name: "Retry delete" }).click();
  await expect(page.getByRole("dialog").getByRole("heading", { name: "Retry deleting prod-site" })).toBeVisible();
  await page.getByRole("dialog").getByRole("button", { name: "Run the destroy again" }).click();
  await expect(page).toHaveURL(/\/jobs\/job_/);
  await expect(page.getByTestId("job-status")).toHaveText("Awaiting approval", { timeout: 60_000 });
  await page.getByRole("button", { name: "Approve", exact: true }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Approve and apply" }).click();
  await expect(page.getByTestId("job-result")).toHaveText("Succeeded", { timeout: 90_000 });
  await expect(page.getByTestId("job-deletes-component")).toContainText("This job deleted the component prod-site");
  expect(sitesOn("prod")).toHaveLength(0);
});

test("an engineer finds Forget unavailable with the reason; an admin forgets a component by typing its name, and its resources keep running", async ({ page, browser }) => {
  const s = e2eState();
  await signIn(page, ENGINEER.email, ENGINEER.password);
  await page.goto(`${base()}/components`);
  await row(page, "draft-site").getByRole("link", { name: "draft-site" }).click();
  const forget = page.getByRole("button", { name: "Forget" });
  await expect(forget).toHaveAttribute("aria-disabled", "true");
  await forget.focus();
  await expect(page.getByRole("tooltip")).toHaveText("Forgetting a component needs the admin role. Ask an admin of the organization, or delete it instead (its resources are destroyed).");
  // Reached by keyboard, it opens nothing.
  await forget.press("Enter");
  await expect(page.getByRole("dialog")).toHaveCount(0);
  await screenshot(page, "component-forget-unavailable");

  const other = await browser.newContext();
  const admin = await other.newPage();
  await signIn(admin, s.email, s.password);
  await admin.goto(page.url());
  await admin.getByRole("button", { name: "Forget" }).click();
  const dialog = admin.getByRole("dialog");
  await expect(dialog.getByRole("list", { name: "Resources that keep running, unmanaged" })).toContainText("local_file.index");
  const confirm = dialog.getByRole("button", { name: "Forget draft-site" });
  await expect(confirm).toBeDisabled();
  await dialog.getByLabel("Type draft-site to confirm").fill("draft-sit");
  await expect(confirm).toBeDisabled();
  await dialog.getByLabel("Type draft-site to confirm").fill("draft-site");
  await screenshot(admin, "component-forget-dialog");
  await confirm.click();
  await expect(admin.getByTestId("component-status")).toHaveText("Forgotten");
  await expect(admin.getByTestId("component-banner")).toContainText(`Forgotten by ${s.email}`);
  expect(sitesOn("draft")).toHaveLength(1);
  await admin.goto(`${base()}/components?show=gone`);
  await expect(row(admin, "draft-site").getByTestId("component-status")).toHaveText("Forgotten");
  await expect(row(admin, "shop-site").getByTestId("component-status")).toHaveText("Deleted");
  await other.close();
});
