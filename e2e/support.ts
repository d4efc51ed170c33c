import fs from "node:fs";
import path from "node:path";
import { expect, type Locator, type Page } from "@playwright/test";
import { ESSENTIALS } from "../lib/preflight";
import { createTestGates } from "../test/gates";

export interface E2eState {
  baseURL: string;
  email: string;
  password: string;
  dbUrl: string;
  dataDir: string;
  /** Where the console's hosted runners look for test gates (PLANTON_TEST_GATES_DIR). */
  gatesDir: string;
  /** A folder the console may register modules from as file:// git repositories (PLANTON_MODULE_LOCAL_ROOTS). */
  moduleRootsDir: string;
}

export const e2eState = (): E2eState => JSON.parse(fs.readFileSync(path.join(process.cwd(), ".tmp", "e2e-state.json"), "utf8"));

/** The test gates the console's hosted runners honour. */
export const e2eGates = () => createTestGates(e2eState().gatesDir);

/**
 * The platform's static-site module, copied into the console's data folder as `name`, with a test gate
 * (named by the site) that its files wait on: it passes unless a test holds it. Returns the module's folder.
 */
export function gatedStaticSiteModule(dataDir: string, name: string): string {
  const dir = path.join(dataDir, "modules", name);
  fs.mkdirSync(dir, { recursive: true });
  for (const f of fs.readdirSync("catalog/modules/static-site")) fs.copyFileSync(path.join("catalog/modules/static-site", f), path.join(dir, f));
  const main = fs.readFileSync(path.join(dir, "main.tf"), "utf8");
  fs.writeFileSync(
    path.join(dir, "main.tf"),
    `resource "plantontest_gate" "settle" {\n  name = var.site_name\n}\n\n` + main.replace(/depends_on\s*=\s*\[local_directory\.site\]/, "depends_on      = [local_directory.site, plantontest_gate.settle]"),
  );
  return dir;
}

export async function signIn(page: Page, email: string, password: string) {
  await page.goto(`${e2eState().baseURL}/sign-in`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/o\/[^/]+\/components/);
}

/** Saves docs/screenshots/<name>.png; `mask` covers what must not be kept in a picture (a token shown once). */
export async function screenshot(page: Page, name: string, mask: Locator[] = []) {
  const dir = path.join(process.cwd(), "docs", "screenshots");
  fs.mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true, mask, maskColor: "#cbd5e1" });
}

/** The Run job dialog's preflight passed whole: every essential, and the connection's authorization for the environment. */
export async function expectPreflightPassed(dialog: Locator) {
  await expect(dialog.getByRole("list", { name: "Preflight checks" }).locator('[data-passed="true"]')).toHaveCount(ESSENTIALS.length + 1);
}
