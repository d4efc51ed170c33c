import { expect, test, type Page } from "@playwright/test";
import { e2eState, screenshot, signIn } from "./support";

const PAGES = [
  { path: "environments", heading: "Environments", tables: ["Environments"] },
  { path: "connections", heading: "Connections", tables: ["Connections"] },
  { path: "runners", heading: "Runners", tables: ["Runners"] },
  { path: "secrets", heading: "Secrets and Variables", tables: [] },
  { path: "flow-control", heading: "Flow Control", tables: ["Flow-control policies"] },
  { path: "members", heading: "Members and roles", tables: ["Members"] },
  { path: "api-tokens", heading: "API tokens", tables: ["Your tokens", "Every token in the organization"] },
];

/** Neither the page nor any table scrolls sideways: every column fits the window. */
async function expectNoSidewaysScroll(page: Page) {
  const overflowing = await page.evaluate(() =>
    [document.documentElement, ...Array.from(document.querySelectorAll("table")).map((t) => t.parentElement!)]
      .filter((el) => el.scrollWidth > el.clientWidth + 1)
      .map((el) => `${el.querySelector("table")?.getAttribute("aria-label") ?? "the page"}: ${el.scrollWidth}px in ${el.clientWidth}px`),
  );
  expect(overflowing).toEqual([]);
}

test("every settings page shows its tables whole at 1360 px, long connection settings included", async ({ page }) => {
  const s = e2eState();
  await signIn(page, s.email, s.password);

  // A connection with a long description and a deep folder: its cells wrap or truncate.
  await page.goto(`${s.baseURL}/o/acme/settings/connections`);
  await page.getByRole("button", { name: "New connection" }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByLabel("Name", { exact: true }).fill("e2e-long-paths");
  await dialog.getByLabel("Provider").selectOption("local");
  await dialog.getByLabel("Description").fill("The shared build farm's scratch disk, mounted on every self-hosted runner in the second data centre");
  await dialog.getByLabel("root").fill(`/srv/planton/${"deeply-nested-folder/".repeat(8)}infra`);
  await dialog.getByRole("button", { name: "Create connection" }).click();
  await expect(dialog.getByRole("heading", { name: "Who may use e2e-long-paths?" })).toBeVisible();
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await expect(page.getByRole("table", { name: "Connections" }).getByRole("row").filter({ hasText: "e2e-long-paths" })).toBeVisible();

  // A token, so both token tables have a row.
  await page.goto(`${s.baseURL}/o/acme/settings/api-tokens`);
  await page.getByRole("button", { name: "New token" }).click();
  await dialog.getByLabel("Name", { exact: true }).fill("e2e-laptop");
  await dialog.getByRole("button", { name: "Create token" }).click();
  await expect(dialog.getByRole("heading", { name: "Token e2e-laptop created" })).toBeVisible();
  await dialog.getByRole("button", { name: "I have copied it" }).click();
  await expect(dialog).toBeHidden();

  for (const p of PAGES) {
    await page.goto(`${s.baseURL}/o/acme/settings/${p.path}`);
    await expect(page.getByRole("heading", { name: p.heading, exact: true })).toBeVisible();
    for (const name of p.tables) await expect(page.getByRole("table", { name }).getByRole("row").nth(1)).toBeVisible();
    await expect(page.getByRole("status").filter({ hasText: /^Loading/ })).toHaveCount(0);
    await expectNoSidewaysScroll(page);
    await screenshot(page, `settings-${p.path}`);
  }

  await page.goto(`${s.baseURL}/o/acme/settings/connections`);
  await page.getByRole("button", { name: "Delete e2e-long-paths" }).click();
  await dialog.getByRole("button", { name: "Delete connection" }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByText("Deleted connection e2e-long-paths")).toBeVisible();
  await expect(page.getByRole("row").filter({ hasText: "e2e-long-paths" })).toHaveCount(0);

  await page.goto(`${s.baseURL}/o/acme/settings/api-tokens`);
  await page.getByRole("button", { name: "Revoke e2e-laptop", exact: true }).click();
  await expect(dialog.getByRole("heading", { name: "Revoke e2e-laptop?" })).toBeVisible();
  await dialog.getByRole("button", { name: "Revoke token" }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByText("Revoked e2e-laptop")).toBeVisible();
  await expect(page.getByRole("row").filter({ hasText: "e2e-laptop" })).toHaveCount(0);
});

test("a delete asks first, naming the target, from the keyboard; a refusal stays in the dialog until it is closed", async ({ page }) => {
  const s = e2eState();
  await signIn(page, s.email, s.password);
  await page.goto(`${s.baseURL}/o/acme/settings/environments`);
  const dialog = page.getByRole("dialog");

  // dev still has components: the server refuses, and says so inside the dialog.
  await page.getByRole("button", { name: "Delete dev" }).click();
  await expect(dialog.getByRole("heading", { name: "Delete dev?" })).toBeVisible();
  await expect(dialog.getByRole("button", { name: "Cancel" })).toBeFocused();
  await page.keyboard.press("Tab");
  await expect(dialog.getByRole("button", { name: "Delete environment" })).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(dialog.getByRole("alert")).toHaveText(/^Environment dev was not deleted: \d+ Infra Components? still belong to it\. Destroy or move them first\.$/);
  await screenshot(page, "settings-delete-refused");
  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();
  await page.getByRole("button", { name: "Delete dev" }).click();
  await expect(dialog.getByRole("alert")).toHaveCount(0);
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await expect(dialog).toBeHidden();

  // A new environment is deleted from the keyboard alone.
  await page.getByRole("button", { name: "New environment" }).click();
  await dialog.getByLabel("Name", { exact: true }).fill("e2e-scratch");
  await dialog.getByRole("button", { name: "Create environment" }).click();
  await expect(dialog).toBeHidden();
  await page.getByRole("button", { name: "Delete e2e-scratch" }).focus();
  await page.keyboard.press("Enter");
  await expect(dialog.getByRole("heading", { name: "Delete e2e-scratch?" })).toBeVisible();
  await page.keyboard.press("Tab");
  await page.keyboard.press("Enter");
  await expect(dialog).toBeHidden();
  await expect(page.getByText("Deleted environment e2e-scratch")).toBeVisible();
  await expect(page.getByRole("table", { name: "Environments" }).getByRole("row").filter({ hasText: "e2e-scratch" })).toHaveCount(0);
});
