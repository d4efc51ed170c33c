// The API reference page: every route of /api/v1 from the served OpenAPI document, readable in the
// console's own layout, with links from each answer to its schema.
import { expect, test } from "@playwright/test";
import { e2eState, screenshot, signIn } from "./support";

test("the API reference lists every route of the OpenAPI document, and an answer links to its schema", async ({ page }) => {
  const s = e2eState();
  await signIn(page, s.email, s.password);
  const doc = (await (await page.request.get(`${s.baseURL}/api/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
  await page.goto(`${s.baseURL}/o/acme/api`);
  await expect(page.getByRole("heading", { name: "API reference" })).toBeVisible();
  for (const [route, ops] of Object.entries(doc.paths)) {
    for (const method of Object.keys(ops)) {
      await expect(page.getByText(`/api/v1${route}`, { exact: true }).first(), `${method} ${route}`).toBeVisible();
    }
  }
  await screenshot(page, "api-reference");
  // The job's answer is a schema further down the page.
  const card = page.locator("section", { hasText: "Infra Jobs" }).locator("div", { has: page.getByText("/api/v1/jobs/{id}", { exact: true }) }).first();
  await card.getByRole("link", { name: "InfraJob", exact: true }).first().click();
  await expect(page).toHaveURL(/#schema-InfraJob$/);
  await expect(page.locator("#schema-InfraJob")).toBeVisible();
  await expect(page.getByRole("table", { name: "Fields of InfraJob", exact: true }).getByText("actions", { exact: true })).toBeVisible();
});
