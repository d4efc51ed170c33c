// Delete protection in the console: prod's policy pauses before apply and protects deletes. An
// engineer edits a component's spec so its update would delete a page and replace the home page,
// reviews the plan in the Approve dialog (both marked "(not executed)"), approves, and the files stay.
import fs from "node:fs";
import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { eq } from "drizzle-orm";
import { openDatabase } from "../db/client";
import { iacModules, infraComponents, organizations } from "../db/schema";
import { newId } from "../lib/ids";
import { systemActor } from "../server/actor";
import { draftComponent } from "../test/components";
import { addMember } from "./db";
import { e2eState, expectPreflightPassed, signIn } from "./support";

test.describe.configure({ mode: "serial", timeout: 240_000 });

const ENGINEER = { email: "engineer@protect.example", password: "engineer-password-2" };

// Pages by count, and a home page named by the title: fewer pages delete one, a new title replaces
// the home page and rewrites the pages that stay.
const MODULE = `
variable "site_name" {
  type = string
}
variable "title" {
  type    = string
  default = "home"
}
variable "page_count" {
  type    = number
  default = 2
}
resource "local_file" "page" {
  count    = var.page_count
  filename = "guarded/\${var.site_name}/page-\${count.index}.txt"
  content  = "page \${count.index} of \${var.title}"
}
resource "local_file" "home" {
  filename = "guarded/\${var.site_name}/\${var.title}.html"
  content  = "home"
}
`;

const siteFile = (name: string) => path.join(e2eState().dataDir, "local-infra", "acme", "guarded", "vault", name);

test.beforeAll(async () => {
  const s = e2eState();
  const dir = path.join(s.dataDir, "modules", "static-site-guarded");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "main.tf"), MODULE);
  const h = await openDatabase({ url: s.dbUrl, migrate: false });
  try {
    const [org] = await h.db.select().from(organizations).where(eq(organizations.slug, "acme"));
    const moduleId = newId("iacModule");
    await h.db.insert(iacModules).values({ id: moduleId, orgId: org.id, scopeKey: org.id, kind: "StaticSite", name: "static-site-guarded", provisioner: "builtin", version: "1.0.2", source: dir });
    const c = await draftComponent(h.db, systemActor(org.id), { environment: "prod", kind: "StaticSite", name: "vault-site", spec: { site_name: "vault", title: "home", page_count: 2 }, connection: "local-sandbox" });
    await h.db.update(infraComponents).set({ customModuleId: moduleId }).where(eq(infraComponents.id, c.id));
  } finally {
    await h.close();
  }
  await addMember("acme", "engineer", ENGINEER.email, ENGINEER.password);
});

async function openComponent(page: Page) {
  await page.goto(`${e2eState().baseURL}/o/acme/components`);
  await page.getByRole("link", { name: "vault-site", exact: true }).click();
  await expect(page.getByRole("heading", { name: /vault-site/ })).toBeVisible();
}

async function runUpdate(page: Page, message: string) {
  await page.getByRole("button", { name: "Run job" }).first().click();
  const dialog = page.getByRole("dialog");
  await dialog.getByRole("radio", { name: /^Update/ }).check();
  await dialog.getByLabel("Version message").fill(message);
  await expectPreflightPassed(dialog);
  await dialog.getByRole("button", { name: /^Run update/ }).click();
  await expect(page).toHaveURL(/\/o\/acme\/jobs\/job_/);
  await expect(page.getByTestId("job-status")).toHaveText("Awaiting approval", { timeout: 60_000 });
}

test("an engineer approves a protected update from the job page, sees its delete and replace as (not executed) first; the rest applies and those files stay on disk", async ({ page }) => {
  await signIn(page, ENGINEER.email, ENGINEER.password);
  await openComponent(page);
  await runUpdate(page, "First publish");
  await page.getByRole("button", { name: "Approve", exact: true }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Approve and apply" }).click();
  await expect(page.getByTestId("job-result")).toHaveText("Succeeded", { timeout: 60_000 });
  for (const f of ["page-0.txt", "page-1.txt", "home.html"]) expect(fs.existsSync(siteFile(f))).toBe(true);

  // One page fewer and a new title: the update would delete page 1, replace the home page and rewrite page 0.
  await openComponent(page);
  await page.getByRole("button", { name: "Edit spec" }).click();
  await page.getByLabel("page_count").fill("1");
  await page.getByLabel("title").fill("start");
  await page.getByRole("button", { name: "Save spec" }).click();
  await expect(page.getByText("Spec saved. Run an update job to apply it.")).toBeVisible();
  await runUpdate(page, "Fewer pages, new home");

  await page.locator('li[data-step="preview"] > button').click();
  const changes = page.getByRole("region", { name: "Resource changes" });
  await expect(changes.locator('tr[data-address="local_file.page[1]"]')).toContainText("Plan to delete (not executed)");
  await expect(changes.locator('tr[data-address="local_file.home"]')).toContainText("Plan to replace (not executed)");
  await expect(page.locator('li[data-step="preview"]')).toContainText("builtin plan: 0 to add, 1 to change, 0 to destroy, 2 protected (not executed)");

  await page.getByRole("button", { name: "Approve", exact: true }).click();
  const dialog = page.getByRole("dialog");
  const resources = dialog.getByRole("list", { name: "Resources to change" });
  await expect(resources.locator('li[data-executes="false"]')).toHaveCount(2);
  await expect(resources.locator("li", { hasText: "local_file.page[1]" })).toContainText("(not executed)");
  await expect(resources.locator("li", { hasText: "local_file.home" })).toContainText("(not executed)");
  await expect(resources.locator("li", { hasText: "local_file.home" })).toContainText("local_file.home is not replaced: delete protection is on for this component");
  await expect(resources.locator("li", { hasText: "local_file.page[0]" })).not.toContainText("(not executed)");
  await expect(dialog.getByLabel("Plan counts")).toContainText("1 to update");
  await expect(dialog.getByLabel("Plan counts")).toContainText("1 to delete (not executed)");
  await expect(dialog.getByLabel("Plan counts")).toContainText("1 to replace (not executed)");
  await expect(dialog.getByTestId("not-executed-note")).toHaveText(/^2 changes are shown but will not run: delete protection is on for this component/);
  await dialog.screenshot({ path: path.join(process.cwd(), "docs", "screenshots", "approve-protected.png") });
  await dialog.getByRole("button", { name: "Approve and apply" }).click();

  await expect(page.getByTestId("job-result")).toHaveText("Succeeded", { timeout: 60_000 });
  await page.locator('li[data-step="apply"] > button').click();
  await expect(page.locator('li[data-step="apply"]')).toContainText("builtin apply: 0 added, 1 changed, 0 destroyed, 2 protected (not executed)");
  for (const f of ["page-0.txt", "page-1.txt", "home.html"]) expect(fs.existsSync(siteFile(f))).toBe(true);
  expect(fs.existsSync(siteFile("start.html"))).toBe(false);
  expect(fs.readFileSync(siteFile("page-0.txt"), "utf8")).toBe("page 0 of start");
});
