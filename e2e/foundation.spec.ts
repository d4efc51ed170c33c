import { expect, test } from "@playwright/test";
import { e2eState, screenshot, signIn } from "./support";
import { addMember } from "./db";

test("a new admin signs in with the printed credentials and finds the demo organization", async ({ page }) => {
  const s = e2eState();
  await signIn(page, s.email, s.password);
  await expect(page.getByRole("heading", { name: "Infra Components" })).toBeVisible();
  for (const name of ["docs-site", "marketing-site", "orders-db"]) await expect(page.getByRole("link", { name })).toBeVisible();
  await expect(page.getByLabel("Organization")).toHaveValue("acme");
  await screenshot(page, "components-list");
});

test("a wrong password is refused with a message that says what to check", async ({ page }) => {
  const s = e2eState();
  await page.goto(`${s.baseURL}/sign-in`);
  await page.getByLabel("Email").fill(s.email);
  await page.getByLabel("Password").fill("not-the-password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "That email and password do not match an account. Check both and try again." })).toBeVisible();
});

test("an admin creates a component, lands on its first update job, sees it listed and opens its detail page; a duplicate name is refused beside the field", async ({ page }) => {
  const s = e2eState();
  await signIn(page, s.email, s.password);
  await page.getByRole("link", { name: "New component" }).click();
  await page.getByRole("radio", { name: /Static site/ }).click();
  await page.getByLabel("Environment").selectOption("dev");
  await page.getByLabel("Name", { exact: true }).fill("e2e-site");
  await page.getByLabel("site_name *").fill("e2e");
  await page.getByLabel("title").fill("Made by the browser test");
  await screenshot(page, "component-create");
  await page.getByRole("button", { name: "Create and deploy" }).click();

  // Creating it queued its first update job; the console shows that job.
  await expect(page).toHaveURL(/\/o\/acme\/jobs\/job_/);
  await expect(page.getByRole("heading", { name: /Update e2e-site/ })).toBeVisible();
  await expect(page.getByTestId("job-spec-version")).toHaveText("Spec version 1");
  await expect(page.getByTestId("job-result")).toHaveText("Succeeded", { timeout: 90_000 });
  await page.getByRole("link", { name: "e2e-site" }).first().click();

  await expect(page).toHaveURL(/\/o\/acme\/components\/cmp_/);
  await expect(page.getByRole("heading", { name: /e2e-site/ })).toBeVisible();
  await page.getByRole("tab", { name: "Configuration" }).click();
  await expect(page.getByText('"Made by the browser test"')).toBeVisible();
  await expect(page.getByText("local-sandbox")).toBeVisible();
  await expect(page.getByText("From the environment policy", { exact: false }).or(page.getByText("From the platform policy", { exact: false }))).toBeVisible();
  await screenshot(page, "component-detail");

  await page.getByRole("link", { name: "Infra Components" }).first().click();
  await expect(page.getByRole("link", { name: "e2e-site" })).toBeVisible();
  await page.getByLabel("Environment").selectOption("prod");
  await expect(page.getByRole("link", { name: "e2e-site" })).toHaveCount(0);
  await expect(page.getByRole("link", { name: "marketing-site" })).toBeVisible();

  await page.goto(`${s.baseURL}/o/acme/components/new`);
  await page.getByRole("radio", { name: /Static site/ }).click();
  await page.getByLabel("Environment").selectOption("dev");
  await page.getByLabel("Name", { exact: true }).fill("e2e-site");
  await page.getByLabel("site_name *").fill("e2e");
  await page.getByRole("button", { name: "Create and deploy" }).click();
  const nameField = page.getByLabel("Name", { exact: true });
  await expect(nameField).toHaveAttribute("aria-invalid", "true");
  await expect(page.locator("#" + (await nameField.getAttribute("id")) + "-error")).toHaveText("A component named e2e-site already exists in dev. Choose another name, or open the existing one.");
});

test("a viewer sees no create button and is refused on the create page", async ({ page }) => {
  const s = e2eState();
  await addMember("acme", "viewer", "viewer@acme.example", "viewer-password-1");
  await signIn(page, "viewer@acme.example", "viewer-password-1");
  await expect(page.getByRole("link", { name: "docs-site" })).toBeVisible();
  await expect(page.getByRole("link", { name: "New component" })).toHaveCount(0);
  await page.goto(`${s.baseURL}/o/acme/components/new`);
  await expect(page.getByText("You cannot create components")).toBeVisible();
  await expect(page.getByText("Creating components needs the engineer role; you are a viewer in acme.")).toBeVisible();
  await page.goto(`${s.baseURL}/o/acme/components`);
  await page.getByRole("link", { name: "docs-site" }).click();
  for (const name of ["Edit", "Delete", "Forget", "Run job"]) await expect(page.getByRole("button", { name, exact: true })).toHaveCount(0);
});
