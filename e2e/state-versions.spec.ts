// The State tab's versions: every write of a component's state is kept; an admin compares two and
// rolls back to one, which is written as a new version (the serial never moves back).
import { expect, test, type Page } from "@playwright/test";
import { eq } from "drizzle-orm";
import { openDatabase } from "../db/client";
import { organizations } from "../db/schema";
import { systemActor } from "../server/actor";
import { draftComponent } from "../test/components";
import { e2eState, screenshot, signIn } from "./support";

test.beforeAll(async () => {
  const h = await openDatabase({ url: e2eState().dbUrl, migrate: false });
  try {
    const [org] = await h.db.select().from(organizations).where(eq(organizations.slug, "acme"));
    await draftComponent(h.db, systemActor(org.id), { environment: "dev", kind: "StaticSite", name: "versions-site", spec: { site_name: "versions", title: "versions" }, connection: "local-sandbox" });
  } finally {
    await h.close();
  }
});

async function run(page: Page, operation: string) {
  await page.goto(`${e2eState().baseURL}/o/acme/components`);
  await page.getByRole("link", { name: "versions-site", exact: true }).click();
  await page.getByRole("button", { name: "Run job" }).first().click();
  const dialog = page.getByRole("dialog");
  await dialog.locator(`input[name="operation"][value="${operation.toLowerCase()}"]`).check();
  await dialog.getByRole("button", { name: new RegExp(`^Run ${operation.toLowerCase()}`) }).click();
  await expect(page).toHaveURL(/\/o\/acme\/jobs\/job_/);
  await expect(page.getByTestId("job-result")).toHaveText("Succeeded", { timeout: 60_000 });
}

test("an admin compares two state versions and rolls back to the older one, written as a new version", async ({ page }) => {
  const s = e2eState();
  await signIn(page, s.email, s.password);
  await run(page, "Update");
  await run(page, "Destroy");
  await page.goto(`${s.baseURL}/o/acme/components`);
  await page.getByRole("link", { name: "versions-site", exact: true }).click();
  await page.getByRole("tab", { name: "State" }).click();
  const rows = page.getByTestId("state-version");
  await expect(rows.first()).toBeVisible();
  const count = await rows.count();
  expect(count).toBeGreaterThanOrEqual(2);
  const serials = (await rows.locator("td:nth-child(2)").allInnerTexts()).map((t) => Number.parseInt(t, 10));
  // The fullest state (the update's last write) against the destroyed one: every resource removed.
  const sizes = (await rows.locator("td:nth-child(5)").allInnerTexts()).map((t) => Number.parseFloat(t) * (t.includes("KiB") ? 1024 : t.includes("MiB") ? 1024 * 1024 : 1));
  const newest = serials[0];
  const older = serials[sizes.indexOf(Math.max(...sizes))];
  await page.getByLabel(`Compare serial ${newest}`).check();
  await page.getByLabel(`Compare serial ${older}`).check();
  await expect(page.getByTestId("state-diff")).toContainText(/removed/i);
  await screenshot(page, "state-versions");
  await rows.nth(serials.indexOf(older)).getByRole("button", { name: "Roll back to this version" }).click();
  await page.getByRole("dialog").getByRole("button", { name: /Roll back/ }).click();
  await expect(rows.first()).toContainText(String(newest + 1));
  await expect(rows.first()).toContainText("current");
  await expect(rows.first()).toContainText("rollback by");
});
