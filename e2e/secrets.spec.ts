import { expect, test } from "@playwright/test";
import { e2eState, screenshot, signIn } from "./support";

test("an admin scopes a secret to chosen environments; the list shows who may use it, and an empty choice is refused beside the picker", async ({ page }) => {
  const s = e2eState();
  await signIn(page, s.email, s.password);
  await page.goto(`${s.baseURL}/o/acme/settings/secrets`);
  await expect(page.getByRole("heading", { name: "Secrets and Variables" })).toBeVisible();

  await page.getByRole("button", { name: "New secret" }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByLabel("Name", { exact: true }).fill("E2E_STAGING_TOKEN");
  await dialog.getByLabel("Value").fill("e2e-staging-token-value");
  await dialog.getByRole("radio", { name: /Chosen environments/ }).check();
  await dialog.getByRole("button", { name: "Save secret" }).click();
  await expect(dialog.getByRole("alert")).toHaveText("Pick at least one environment whose jobs may use the secret E2E_STAGING_TOKEN, or make it the organization's. Nothing was saved.");

  await dialog.getByRole("checkbox", { name: "staging" }).check();
  await dialog.getByRole("button", { name: "Save secret" }).click();
  await expect(dialog).toBeHidden();
  const row = page.getByRole("table", { name: "Secrets" }).getByRole("row").filter({ hasText: "E2E_STAGING_TOKEN" });
  await expect(row).toContainText("staging");
  await expect(row).not.toContainText("e2e-staging-token-value");

  // Widened to the organization from the same dialog.
  await row.getByRole("button", { name: "Replace E2E_STAGING_TOKEN" }).click();
  await expect(dialog.getByRole("checkbox", { name: "staging" })).toBeChecked();
  await dialog.getByRole("radio", { name: /The whole organization/ }).check();
  await dialog.getByRole("button", { name: "Save" }).click();
  await expect(dialog).toBeHidden();
  await expect(row).toContainText("whole organization");
});

test("an admin authorizes a connection for chosen environments with the same scope picker, and the list says so", async ({ page }) => {
  const s = e2eState();
  await signIn(page, s.email, s.password);
  await page.goto(`${s.baseURL}/o/acme/settings/connections`);
  await page.getByRole("button", { name: "Authorize local-sandbox" }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog.getByRole("radiogroup", { name: "Who may use local-sandbox" })).toBeVisible();
  await dialog.getByRole("radio", { name: /Chosen environments/ }).check();
  await dialog.getByRole("checkbox", { name: "dev" }).check();
  await dialog.getByRole("checkbox", { name: "staging" }).check();
  await screenshot(page, "connection-scope");
  await dialog.getByRole("button", { name: "Save authorization" }).click();
  await expect(dialog).toBeHidden();
  const row = page.getByRole("row").filter({ hasText: "local-sandbox" });
  await expect(row).toContainText("dev");
  await expect(row).toContainText("staging");
  await expect(row).not.toContainText("prod");

  // Back to the whole organization, so the other suites' jobs in prod keep their connection.
  await page.getByRole("button", { name: "Authorize local-sandbox" }).click();
  await dialog.getByRole("radio", { name: /The whole organization/ }).check();
  await dialog.getByRole("button", { name: "Save authorization" }).click();
  await expect(dialog).toBeHidden();
  await expect(row).toContainText("whole organization");
});
